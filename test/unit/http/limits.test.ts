import { describe, expect, it } from 'vitest';
import { LoginThrottle } from '../../../src/auth/login-throttle.js';
import { WEAK_PASSWORD_MESSAGE } from '../../../src/auth/password-policy.js';
import { MemoryStore } from '../../../src/state/memory/index.js';
import { LruSessionStore } from '../../../src/state/memory/sessions.js';
import { bearer, json, jsonPost, login, makeApp } from './helpers.js';

/** A fresh in-process state store for one throttle. */
const memoryStore = () => new MemoryStore({ maxSessions: 100, maxSessionsPerPatron: 10 });

const LOGIN = (username: string, password: string) => jsonPost({ username, password, grant_type: 'password' });

describe('weak passwords', () => {
  it('get 403 access_denied telling the patron to change the password at the library, before the ILS is asked', async () => {
    const t = makeApp();
    t.backend.patrons[0]!.password = '123456'; // alice's real password is weak
    for (const [username, password] of [
      ['alice', '123456'],
      ['alice', 'Password'],
      ['nobody', '123456'],
      ['alice', 'abc'],
    ]) {
      const response = await t.app.request('/auth/login', LOGIN(username!, password!));
      expect(response.status).toBe(403);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      const body = await json(response);
      expect(body).toEqual({ error: 'access_denied', error_description: WEAK_PASSWORD_MESSAGE });
      expect(body.error_description).toMatch(/change your password at your library/);
    }
    // right or wrong, existing or not: the same answer, and the ILS never saw these passwords
    expect(t.backend.callsOf('login')).toHaveLength(0);
  });

  it('follow the configured policy', async () => {
    const { PasswordPolicy } = await import('../../../src/auth/password-policy.js');
    const t = makeApp({ passwordPolicy: new PasswordPolicy({ minLength: 12, denyList: ['alice-pass'] }) });
    expect((await t.app.request('/auth/login', LOGIN('alice', 'alice-pass'))).status).toBe(403);
    expect((await t.app.request('/auth/login', LOGIN('emile', 'émile-pass'))).status).toBe(403); // 10 < 12
    const off = makeApp({ passwordPolicy: new PasswordPolicy({ minLength: 0, denyList: [] }) });
    off.backend.patrons[0]!.password = '1';
    await login(off, 'alice', '1');
  });
});

