import { describe, expect, it } from 'vitest';
import { bearer, fakeDaia, jsonPost, login, makeApp, type TestApp } from './helpers.js';

const daia = fakeDaia();

const OPAC = 'https://opac.lib.example.org';
const EVIL = 'https://evil.example.net';

const SECURE = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
};

function expectSecure(response: Response): void {
  for (const [name, value] of Object.entries(SECURE)) expect(response.headers.get(name), name).toBe(value);
}

/** One request of each kind: success and error of core, auth and DAIA, and preflights. */
async function samples(t: TestApp, headers: Record<string, string> = {}): Promise<Array<[string, Response, number]>> {
  const { token } = await login(t);
  const req = (url: string, init: RequestInit = {}) =>
    t.app.request(url, { ...init, headers: { ...headers, ...(init.headers as Record<string, string> | undefined) } });
  return [
    ['core success', await req('/core/1001/items', { headers: bearer(token) }), 200],
    ['core error (no token)', await req('/core/1001/items'), 401],
    [
      'core error (backend)',
      await (() => {
        t.backend.failNext = new Error('boom');
        return req('/core/1001/fees', { headers: bearer(token) });
      })(),
      500,
    ],
    [
      'auth success',
      await req('/auth/login', jsonPost({ username: 'alice', password: 'alice-pass', grant_type: 'password' })),
      200,
    ],
    [
      'auth error',
      await req('/auth/login', jsonPost({ username: 'alice', password: 'wrong', grant_type: 'password' })),
      403,
    ],
    ['daia success', await req('/daia?id=1&format=json'), 200],
    ['daia error', await req('/daia?id=1'), 422],
    ['daia jsonp', await req('/daia?id=1&format=json&callback=cb'), 200],
    ['unknown URL', await req('/nowhere'), 404],
    ['405', await req('/auth/login', { method: 'PUT' }), 405],
    ['core preflight', await req('/core/1001/items', { method: 'OPTIONS' }), 200],
    ['auth preflight', await req('/auth/login', { method: 'OPTIONS' }), 200],
    ['daia preflight', await req('/daia', { method: 'OPTIONS' }), 200],
  ];
}

