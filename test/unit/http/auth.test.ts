import { describe, expect, it } from 'vitest';
import { LruSessionStore } from '../../../src/state/memory/sessions.js';
import type { Session, SessionStore } from '../../../src/state/sessions.js';
import { bearer, FakeBackend, json, jsonPost, login, makeApp } from './helpers.js';

const LOGIN = (fields: Record<string, unknown>) =>
  jsonPost({ username: 'alice', password: 'alice-pass', grant_type: 'password', ...fields });

describe('login', () => {
  it('answers patron, token, type, scope and lifetime, not cacheable', async () => {
    const t = makeApp({ tokenLifetimeMs: 1_800_000 });
    const { response } = await login(t);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('pragma')).toBe('no-cache');
    expect(response.headers.get('x-oauth-scopes')).toBe('read_patron read_fees read_items write_items');
    const body = await json(response);
    expect(body).toEqual({
      patron: '1001',
      access_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      token_type: 'Bearer',
      scope: 'read_patron read_fees read_items write_items',
      expires_in: 1800,
    });
    expect(t.backend.callsOf('login')[0]!.args).toEqual(['alice', 'alice-pass']);
    expect(t.sessions.size()).toBe(1);
  });

  it('accepts form-urlencoded bodies too', async () => {
    const t = makeApp();
    const response = await t.app.request('/auth/login', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=UTF-8' },
      body: new URLSearchParams({
        username: 'emile',
        password: 'émile-pass',
        grant_type: 'password',
        scope: 'read_items',
      }).toString(),
    });
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({ patron: '2002', scope: 'read_items' });
  });

  it('grants requested ∩ allowed, never change_password (VuFind asks for it)', async () => {
    const t = makeApp();
    const vufind = await t.app.request(
      '/auth/login',
      LOGIN({ scope: 'read_patron read_fees read_items write_items change_password' }),
    );
    expect(await json(vufind)).toMatchObject({ scope: 'read_patron read_fees read_items write_items' });
    const some = await t.app.request('/auth/login', LOGIN({ scope: 'write_items read_items unknown_scope' }));
    expect(await json(some)).toMatchObject({ scope: 'read_items write_items' });
    const blank = await t.app.request('/auth/login', LOGIN({ scope: '' }));
    expect(await json(blank)).toMatchObject({ scope: 'read_patron read_fees read_items write_items' });
  });

  it('422 when no requested scope can be granted, before asking the ILS', async () => {
    const t = makeApp();
    const response = await t.app.request('/auth/login', LOGIN({ scope: 'change_password' }));
    expect(response.status).toBe(422);
    expect(await json(response)).toMatchObject({ error: 'invalid_request' });
    expect(t.backend.calls).toEqual([]);
  });

  it('grants read scopes only to an inactive account (state 2)', async () => {
    const t = makeApp();
    const { token, patron, scope } = await login(t, 'bob', 'bob-pass');
    expect(scope).toBe('read_patron read_fees read_items');
    expect((await t.app.request(`/core/${patron}/items`, { headers: bearer(token) })).status).toBe(200);
    const renew = await t.app.request(`/core/${patron}/renew`, jsonPost({ doc: [{ item: 'x' }] }, bearer(token)));
    expect(renew.status).toBe(403);
    expect(await json(renew)).toMatchObject({ error: 'insufficient_scope' });
    const writeOnly = await t.app.request(
      '/auth/login',
      jsonPost({ username: 'bob', password: 'bob-pass', grant_type: 'password', scope: 'write_items' }),
    );
    expect(writeOnly.status).toBe(422);
  });

  it('rejects unknown user and wrong password identically: 403 access_denied with WWW-Authenticate, no code', async () => {
    const t = makeApp();
    const unknown = await t.app.request(
      '/auth/login',
      jsonPost({ username: 'nobody', password: 'wrong-guess', grant_type: 'password' }),
    );
    const wrong = await t.app.request(
      '/auth/login',
      jsonPost({ username: 'alice', password: 'wrong-guess', grant_type: 'password' }),
    );
    for (const response of [unknown, wrong]) {
      expect(response.status).toBe(403);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="PAIA"');
    }
    const strip = (r: Response) => [...r.headers].filter(([name]) => name !== 'x-request-id');
    expect(strip(unknown)).toEqual(strip(wrong));
    const body = await json(unknown);
    expect(body).toEqual(await json(wrong));
    expect(body).toEqual({ error: 'access_denied', error_description: 'login failed: wrong username or password' });
  });

  const unfit: Array<[string, Record<string, unknown>, RegExp]> = [
    ['grant_type missing', { grant_type: undefined }, /^grant_type is missing$/],
    ['grant_type wrong', { grant_type: 'authorization_code' }, /^grant_type must be "password"/],
    ['username missing', { username: undefined }, /^username is missing$/],
    ['password empty', { password: '' }, /^password must not be empty$/],
    ['username not a string', { username: 1001 }, /^username must be a string$/],
    ['scope not a string', { scope: ['read_items'] }, /^scope must be a string/],
  ];
  for (const [name, fields, description] of unfit) {
    it(`422 invalid_request for ${name}, ILS untouched`, async () => {
      const t = makeApp();
      const response = await t.app.request('/auth/login', LOGIN(fields));
      expect(response.status).toBe(422);
      const body = await json(response);
      expect(body).toMatchObject({ error: 'invalid_request' });
      expect(body).not.toHaveProperty('code');
      expect(body.error_description).toMatch(description);
      expect(t.backend.calls).toEqual([]);
    });
  }

  it('400 unsupported_grant_type for client_credentials where no trusted clients are configured (RFC 6749 5.2), no code, ILS untouched', async () => {
    const t = makeApp();
    for (const fields of [
      { grant_type: 'client_credentials' },
      { grant_type: 'client_credentials', patron: 'alice' },
    ]) {
      const response = await t.app.request('/auth/login', LOGIN(fields));
      expect(response.status).toBe(400);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="PAIA"');
      expect(await json(response)).toEqual({
        error: 'unsupported_grant_type',
        error_description:
          'this server offers no client_credentials login (no trusted clients are configured); log in with grant_type "password"',
      });
    }
    expect(t.backend.calls).toEqual([]);
  });

  it('400 for a malformed login body', async () => {
    const t = makeApp();
    for (const init of [
      { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: 'username=alice' },
      { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{}' },
      { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=latin1' }, body: 'a=b' },
    ]) {
      expect((await t.app.request('/auth/login', init)).status).toBe(400);
    }
    expect(t.backend.calls).toEqual([]);
  });

  it('never takes credentials from the URL: GET is 405, query credentials are 400', async () => {
    const t = makeApp();
    const get = await t.app.request('/auth/login?username=alice&password=alice-pass&grant_type=password');
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST, OPTIONS');
    const query = await t.app.request('/auth/login?username=alice&password=alice-pass&grant_type=password', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(query.status).toBe(400);
    expect((await json(query)).error_description).toMatch(/never accepted in the URL/);
    expect(t.backend.calls).toEqual([]);
    expect(t.rawLog()).not.toContain('alice-pass');
  });

  it('never issues a token equal to the password', async () => {
    const inner = new LruSessionStore({ maxSessions: 10 });
    let first = true;
    const sessions: SessionStore = {
      async create(session: Session) {
        const token = await inner.create(session);
        if (!first) return token;
        first = false;
        return 'alice-pass'; // the impossible case
      },
      get: (token) => inner.get(token),
      delete: (token) => inner.delete(token),
      deleteAllFor: (patron) => inner.deleteAllFor(patron),
      size: () => inner.size(),
    };
    const t = makeApp({ sessions });
    const body = await json(await t.app.request('/auth/login', LOGIN({})));
    expect(body.access_token).not.toBe('alice-pass');
    expect(body.access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('throttles repeated failures: same 403 plus Retry-After, ILS not asked', async () => {
    const t = makeApp({ throttle: { freeAttemptsPerUser: 2, baseDelayMs: 5000 } });
    for (let i = 0; i < 2; i++) {
      expect((await t.app.request('/auth/login', LOGIN({ password: 'guess' }))).status).toBe(403);
    }
    const locked = await t.app.request('/auth/login', LOGIN({}));
    expect(locked.status).toBe(403);
    expect(locked.headers.get('retry-after')).toBe('5');
    expect(await json(locked)).toEqual({
      error: 'access_denied',
      error_description: 'login failed: wrong username or password',
    });
    expect(t.backend.callsOf('login')).toHaveLength(2);
  });

  it('slows the failed answers of an address past its free failures (the address given by the clientAddress option), but lets a correct login from it through', async () => {
    const t = makeApp({
      throttle: { freeAttemptsPerUser: 100, freeAttemptsPerAddress: 2, maxSlowdownMs: 400, baseDelayMs: 60_000 },
      clientAddress: () => '192.0.2.1',
    });
    const wrong = (username: string) =>
      t.app.request('/auth/login', jsonPost({ username, password: 'wrong-guess', grant_type: 'password' }));
    await wrong('u1');
    await wrong('u2');
    const started = performance.now();
    expect((await wrong('u3')).status).toBe(403);
    expect(performance.now() - started).toBeGreaterThanOrEqual(350);
    expect((await t.app.request('/auth/login', LOGIN({}))).status).toBe(200);
  });
});

describe('logout', () => {
  it('invalidates the token, ends the ILS session and answers {patron}', async () => {
    const t = makeApp();
    const { token, patron } = await login(t);
    const other = await login(t);
    const response = await t.app.request('/auth/logout', jsonPost({ patron }, bearer(token)));
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ patron });
    expect(t.backend.callsOf('logout')[0]!.args).toEqual(['1001']);
    expect((await t.app.request(`/core/${patron}`, { headers: bearer(token) })).status).toBe(401);
    const again = await t.app.request('/auth/logout', jsonPost({ patron }, bearer(token)));
    expect(again.status).toBe(401);
    expect(await json(again)).toMatchObject({ error: 'invalid_grant' });
    // other tokens of the patron live on
    expect((await t.app.request(`/core/${patron}`, { headers: bearer(other.token) })).status).toBe(200);
  });

  it('accepts a form body and the token as parameter', async () => {
    const t = makeApp();
    const { token, patron } = await login(t);
    const response = await t.app.request(`/auth/logout?access_token=${token}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `patron=${patron}`,
    });
    expect(response.status).toBe(200);
  });

  it('needs the token, and the patron of the token', async () => {
    const t = makeApp();
    const { token } = await login(t);
    expect((await t.app.request('/auth/logout', jsonPost({ patron: '1001' }))).status).toBe(401);
    const missing = await t.app.request('/auth/logout', jsonPost({}, bearer(token)));
    expect(missing.status).toBe(422);
    expect((await json(missing)).error_description).toBe('patron is missing');
    const other = await t.app.request('/auth/logout', jsonPost({ patron: '2002' }, bearer(token)));
    expect(other.status).toBe(403);
    expect(await json(other)).toMatchObject({ error: 'access_denied' });
    expect((await t.app.request('/core/1001', { headers: bearer(token) })).status).toBe(200);
    expect(t.backend.callsOf('logout')).toHaveLength(0);
  });

  it('succeeds even when the ILS logout fails', async () => {
    const backend = new FakeBackend();
    const t = makeApp({ backend });
    const { token, patron } = await login(t);
    backend.failNext = new Error('ILS gone');
    const response = await t.app.request('/auth/logout', jsonPost({ patron }, bearer(token)));
    expect(response.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(t.logs().some((line) => line.msg === 'backend logout failed')).toBe(true);
  });
});

describe('change', () => {
  it('is 501 not_implemented, without code', async () => {
    const t = makeApp();
    const { token, patron } = await login(t);
    const response = await t.app.request(
      '/auth/change',
      jsonPost({ patron, username: 'alice', old_password: 'alice-pass', new_password: 'n3w-Secret!' }, bearer(token)),
    );
    expect(response.status).toBe(501);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const body = await json(response);
    expect(body).toMatchObject({ error: 'not_implemented' });
    expect(body).not.toHaveProperty('code');
    expect((await t.app.request('/auth/change')).status).toBe(405);
  });
});
