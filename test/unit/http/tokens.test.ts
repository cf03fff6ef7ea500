import { describe, expect, it } from 'vitest';
import { PatronIds } from '../../../src/auth/patron-ids.js';
import { LruSessionStore } from '../../../src/state/memory/sessions.js';
import { bearer, FakeBackend, json, jsonPost, login, makeApp } from './helpers.js';

describe('access tokens', () => {
  it('are accepted in the Authorization header, the access_token parameter, or both when equal', async () => {
    const t = makeApp();
    const { token, patron } = await login(t);
    for (const [url, headers] of [
      [`/core/${patron}`, bearer(token)],
      [`/core/${patron}`, { Authorization: `bearer ${token}` }],
      [`/core/${patron}?access_token=${token}`, {}],
      [`/core/${patron}?access_token=${token}`, bearer(token)],
      [`/core/${patron}?access_token=${token}&access_token=${token}`, {}],
    ] as const) {
      const response = await t.app.request(url, { headers });
      expect(response.status, url).toBe(200);
    }
  });

  it('given twice with different values is a 400', async () => {
    const t = makeApp();
    const { token, patron } = await login(t);
    const other = (await login(t)).token;
    for (const [url, headers] of [
      [`/core/${patron}?access_token=${other}`, bearer(token)],
      [`/core/${patron}?access_token=${other}&access_token=${token}`, {}],
    ] as const) {
      const response = await t.app.request(url, { headers });
      expect(response.status).toBe(400);
      expect(await json(response)).toMatchObject({ error: 'invalid_request', code: 400 });
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="PAIA"/);
    }
    expect(t.backend.callsOf('patron')).toHaveLength(0);
  });

  it('missing, unknown or expired: 401 invalid_grant with WWW-Authenticate', async () => {
    let now = Date.now();
    const sessions = new LruSessionStore({ maxSessions: 10, now: () => now });
    const t = makeApp({ sessions, tokenLifetimeMs: 60_000 });
    const { token, patron } = await login(t);
    const missing = await t.app.request(`/core/${patron}`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="PAIA"');
    expect(await json(missing)).toMatchObject({ error: 'invalid_grant', code: 401 });

    const basic = await t.app.request(`/core/${patron}`, {
      headers: { Authorization: 'Basic YWxpY2U6YWxpY2UtcGFzcw==' },
    });
    expect(basic.status).toBe(401);

    const unknown = await t.app.request(`/core/${patron}`, { headers: bearer('A'.repeat(43)) });
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get('www-authenticate')).toBe('Bearer realm="PAIA", error="invalid_token"');

    expect((await t.app.request(`/core/${patron}`, { headers: bearer(token) })).status).toBe(200);
    now += 61_000;
    const expired = await t.app.request(`/core/${patron}`, { headers: bearer(token) });
    expect(expired.status).toBe(401);
    expect(await json(expired)).toMatchObject({ error: 'invalid_grant' });
  });

  it('are checked before the patron: no token is 401 even for an unknown patron', async () => {
    const t = makeApp();
    for (const url of ['/core/no-such-patron', '/core/no-such-patron/items', '/core/no-such-patron/fees']) {
      expect((await t.app.request(url)).status).toBe(401);
    }
    expect((await t.app.request('/core/no-such-patron/renew', jsonPost({ doc: [] }))).status).toBe(401);
    expect(t.backend.calls).toEqual([]);
  });

  it('of another patron give 403 access_denied, whether that patron exists or not', async () => {
    const t = makeApp();
    const { token } = await login(t);
    for (const url of ['/core/2002', '/core/no-such-patron', '/core/2002/items', '/core/3003/fees']) {
      const response = await t.app.request(url, { headers: bearer(token) });
      expect(response.status, url).toBe(403);
      expect(await json(response)).toMatchObject({ error: 'access_denied', code: 403 });
    }
    const renew = await t.app.request('/core/2002/renew', jsonPost({ doc: [{ item: 'x' }] }, bearer(token)));
    expect(renew.status).toBe(403);
    expect(t.backend.calls.map((c) => c.method)).toEqual(['login']);
  });

  it('without the method scope give 403 insufficient_scope', async () => {
    const t = makeApp();
    const { token, patron, scope } = await login(t, 'alice', 'alice-pass', 'read_patron');
    expect(scope).toBe('read_patron');
    expect((await t.app.request(`/core/${patron}`, { headers: bearer(token) })).status).toBe(200);
    const items = await t.app.request(`/core/${patron}/items`, { headers: bearer(token) });
    expect(items.status).toBe(403);
    expect(await json(items)).toMatchObject({ error: 'insufficient_scope', code: 403 });
    expect(items.headers.get('x-oauth-scopes')).toBe('read_patron');
    expect(items.headers.get('x-accepted-oauth-scopes')).toBe('read_items');
    expect(items.headers.get('www-authenticate')).toBe(
      'Bearer realm="PAIA", error="insufficient_scope", scope="read_items"',
    );
    const renew = await t.app.request(`/core/${patron}/renew`, jsonPost({ doc: [{ item: 'x' }] }, bearer(token)));
    expect(renew.status).toBe(403);
    expect(t.backend.callsOf('items')).toHaveLength(0);
    expect(t.backend.callsOf('renew')).toHaveLength(0);
  });

  it('find the patron by the URI-decoded path segment (escaped or not)', async () => {
    const backend = new FakeBackend();
    backend.patrons.push({
      ...backend.patrons[0]!,
      username: 'spacey',
      barcode: 'Zoë 7',
      record: { name: 'Zoë', status: 0 },
    });
    const t = makeApp({ backend });
    const { token, patron } = await login(t, 'spacey', 'alice-pass');
    expect(patron).toBe('Zoë 7');
    for (const url of ['/core/Zo%C3%AB%207', '/core/Zoë 7', `/core/${encodeURIComponent(patron)}/items`]) {
      const response = await t.app.request(url, { headers: bearer(token) });
      expect(response.status, url).toBe(200);
    }
    expect(backend.callsOf('patron')[0]!.args).toEqual(['Zoë 7']);
  });

  it('with opaque patron ids: the HMAC id addresses the patron, the barcode does not, and never shows', async () => {
    const t = makeApp({ patronIds: new PatronIds('opaque', 'opaque-secret-for-tests-0123456789') });
    const { token, patron } = await login(t);
    expect(patron).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(patron).not.toContain('1001');
    const record = await t.app.request(`/core/${patron}`, { headers: bearer(token) });
    expect(record.status).toBe(200);
    expect(t.backend.callsOf('patron')[0]!.args).toEqual(['1001']);
    expect(t.rawLog().replace(/"time":\d+,/g, '')).not.toContain('1001');
    expect((await t.app.request('/core/1001', { headers: bearer(token) })).status).toBe(403);
    const logout = await t.app.request('/auth/logout', jsonPost({ patron }, bearer(token)));
    expect(await json(logout)).toEqual({ patron });
  });
});
