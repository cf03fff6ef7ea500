import { describe, expect, it } from 'vitest';
import { bearer, json, jsonPost, login, makeApp } from './helpers.js';

const EXPOSE = 'X-PAIA-Version, X-OAuth-Scopes, X-Accepted-OAuth-Scopes, WWW-Authenticate, Retry-After, X-Request-Id';

function expectPaiaHeaders(response: Response): void {
  expect(response.headers.get('content-type')).toMatch(/^application\/(json|javascript); charset=(utf-8|iso-8859-1)$/);
  expect(response.headers.get('x-paia-version')).toBe('1.4.0');
  expect(response.headers.has('x-oauth-scopes')).toBe(true);
  expect(response.headers.has('x-accepted-oauth-scopes')).toBe(true);
  expect(response.headers.get('access-control-allow-origin')).toBe('*');
  expect(response.headers.get('access-control-expose-headers')).toBe(EXPOSE);
  expect(response.headers.get('x-request-id')).toBeTruthy();
}

describe('every response', () => {
  it('is a JSON object with charset, PAIA, scope and CORS headers (success, errors, OPTIONS)', async () => {
    const t = makeApp();
    const { token, patron } = await login(t);
    const requests: Array<[string, RequestInit]> = [
      [`/core/${patron}`, { headers: bearer(token) }],
      [`/core/${patron}/items`, { headers: bearer(token) }],
      [`/core/${patron}/fees`, { headers: bearer(token) }],
      [`/core/${patron}/renew`, jsonPost({ doc: [{ item: 'x' }] }, bearer(token))],
      [`/core/${patron}`, {}],
      [`/core/${patron}`, { method: 'PUT' }],
      ['/nowhere', {}],
      [`/core/${patron}/items`, { method: 'OPTIONS' }],
      ['/auth/login', jsonPost({ username: 'alice', password: 'wrong', grant_type: 'password' })],
      ['/auth/change', jsonPost({})],
    ];
    for (const [url, init] of requests) {
      const response = await t.app.request(url, init);
      expectPaiaHeaders(response);
      const body = await json(response);
      expect(typeof body === 'object' && body !== null && !Array.isArray(body)).toBe(true);
    }
  });

  it('sends the token scopes and the method scope, never change_password on core', async () => {
    const t = makeApp();
    const { token, patron } = await login(t);
    const response = await t.app.request(`/core/${patron}/fees`, { headers: bearer(token) });
    expect(response.headers.get('x-oauth-scopes')).toBe('read_patron read_fees read_items write_items');
    expect(response.headers.get('x-accepted-oauth-scopes')).toBe('read_fees');
    const renew = await t.app.request(`/core/${patron}/renew`, { method: 'OPTIONS' });
    expect(renew.headers.get('x-accepted-oauth-scopes')).toBe('write_items');
    const change = await t.app.request('/auth/change', { method: 'POST' });
    expect(change.headers.get('x-accepted-oauth-scopes')).toBe('change_password');
    const noToken = await t.app.request(`/core/${patron}`);
    expect(noToken.headers.get('x-oauth-scopes')).toBe('');
  });
});

describe('charset', () => {
  it('answers in UTF-8 by default, bytes included', async () => {
    const t = makeApp();
    const { token, patron } = await login(t, 'emile', 'émile-pass');
    const response = await t.app.request(`/core/${patron}`, { headers: bearer(token) });
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.includes(Buffer.from('Émile', 'utf8'))).toBe(true);
    expect(JSON.parse(bytes.toString('utf8'))).toMatchObject({ name: 'Émile Zola' });
  });

  it('answers in ISO-8859-1 when Accept-Charset asks, losslessly as \\u escapes', async () => {
    const t = makeApp();
    const { token, patron } = await login(t, 'emile', 'émile-pass');
    const variants: Array<Record<string, string>> = [
      { 'Accept-Charset': 'iso-8859-1' },
      { Accept: 'application/json; charset=ISO-8859-1' },
    ];
    for (const headers of variants) {
      const response = await t.app.request(`/core/${patron}/items`, { headers: bearer(token, headers) });
      expect(response.headers.get('content-type')).toBe('application/json; charset=iso-8859-1');
      const bytes = Buffer.from(await response.arrayBuffer());
      expect([...bytes].every((b) => b < 0x80)).toBe(true);
      expect(JSON.parse(bytes.toString('latin1'))).toEqual({
        doc: [{ status: 3, item: 'https://lib.example.org/item/it-3', about: 'L’Assommoir – 😀' }],
      });
    }
    const patronResponse = await t.app.request(`/core/${patron}`, {
      headers: bearer(token, { 'Accept-Charset': 'ISO-8859-1' }),
    });
    expect(Buffer.from(await patronResponse.arrayBuffer()).toString('latin1')).toContain('"\\u00c9mile Zola"');
  });

  it('prefers Accept-Charset over Accept', async () => {
    const t = makeApp();
    const response = await t.app.request('/nowhere', {
      headers: { 'Accept-Charset': 'utf-8', Accept: 'application/json; charset=iso-8859-1' },
    });
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const other = await t.app.request('/nowhere', {
      headers: { 'Accept-Charset': 'koi8-r', Accept: 'application/json; charset=iso-8859-1' },
    });
    expect(other.headers.get('content-type')).toBe('application/json; charset=iso-8859-1');
  });
});