describe('CORS, default "*"', () => {
  it('lets any origin read every answer, without Vary', async () => {
    const t = makeApp({ daia });
    for (const [name, response, status] of await samples(t, { Origin: EVIL })) {
      expect(response.status, name).toBe(status);
      expect(response.headers.get('access-control-allow-origin'), name).toBe('*');
      expect(response.headers.get('access-control-expose-headers'), name).toBeTruthy();
      expect(response.headers.get('vary'), name).toBeNull();
    }
  });

  it('is the same with corsOrigins ["*"] given', async () => {
    const t = makeApp({ daia, corsOrigins: ['*'] });
    const response = await t.app.request('/daia?id=1&format=json');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('CORS with a list of origins', () => {
  const t = () => makeApp({ daia, corsOrigins: [OPAC, 'http://localhost:3000'] });

  it('echoes an allowed Origin with Vary: Origin on every kind of answer', async () => {
    for (const [name, response, status] of await samples(t(), { Origin: OPAC })) {
      expect(response.status, name).toBe(status);
      expect(response.headers.get('access-control-allow-origin'), name).toBe(OPAC);
      expect(response.headers.get('access-control-expose-headers'), name).toBeTruthy();
      expect(response.headers.get('vary'), name).toMatch(/\bOrigin\b/);
    }
  });

  it('answers other origins normally but without any Access-Control-* header', async () => {
    for (const [name, response, status] of await samples(t(), { Origin: EVIL })) {
      expect(response.status, name).toBe(status);
      expect(
        [...response.headers.keys()].filter((key) => key.startsWith('access-control-')),
        name,
      ).toEqual([]);
      expect(response.headers.get('vary'), name).toMatch(/\bOrigin\b/);
    }
  });

  it('matches scheme, host and port exactly', async () => {
    const app = t().app;
    for (const origin of [
      'http://opac.lib.example.org',
      `${OPAC}:8443`,
      'https://opac.lib.example.org.evil.net',
      'http://localhost:3001',
      'null',
      `${OPAC}/`,
    ]) {
      const response = await app.request('/daia?id=1&format=json', { headers: { Origin: origin } });
      expect(response.status, origin).toBe(200);
      expect(response.headers.get('access-control-allow-origin'), origin).toBeNull();
    }
    const local = await app.request('/daia?id=1&format=json', { headers: { Origin: 'http://localhost:3000' } });
    expect(local.headers.get('access-control-allow-origin')).toBe('http://localhost:3000');
  });

  it('a preflight from an allowed origin gets methods, headers and max-age; one from another origin none', async () => {
    const app = t().app;
    const preflight = {
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'Content-Type, Authorization',
    };
    for (const url of ['/core/1001/renew', '/auth/login', '/daia']) {
      const allowed = await app.request(url, { method: 'OPTIONS', headers: { Origin: OPAC, ...preflight } });
      expect(allowed.status, url).toBe(200);
      expect(allowed.headers.get('access-control-allow-origin'), url).toBe(OPAC);
      expect(allowed.headers.get('access-control-allow-methods'), url).toContain('OPTIONS');
      expect(allowed.headers.get('access-control-allow-headers'), url).toContain('Authorization');
      expect(allowed.headers.get('access-control-max-age'), url).toBe('86400');
      expect(allowed.headers.get('vary'), url).toMatch(/\bOrigin\b/);

      const denied = await app.request(url, { method: 'OPTIONS', headers: { Origin: EVIL, ...preflight } });
      expect(denied.status, url).toBe(200);
      expect(denied.headers.get('allow'), url).toContain('OPTIONS');
      expect(
        [...denied.headers.keys()].filter((key) => key.startsWith('access-control-')),
        url,
      ).toEqual([]);
    }
  });

  it('a request without Origin gets no Allow-Origin but Vary: Origin (caches must not mix answers)', async () => {
    const response = await t().app.request('/daia?id=1&format=json');
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.headers.get('vary')).toBe('Origin');
  });

  it('an empty list allows no origin', async () => {
    const response = await makeApp({ daia, corsOrigins: [] }).app.request('/daia?id=1&format=json', {
      headers: { Origin: OPAC },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('"*" mixed with origins is refused by createApp', () => {
    expect(() => makeApp({ corsOrigins: ['*', OPAC] })).toThrow(/"\*" must stand alone/);
  });
});

describe('secure response headers', () => {
  it('are on every answer: success, errors, preflights, JSONP; no-store where it was', async () => {
    const t = makeApp({ daia });
    for (const [name, response] of await samples(t)) {
      expectSecure(response);
      expect(response.headers.get('cache-control'), name).toBe('no-store');
      expect(response.headers.get('strict-transport-security'), name).toBeNull();
    }
  });

  it('leave JSONP working: application/javascript with the callback', async () => {
    const response = await makeApp({ daia }).app.request('/daia?id=1&format=json&callback=cb');
    expect(response.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(await response.text()).toMatch(/^\/\*\*\/cb\(\{/);
    expectSecure(response);
  });

  it('HSTS only with the hsts option, and only over HTTPS (https URL or X-Forwarded-Proto: https)', async () => {
    const off = makeApp({ daia });
    expect(
      (await off.app.request('https://gw.example.org/daia?id=1&format=json')).headers.get('strict-transport-security'),
    ).toBeNull();
    expect(
      (await off.app.request('/daia?id=1&format=json', { headers: { 'X-Forwarded-Proto': 'https' } })).headers.get(
        'strict-transport-security',
      ),
    ).toBeNull();

    const on = makeApp({ daia, hsts: true });
    const hsts = async (url: string, headers: Record<string, string> = {}) =>
      (await on.app.request(url, { headers })).headers.get('strict-transport-security');
    expect(await hsts('https://gw.example.org/daia?id=1&format=json')).toBe('max-age=31536000');
    expect(await hsts('https://gw.example.org/core/1001/items')).toBe('max-age=31536000'); // errors too
    expect(await hsts('/daia?id=1&format=json', { 'X-Forwarded-Proto': 'https' })).toBe('max-age=31536000');
    expect(await hsts('/daia?id=1&format=json', { 'X-Forwarded-Proto': 'http, https' })).toBe('max-age=31536000');
    expect(await hsts('/daia?id=1&format=json')).toBeNull();
    expect(await hsts('/daia?id=1&format=json', { 'X-Forwarded-Proto': 'http' })).toBeNull();
  });
});
