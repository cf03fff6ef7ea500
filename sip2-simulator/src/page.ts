import { readFileSync } from 'node:fs';
import type { Hono } from 'hono';
import { packagePath } from '../../src/package-root.js';

/**
 * The traffic page of the control endpoint: plain HTML, a style sheet and a
 * script, files of sip2-simulator/page/ (shipped with the package and the
 * image), served from the endpoint's own origin under a CSP that allows
 * nothing else: no inline script or style, no other host, no frames. The
 * script polls GET /traffic and calls the endpoint's own routes for the
 * switches.
 */

export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const FILES: Readonly<Record<string, { file: string; type: string }>> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/page.js': { file: 'page.js', type: 'text/javascript; charset=utf-8' },
  '/page.css': { file: 'page.css', type: 'text/css; charset=utf-8' },
};

/** Adds the page's routes; each file is read at its first request and kept. */
export function servePage(app: Hono): void {
  // Browsers ask for it unbidden; the page has none.
  app.get('/favicon.ico', (c) => c.body(null, 204));
  const cache = new Map<string, string>();
  for (const [path, { file, type }] of Object.entries(FILES)) {
    app.get(path, (c) => {
      let body = cache.get(file);
      if (body === undefined) {
        body = readFileSync(packagePath('sip2-simulator', 'page', file), 'utf8');
        cache.set(file, body);
      }
      return c.body(body, 200, {
        'content-type': type,
        'content-security-policy': PAGE_CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-store',
      });
    });
  }
}
