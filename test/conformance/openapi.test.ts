/**
 * The OpenAPI description (/openapi.json) and the reference page (/docs):
 * the document is valid OpenAPI 3.1, names every PAIA method with the scope
 * the routes check, and is what the gateway serves. Every reply the rest of
 * the conformance suite receives is checked against it in Client.call
 * (support.ts, openapi-check.ts); the checker's own failures are tested here.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METHOD_SCOPE, type PaiaMethod, SCOPES } from '../../src/auth/scopes.js';
import { openApiDocument } from '../../src/http/openapi/document.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { OpenApiChecker } from './openapi-check.js';

type Json = Record<string, unknown>;

const PATHS: Readonly<Record<PaiaMethod, [verb: string, path: string]>> = {
  patron: ['get', '/core/{patron}'],
  items: ['get', '/core/{patron}/items'],
  renew: ['post', '/core/{patron}/renew'],
  request: ['post', '/core/{patron}/request'],
  cancel: ['post', '/core/{patron}/cancel'],
  fees: ['get', '/core/{patron}/fees'],
  login: ['post', '/auth/login'],
  logout: ['post', '/auth/logout'],
  change: ['post', '/auth/change'],
};

function operation(document: Json, path: string, verb: string): Json | undefined {
  return ((document.paths as Record<string, Json>)[path]?.[verb] as Json | undefined) ?? undefined;
}

describe('the OpenAPI document', () => {
  for (const options of [
    { basePath: '', maxDocs: 50, daia: true },
    { basePath: '/paia', maxDocs: 7, daia: false },
  ]) {
    it(`validates as OpenAPI 3.1 (base path "${options.basePath}", DAIA ${options.daia ? 'on' : 'off'})`, async () => {
      const validator = new Validator();
      const result = await validator.validate(openApiDocument(options));
      expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
      expect(result.valid).toBe(true);
      expect(validator.version).toBe('3.1');
    });
  }

  it('describes every PAIA method under the base path, secured with the scope its route checks', () => {
    const document = openApiDocument({ basePath: '/paia', maxDocs: 50, daia: true });
    for (const [method, [verb, path]] of Object.entries(PATHS) as Array<[PaiaMethod, [string, string]]>) {
      const op = operation(document, `/paia${path}`, verb);
      expect(op, `${verb} /paia${path}`).toBeDefined();
      const scope = METHOD_SCOPE[method];
      const security = op?.security as Array<Record<string, string[]>>;
      if (method === 'login') expect(security).toEqual([]);
      else expect(security).toEqual([{ paia: scope === null ? [] : [scope] }]);
    }
    expect(operation(document, '/paia/daia', 'get')).toBeDefined();
    const flow = (document.components as Json).securitySchemes as Json;
    const password = ((flow.paia as Json).flows as Json).password as { tokenUrl: string; scopes: Json };
    expect(password.tokenUrl).toBe('/paia/auth/login');
    expect(Object.keys(password.scopes).sort()).toEqual([...SCOPES].sort());
  });

  it('leaves DAIA out when the gateway does not serve it, and caps doc lists at maxDocs', () => {
    const document = openApiDocument({ basePath: '', maxDocs: 7, daia: false });
    expect(Object.keys(document.paths as Json).filter((p) => p.includes('daia'))).toEqual([]);
    const request = ((document.components as Json).schemas as Record<string, Json>).DocumentRequest as {
      properties: { doc: { maxItems: number } };
    };
    expect(request.properties.doc.maxItems).toBe(7);
  });
});

describe('the response checker', () => {
  const checker = new OpenApiChecker(openApiDocument({ basePath: '', maxDocs: 50, daia: true }));
  const url = (path: string) => new URL(path, 'http://127.0.0.1');
  const json = 'application/json; charset=utf-8';

  it('accepts a patron record and a core error with code', () => {
    expect(
      checker.problems({
        method: 'GET',
        url: url('/core/alice'),
        status: 200,
        contentType: json,
        json: { name: 'Alice', status: 0 },
      }),
    ).toEqual([]);
    expect(
      checker.problems({
        method: 'GET',
        url: url('/core/alice'),
        status: 401,
        contentType: json,
        json: { error: 'invalid_grant', code: 401, error_description: 'no token' },
      }),
    ).toEqual([]);
  });

  it('flags a body that misses a required field, an undeclared status, and auth errors with code', () => {
    expect(
      checker.problems({ method: 'GET', url: url('/core/alice'), status: 200, contentType: json, json: { status: 0 } }),
    ).not.toEqual([]);
    expect(
      checker.problems({
        method: 'GET',
        url: url('/core/alice'),
        status: 418,
        contentType: json,
        json: { error: 'invalid_request', code: 418, error_description: 'x' },
      }),
    ).toEqual(['GET /core/{patron}: status 418 is not among the declared responses']);
    expect(
      checker.problems({
        method: 'POST',
        url: url('/auth/login'),
        status: 403,
        contentType: json,
        json: { error: 'access_denied', code: 403, error_description: 'x' },
      }),
    ).not.toEqual([]);
  });

  it('flags a success answer at an undocumented path or method, and accepts errors there', () => {
    expect(
      checker.problems({ method: 'GET', url: url('/nowhere'), status: 200, contentType: json, json: {} }),
    ).not.toEqual([]);
    expect(
      checker.problems({
        method: 'PUT',
        url: url('/core/alice'),
        status: 405,
        contentType: json,
        json: { error: 'invalid_request', code: 405, error_description: 'use GET' },
      }),
    ).toEqual([]);
  });
});

describe('/openapi.json and /docs served by the gateway (base path /paia)', () => {
  let gateway: GatewayProcess;
  beforeAll(async () => {
    gateway = await startGatewayProcess({
      sip2Port: null,
      dialect: 'generic',
      env: { PAIA_HTTP_BASE_PATH: '/paia', PAIA_PAIA_MAX_DOCS: '9' },
    });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('serves the document built from its settings, as JSON anyone may read', async () => {
    const response = await fetch(`${gateway.url}/paia/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    const served = (await response.json()) as Json;
    expect(served).toEqual(openApiDocument({ basePath: '/paia', maxDocs: 9, daia: true }));
  });

  it('serves the reference page with a policy that allows its own scripts only, and the Swagger UI files', async () => {
    const page = await fetch(`${gateway.url}/paia/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).toContain("connect-src 'self'");
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '');
    expect(assets.map((a) => a.replace(/\?.*/, ''))).toEqual([
      '/paia/docs/swagger-ui.css',
      '/paia/docs/swagger-ui-bundle.js',
      '/paia/docs/init.js',
    ]);
    for (const asset of assets) {
      const response = await fetch(`${gateway.url}${asset}`);
      expect(response.status, asset).toBe(200);
      expect(response.headers.get('content-type'), asset).toMatch(
        asset.includes('.css') ? /^text\/css/ : /^text\/javascript/,
      );
      expect((await response.arrayBuffer()).byteLength, asset).toBeGreaterThan(20);
    }
    const init = await (await fetch(`${gateway.url}/paia/docs/init.js`)).text();
    expect(init).toContain('"url":"/paia/openapi.json"');
    const bundle = await fetch(`${gateway.url}${assets[1]}`);
    expect(bundle.headers.get('cache-control')).toContain('max-age=31536000');
  });

  it('answers DAIA (availability, its errors, JSONP) and unknown URLs as the document says', async () => {
    const document = (await (await fetch(`${gateway.url}/paia/openapi.json`)).json()) as Json;
    const checker = new OpenApiChecker(document);
    const cases: Array<[string, Record<string, string>, number]> = [
      ['/paia/daia?format=json&id=it-0001|it-0030', {}, 200],
      ['/paia/daia?format=json&id=it-0001&callback=show', {}, 200],
      ['/paia/daia?id=it-0001', {}, 422],
      ['/paia/daia?format=json&id=it-0001', { Authorization: 'Bearer x' }, 501],
      ['/paia/daia?format=json&id=it-0001&suppress_response_codes', { Authorization: 'Bearer x' }, 200],
      ['/paia/nothing-here', {}, 404],
    ];
    for (const [path, headers, status] of cases) {
      const url = new URL(path, gateway.url);
      const response = await fetch(url, { headers });
      const text = await response.text();
      const callback = url.searchParams.get('callback');
      const body = callback === null ? text : text.replace(/^\/\*\*\/show\(/, '').replace(/\);$/, '');
      expect(response.status, `${path}: ${text.slice(0, 200)}`).toBe(status);
      const exchange = {
        method: 'GET',
        url,
        status: response.status,
        contentType: response.headers.get('content-type'),
        json: JSON.parse(body) as unknown,
      };
      expect(checker.problems(exchange), path).toEqual([]);
    }
  });
});
