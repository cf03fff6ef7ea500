import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Context, Hono } from 'hono';
import { applyResponsePolicy } from '../middleware/response-policy/index.js';
import { type OpenApiOptions, openApiDocument } from '../openapi/document.js';

/**
 * The API description and its reference page, for client developers:
 *
 * - `GET {basePath}/openapi.json`: the OpenAPI 3.1 document (openapi/document.ts).
 * - `GET {basePath}/docs`: Swagger UI (swagger-ui-dist, served from the
 *   gateway itself, never a CDN: the gateway often runs where browsers reach
 *   only it), with its Authorize dialog logging in through the password flow.
 *
 * Under the base path, unlike /healthz: developers reach the gateway through
 * the same proxy prefix as the API, process managers reach /healthz directly.
 * The page's Content-Security-Policy allows its own scripts and styles (Swagger
 * UI sets inline styles) and requests to this origin only; every other
 * response keeps `default-src 'none'`.
 */

const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const require = createRequire(import.meta.url);

/** A file of swagger-ui-dist, read once on first use. */
function distFile(name: string): () => Buffer {
  let content: Buffer | undefined;
  return () => {
    content ??= readFileSync(require.resolve(`swagger-ui-dist/${name}`));
    return content;
  };
}

/** swagger-ui-dist's version, for the asset URLs; read when the page is first asked for, so a missing package fails /docs only. */
let swaggerUiVersion: string | undefined;
function swaggerUiVersionOf(): string {
  swaggerUiVersion ??= (require('swagger-ui-dist/package.json') as { version: string }).version;
  return swaggerUiVersion;
}

const ASSETS: Readonly<Record<string, { type: string; read: () => Buffer }>> = {
  'swagger-ui.css': { type: 'text/css; charset=utf-8', read: distFile('swagger-ui.css') },
  'swagger-ui-bundle.js': { type: 'text/javascript; charset=utf-8', read: distFile('swagger-ui-bundle.js') },
};

function reply(c: Context, body: string | Buffer, type: string, cache: string, csp?: string): Response {
  const h: Record<string, string> = { 'Content-Type': type, 'Cache-Control': cache };
  applyResponsePolicy(c, h);
  if (csp !== undefined) h['Content-Security-Policy'] = csp;
  return new Response(c.req.method === 'HEAD' ? null : body, { status: 200, headers: h });
}

function page(base: string): string {
  const v = encodeURIComponent(swaggerUiVersionOf());
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>paia-sip2 API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${base}/docs/swagger-ui.css?v=${v}">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${base}/docs/swagger-ui-bundle.js?v=${v}"></script>
<script src="${base}/docs/init.js?v=${v}"></script>
</body>
</html>
`;
}

function initScript(base: string): string {
  const config = {
    url: `${base}/openapi.json`,
    dom_id: '#swagger-ui',
    tryItOutEnabled: true,
    deepLinking: false,
    validatorUrl: null,
  };
  return `window.ui = SwaggerUIBundle(Object.assign(${JSON.stringify(config)}, { presets: [SwaggerUIBundle.presets.apis], layout: 'BaseLayout' }));\n`;
}

/** Mounts {basePath}/openapi.json and {basePath}/docs with its assets. */
export function mountDocs(app: Hono, options: OpenApiOptions): void {
  const base = options.basePath;
  const document = JSON.stringify(openApiDocument(options));
  const init = initScript(base);
  // The document changes only with a new version or new settings: a short cache, revalidated on restart.
  app.get(`${base}/openapi.json`, (c) => reply(c, document, 'application/json; charset=utf-8', 'no-cache'));
  app.get(`${base}/docs`, (c) => reply(c, page(base), 'text/html; charset=utf-8', 'no-cache', DOCS_CSP));
  app.get(`${base}/docs/init.js`, (c) => reply(c, init, 'text/javascript; charset=utf-8', 'no-cache'));
  for (const [name, asset] of Object.entries(ASSETS)) {
    // Versioned URLs (?v=): cached for a year, a new swagger-ui-dist gets new URLs.
    app.get(`${base}/docs/${name}`, (c) => reply(c, asset.read(), asset.type, 'public, max-age=31536000, immutable'));
  }
}