describe('JSONP', () => {
  it('wraps the object in the callback, as application/javascript with charset', async () => {
    const t = makeApp();
    const { token, patron } = await login(t);
    const response = await t.app.request(`/core/${patron}?callback=handle_1&access_token=${token}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    const text = await response.text();
    const match = /^\/\*\*\/handle_1\((.*)\);$/s.exec(text);
    expect(match).not.toBeNull();
    expect(JSON.parse(match![1]!)).toMatchObject({ name: 'Alice Example' });
  });

  it('wraps errors too', async () => {
    const t = makeApp();
    const response = await t.app.request('/core/1001?callback=cb&suppress_response_codes');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(await response.text()).toMatch(/^\/\*\*\/cb\(\{"error":"invalid_grant","code":401,/);
  });

  it('refuses a callback with other characters: 400 invalid_request as plain JSON', async () => {
    const t = makeApp();
    for (const callback of ['alert(1)', 'a.b', 'x%20y', '', 'é', '<script>']) {
      const response = await t.app.request(`/core/1001/items?callback=${encodeURIComponent(callback)}`);
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="PAIA"/);
      expect(await json(response)).toMatchObject({ error: 'invalid_request', code: 400 });
    }
  });
});

describe('suppress_response_codes', () => {
  it('makes every core response 200, with the numeric code in the body', async () => {
    const t = makeApp();
    const cases: Array<[string, RequestInit, number, string]> = [
      ['/core/1001?suppress_response_codes', {}, 401, 'invalid_grant'],
      ['/core/1001?suppress_response_codes=false', { method: 'DELETE' }, 405, 'invalid_request'],
      ['/nowhere?suppress_response_codes', {}, 404, 'not_found'],
      ['/core/1001/renew?suppress_response_codes', { method: 'POST', body: '{' }, 401, 'invalid_grant'],
    ];
    for (const [url, init, code, error] of cases) {
      const response = await t.app.request(url, init);
      expect(response.status).toBe(200);
      expect(await json(response)).toMatchObject({ error, code });
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    const notAllowed = await t.app.request('/core/1001?suppress_response_codes', { method: 'DELETE' });
    expect(notAllowed.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('core error bodies carry code also without it; auth error bodies never do', async () => {
    const t = makeApp();
    expect(await json(await t.app.request('/core/1001'))).toHaveProperty('code', 401);
    for (const url of ['/auth/login', '/auth/login?suppress_response_codes']) {
      const response = await t.app.request(
        url,
        jsonPost({ username: 'alice', password: 'nope', grant_type: 'password' }),
      );
      expect(response.status).toBe(url.includes('suppress') ? 200 : 403);
      const body = await json(response);
      expect(body).toMatchObject({ error: 'access_denied' });
      expect(body).not.toHaveProperty('code');
    }
    for (const [url, init] of [
      ['/auth/logout?suppress_response_codes', jsonPost({ patron: '1001' })],
      ['/auth/change?suppress_response_codes', jsonPost({})],
      ['/auth/login?suppress_response_codes', { method: 'GET' }],
      ['/auth/nowhere?suppress_response_codes', {}],
    ] as const) {
      const response = await t.app.request(url, init);
      expect(response.status).toBe(200);
      expect(await json(response)).not.toHaveProperty('code');
    }
  });
});

describe('verbs and URLs', () => {
  const GET_URLS = ['/core/1001', '/core/1001/items', '/core/1001/fees'];
  const POST_URLS = [
    '/core/1001/renew',
    '/core/1001/request',
    '/core/1001/cancel',
    '/auth/login',
    '/auth/logout',
    '/auth/change',
  ];

  it('answers OPTIONS on every method URL without a token', async () => {
    const t = makeApp();
    for (const url of [...GET_URLS, ...POST_URLS]) {
      const response = await t.app.request(url, {
        method: 'OPTIONS',
        headers: { Origin: 'https://opac.example.org', 'Access-Control-Request-Method': 'GET' },
      });
      expect(response.status).toBe(200);
      const allow = GET_URLS.includes(url) ? 'GET, HEAD, OPTIONS' : 'POST, OPTIONS';
      expect(response.headers.get('allow')).toBe(allow);
      expect(response.headers.get('access-control-allow-methods')).toBe(allow);
      expect(response.headers.get('access-control-allow-headers')).toBe('Content-Type, Authorization, Accept-Language');
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(await json(response)).toEqual({});
    }
    expect(t.backend.calls).toEqual([]);
  });

  it('answers HEAD on GET methods with the headers of GET and no body', async () => {
    const t = makeApp();
    const { token, patron } = await login(t);
    for (const path of ['', '/items', '/fees']) {
      const response = await t.app.request(`/core/${patron}${path}`, { method: 'HEAD', headers: bearer(token) });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('x-paia-version')).toBe('1.4.0');
      expect(await response.text()).toBe('');
    }
    const unauthorized = await t.app.request(`/core/${patron}`, { method: 'HEAD' });
    expect(unauthorized.status).toBe(401);
    expect(await unauthorized.text()).toBe('');
  });

  it('answers other verbs with 405 invalid_request and Allow', async () => {
    const t = makeApp();
    const { token } = await login(t);
    const cases: Array<[string, string, string]> = [
      ['PUT', '/core/1001', 'GET, HEAD, OPTIONS'],
      ['POST', '/core/1001', 'GET, HEAD, OPTIONS'],
      ['DELETE', '/core/1001/items', 'GET, HEAD, OPTIONS'],
      ['PATCH', '/core/1001/fees', 'GET, HEAD, OPTIONS'],
      ['GET', '/core/1001/renew', 'POST, OPTIONS'],
      ['HEAD', '/core/1001/cancel', 'POST, OPTIONS'],
      ['PUT', '/core/1001/request', 'POST, OPTIONS'],
      ['GET', '/auth/login', 'POST, OPTIONS'],
      ['GET', '/auth/logout', 'POST, OPTIONS'],
      ['GET', '/auth/change', 'POST, OPTIONS'],
    ];
    for (const [method, url, allow] of cases) {
      const response = await t.app.request(url, { method, headers: bearer(token) });
      expect(response.status, `${method} ${url}`).toBe(405);
      expect(response.headers.get('allow')).toBe(allow);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="PAIA"/);
      if (method === 'HEAD') continue;
      const body = await json(response);
      expect(body).toMatchObject({ error: 'invalid_request' });
      if (url.startsWith('/auth')) expect(body).not.toHaveProperty('code');
      else expect(body).toHaveProperty('code', 405);
    }
    expect(t.backend.calls.map((c) => c.method)).toEqual(['login']);
  });

  it('answers unknown URLs with 404 not_found, also under the bases', async () => {
    const t = makeApp();
    const { token } = await login(t);
    for (const url of [
      '/',
      '/core',
      '/core/',
      '/core/1001/',
      '/core/1001/bogus',
      '/core/1001/items/x',
      '/auth',
      '/auth/',
      '/auth/reset',
      '/auth/login/x',
      '/daia',
      '/paia/core/1001',
    ]) {
      const response = await t.app.request(url, { headers: bearer(token) });
      expect(response.status, url).toBe(404);
      expect(await json(response)).toMatchObject({ error: 'not_found' });
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
  });

  it('serves under a base path', async () => {
    const t = makeApp({ basePath: '/paia' });
    const { token, patron } = await login(t);
    expect((await t.app.request(`/paia/core/${patron}`, { headers: bearer(token) })).status).toBe(200);
    expect((await t.app.request(`/core/${patron}`, { headers: bearer(token) })).status).toBe(404);
    expect((await t.app.request('/auth/login', { method: 'OPTIONS' })).status).toBe(404);
    expect((await t.app.request('/paia/auth/login', { method: 'OPTIONS' })).status).toBe(200);
    const authError = await json(await t.app.request('/paia/auth/bogus'));
    expect(authError).not.toHaveProperty('code');
    expect(() => makeApp({ basePath: 'paia' })).toThrow(/basePath/);
  });
});

describe('request ids and logging', () => {
  it('echoes a sane X-Request-Id, replaces a bad one, generates one otherwise', async () => {
    const t = makeApp();
    const sane = await t.app.request('/core/1001', { headers: { 'X-Request-Id': 'abc-123.4' } });
    expect(sane.headers.get('x-request-id')).toBe('abc-123.4');
    const bad = await t.app.request('/core/1001', { headers: { 'X-Request-Id': 'a b"c' } });
    expect(bad.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const none = await t.app.request('/core/1001');
    expect(none.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(none.headers.get('x-request-id')).not.toBe(bad.headers.get('x-request-id'));
  });

  it('logs one line per request without query string, token or password', async () => {
    const t = makeApp();
    const { token, patron } = await login(t);
    await t.app.request(`/core/${patron}/items?access_token=${token}&x=1`, { headers: { 'X-Request-Id': 'req-42' } });
    await t.app.request(`/core/${patron}`, { headers: bearer(token) });
    await t.app.request(
      '/auth/login',
      jsonPost({ username: 'alice', password: 'wrong-secret-pw', grant_type: 'password' }),
    );
    // An access line is written on the event loop's next turn, after its response went out.
    await new Promise((resolve) => setImmediate(resolve));
    const lines = t.logs().filter((line) => line.msg === 'request');
    expect(lines).toHaveLength(4);
    expect(lines[1]).toMatchObject({ reqId: 'req-42', method: 'GET', path: `/core/${patron}/items`, status: 200 });
    expect(typeof lines[1]!.ms).toBe('number');
    expect(lines[3]).toMatchObject({ path: '/auth/login', status: 403, error: 'access_denied' });
    const raw = t.rawLog();
    expect(raw).not.toContain(token);
    expect(raw).not.toContain('alice-pass');
    expect(raw).not.toContain('wrong-secret-pw');
    expect(raw).not.toContain('access_token');
  });
});