describe('brute force: lockout log line, global ceiling', () => {
  it('logs one warn line per lockout, username hashed, never the password, and counts it', async () => {
    const throttle = new LoginThrottle(memoryStore(), {
      freeAttemptsPerUser: 2,
      freeAttemptsPerAddress: 100,
      baseDelayMs: 5000,
    });
    const t = makeApp({ loginThrottle: throttle });
    for (let i = 0; i < 5; i++) await t.app.request('/auth/login', LOGIN('alice', 'secret-guess-1'));
    const lines = t.logs().filter((line) => line.level === 'warn' && String(line.msg).startsWith('login lockout'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      lockout: {
        kind: 'username',
        subject: expect.stringMatching(/^[0-9a-f]{12}$/),
        failures: 2,
        retryAfterSeconds: 5,
      },
    });
    expect(typeof lines[0]!.reqId).toBe('string');
    expect(t.rawLog()).not.toContain('secret-guess-1');
    expect(t.rawLog()).not.toMatch(/"alice"/);
    expect(throttle.stats()).toMatchObject({ lockouts: 1, refused: 3 });
    expect(t.backend.callsOf('login')).toHaveLength(2);
  });

  it('beyond maxLoginsPerSecond: 503 service_unavailable with Retry-After 1, ILS not asked', async () => {
    const t = makeApp({
      loginThrottle: new LoginThrottle(memoryStore(), {
        maxAttemptsPerSecond: 2,
        freeAttemptsPerUser: 100,
        freeAttemptsPerAddress: 100,
      }),
    });
    const replies = await Promise.all(
      Array.from({ length: 4 }, () => t.app.request('/auth/login', LOGIN('alice', 'wrong-guess'))),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([403, 403, 503, 503]);
    const busy = replies.find((r) => r.status === 503)!;
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(await json(busy)).toMatchObject({
      error: 'service_unavailable',
      error_description: expect.stringMatching(/too many logins/),
    });
    expect(t.backend.callsOf('login')).toHaveLength(2);
  });
});

describe('tokens: requests per minute, sessions per patron, logout', () => {
  it('429 (error service_unavailable) with Retry-After once a token used up its requests for the minute; other tokens unaffected', async () => {
    const t = makeApp({ requestsPerMinute: 3 });
    const { token, patron } = await login(t);
    for (let i = 0; i < 3; i++)
      expect((await t.app.request(`/core/${patron}`, { headers: bearer(token) })).status).toBe(200);
    const limited = await t.app.request(`/core/${patron}/items?access_token=${token}`);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(limited.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await json(limited)).toMatchObject({
      error: 'service_unavailable',
      code: 429,
      error_description: expect.stringMatching(/at most 3 per minute/),
    });
    const other = await login(t);
    expect((await t.app.request(`/core/${patron}`, { headers: bearer(other.token) })).status).toBe(200);
    // invalid tokens are not counted (and still get 401)
    expect((await t.app.request(`/core/${patron}`, { headers: bearer('x'.repeat(43)) })).status).toBe(401);
    expect(t.backend.callsOf('patron')).toHaveLength(4);
  });

  it('suppress_response_codes: 200 with code 429 in the body', async () => {
    const t = makeApp({ requestsPerMinute: 1 });
    const { token, patron } = await login(t);
    await t.app.request(`/core/${patron}`, { headers: bearer(token) });
    const limited = await t.app.request(`/core/${patron}?suppress_response_codes=1`, { headers: bearer(token) });
    expect(limited.status).toBe(200);
    expect(await json(limited)).toMatchObject({ error: 'service_unavailable', code: 429 });
  });

  it('a patron holds at most maxSessionsPerPatron sessions: the least recently used ends (here the first: none was used since)', async () => {
    const t = makeApp({ sessions: new LruSessionStore({ maxSessions: 100, maxSessionsPerPatron: 2 }) });
    const [first, second, third] = [await login(t), await login(t), await login(t)];
    expect((await t.app.request(`/core/${first.patron}`, { headers: bearer(first.token) })).status).toBe(401);
    expect((await t.app.request(`/core/${first.patron}`, { headers: bearer(second.token) })).status).toBe(200);
    expect((await t.app.request(`/core/${first.patron}`, { headers: bearer(third.token) })).status).toBe(200);
  });

  it('logout ends only the token used by default, every token of the patron with logoutAllSessions', async () => {
    for (const all of [false, true]) {
      const t = makeApp({ logoutAllSessions: all });
      const a = await login(t);
      const b = await login(t);
      const other = await login(t, 'emile', 'émile-pass');
      expect((await t.app.request('/auth/logout', jsonPost({ patron: a.patron }, bearer(a.token)))).status).toBe(200);
      expect((await t.app.request(`/core/${a.patron}`, { headers: bearer(a.token) })).status).toBe(401);
      expect((await t.app.request(`/core/${b.patron}`, { headers: bearer(b.token) })).status).toBe(all ? 401 : 200);
      expect((await t.app.request(`/core/${other.patron}`, { headers: bearer(other.token) })).status).toBe(200);
    }
  });
});

describe('input limits', () => {
  it('a request target longer than maxUrlBytes: 414 invalid_request saying the limit', async () => {
    const t = makeApp({ maxUrlBytes: 300 });
    const long = await t.app.request(`/core/alice?x=${'a'.repeat(300)}`);
    expect(long.status).toBe(414);
    expect(long.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await json(long)).toMatchObject({
      error: 'invalid_request',
      code: 414,
      error_description: expect.stringMatching(/at most 300 bytes/),
    });
    const path = await t.app.request(`/core/${'b'.repeat(400)}`);
    expect(path.status).toBe(414);
    expect((await t.app.request('/core/alice')).status).toBe(401); // short ones go on as before
  });

  it('JSON nested deeper than 16 levels: 400 invalid_request before parsing; 16 levels parse (and fail the schema: 422)', async () => {
    const t = makeApp();
    const { token, patron } = await login(t);
    const nest = (depth: number) => `{"doc":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    const deep = await t.app.request(`/core/${patron}/renew`, jsonPost(nest(17), bearer(token)));
    expect(deep.status).toBe(400);
    expect(await json(deep)).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringMatching(/too deeply: at most 16 levels/),
    });
    const ok = await t.app.request(`/core/${patron}/renew`, jsonPost(nest(16), bearer(token)));
    expect(ok.status).toBe(422);
    // brackets inside strings do not count
    const inString = await t.app.request(
      `/core/${patron}/renew`,
      jsonPost({ doc: [{ item: `${'['.repeat(100)}\\"[[` }] }, bearer(token)),
    );
    expect(inString.status).toBe(200);
    // the login form is guarded too
    const deepLogin = await t.app.request('/auth/login', jsonPost(`{"username":${'['.repeat(40)}${']'.repeat(40)}}`));
    expect(deepLogin.status).toBe(400);
    expect(t.backend.callsOf('renew')).toHaveLength(1);
  });
});
