/**
 * Conformance: "Auth methods" and "Authentication" (login, logout, change,
 * access tokens, scopes, the order of checks), against the real gateway and
 * simulator processes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loginProblems, patronOnlyProblems } from './shapes.js';
import {
  CORE_SCOPES,
  DIALECTS,
  expectOk,
  expectRequestError,
  item,
  PASSWORDS,
  type Reply,
  type Session,
  scopeSet,
  useFixture,
} from './support.js';

const READ_SCOPES = ['read_fees', 'read_items', 'read_patron'];

/** Every core method: verb, path below /core/alice, the scope it checks, a body for POST. */
const CORE_METHODS: Array<{ verb: 'GET' | 'POST'; path: string; scope: string; body?: unknown }> = [
  { verb: 'GET', path: '', scope: 'read_patron' },
  { verb: 'GET', path: '/items', scope: 'read_items' },
  { verb: 'GET', path: '/fees', scope: 'read_fees' },
  // unknown URIs: document errors, so nothing changes in the library
  { verb: 'POST', path: '/renew', scope: 'write_items', body: { doc: [{ item: 'https://elsewhere.example/item/1' }] } },
  {
    verb: 'POST',
    path: '/request',
    scope: 'write_items',
    body: { doc: [{ item: 'https://elsewhere.example/item/1' }] },
  },
  {
    verb: 'POST',
    path: '/cancel',
    scope: 'write_items',
    body: { doc: [{ item: 'https://elsewhere.example/item/1' }] },
  },
];

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe.each(DIALECTS)('PAIA auth and access tokens (%s)', (dialect) => {
  // extras[0]: tokens live one second;
  // extras[1]: opaque patron identifiers;
  // extras[2]: logins only from 10.0.0.0/8 (the suite calls from 127.0.0.1);
  // extras[3]: logins only from 127.0.0.1/32
  const fx = useFixture(dialect, {}, [
    { PAIA_AUTH_TOKEN_LIFETIME_MS: '1000' },
    { PAIA_PAIA_PATRON_ID: 'opaque', PAIA_PAIA_PATRON_ID_SECRET: 'conformance-suite-secret-0123456789abcdefghij' },
    { PAIA_AUTH_ALLOWED_CLIENTS: '10.0.0.0/8' },
    { PAIA_AUTH_ALLOWED_CLIENTS: '127.0.0.1/32' },
  ]);
  let shortLived: { session: Session; at: number; fresh: Reply } | undefined;

  beforeAll(async () => {
    const { client } = fx().extras[0]!;
    const session = await client.login('alice');
    const at = Date.now();
    shortLived = { session, at, fresh: await client.get('/core/alice', { token: session.token }) };
  });

  function callCore(
    method: (typeof CORE_METHODS)[number],
    patron: string,
    options: { token?: string; tokenIn?: 'header' | 'query' } = {},
  ): Promise<Reply> {
    const { client } = fx();
    const path = `/core/${patron}${method.path}`;
    return method.verb === 'GET' ? client.get(path, options) : client.post(path, method.body, options);
  }

  // ------------------------------------------------------------ login

  it('login: POST {auth_url}/login with username, password and grant_type=password answers patron, access_token, token_type (Bearer), scope and expires_in', async () => {
    const reply = await fx().client.loginReply('alice', 'alice-pass');
    const body = expectOk(reply);
    expect(loginProblems(body)).toEqual([]);
    expect(body.patron).toBe('alice');
    // expires_in is 0..1 in the spec, but App::PAIA needs it
    expect(typeof body.expires_in).toBe('number');
    expect(body.expires_in as number).toBeGreaterThan(0);
  });

  it('login: "when scope is omitted it defaults to the four core scopes (read_patron read_fees read_items write_items)"', async () => {
    const session = await fx().client.login('alice');
    expect(scopeSet(session.scopes.join(' '))).toEqual([...CORE_SCOPES].sort());
  });

  it('login: a requested scope subset is granted, never more than requested (space-separated scope parameter)', async () => {
    const session = await fx().client.login('alice', { scope: 'read_patron read_items' });
    expect(scopeSet(session.scopes.join(' '))).toEqual(['read_items', 'read_patron']);
  });

  it('"A token with read_patron and read_items only gives read access to patron data, loans and requests, not fees" (insufficient_scope 403 for fees and writes)', async () => {
    const { client } = fx();
    const { token } = await client.login('alice', { scope: 'read_patron read_items' });
    expectOk(await client.get('/core/alice', { token }));
    expectOk(await client.get('/core/alice/items', { token }));
    expectRequestError(await client.get('/core/alice/fees', { token }), { status: 403, error: 'insufficient_scope' });
    const renewsBefore = await fx().executed('29');
    expectRequestError(await client.post('/core/alice/renew', { doc: [{ item: item('it-0002') }] }, { token }), {
      status: 403,
      error: 'insufficient_scope',
    });
    expect(await fx().executed('29')).toBe(renewsBefore);
  });

  it('login: success responses carry Cache-Control: no-store and Pragma: no-cache', async () => {
    const reply = await fx().client.loginReply('alice', 'alice-pass');
    expectOk(reply);
    expect(reply.headers.get('cache-control') ?? '').toMatch(/(^|,)\s*no-store\s*(,|$)/i);
    expect(reply.headers.get('pragma') ?? '').toMatch(/no-cache/i);
  });

  it('"An access token MUST NOT equal the password of the same user" (and each login gets its own token)', async () => {
    const { client } = fx();
    const tokens = new Set<string>();
    for (const user of ['alice', 'alice', 'bob', 'emile']) {
      const session = await client.login(user);
      expect(session.token).not.toBe(PASSWORDS[user]);
      expect(session.token).not.toContain(PASSWORDS[user]);
      tokens.add(session.token);
    }
    expect(tokens.size).toBe(4);
  });

  it('login: "Rejected credentials yield error access_denied with status 403 and a WWW-Authenticate header"', async () => {
    const reply = await fx().client.loginReply('frank', 'not-franks-password');
    expectRequestError(reply, { status: 403, error: 'access_denied', api: 'auth' });
    expect(reply.body).not.toHaveProperty('access_token');
  });

  it('login: access_denied is identical for an unknown user and a wrong password (no patron oracle)', async () => {
    const { client } = fx();
    const wrongPassword = await client.loginReply('frank', 'still-not-franks-password');
    const unknownUser = await client.loginReply('no-such-patron-4711', 'whatever-password');
    expectRequestError(wrongPassword, { status: 403, error: 'access_denied', api: 'auth' });
    expect(unknownUser.status).toBe(wrongPassword.status);
    expect(unknownUser.json).toEqual(wrongPassword.json);
    expect(unknownUser.headers.get('www-authenticate')).toBe(wrongPassword.headers.get('www-authenticate'));
  });

  it('login: an empty password is refused, never accepted as "no password" by the library system', async () => {
    const reply = await fx().client.loginReply('alice', '');
    expect([403, 422]).toContain(reply.status);
    expect(reply.body).not.toHaveProperty('access_token');
  });

  it('login: "The server MAY grant scopes other than requested (for example fewer when the account expired)": bob (expired) gets read scopes only', async () => {
    const { client } = fx();
    const bob = await client.login('bob');
    expect(bob.scopes).not.toContain('write_items');
    expect(bob.scopes).toContain('read_patron');
    expect(READ_SCOPES).toEqual(expect.arrayContaining(bob.scopes));
    const before = await fx().executed('15');
    expectRequestError(
      await client.post('/core/bob/request', { doc: [{ item: item('it-0030') }] }, { token: bob.token }),
      {
        status: 403,
        error: 'insufficient_scope',
      },
    );
    expect(await fx().executed('15')).toBe(before);
  });

  it('login: an account blocked for outstanding fees (carol) gets read scopes only', async () => {
    const { client } = fx();
    const carol = await client.login('carol');
    expect(carol.scopes).not.toContain('write_items');
    expect(READ_SCOPES).toEqual(expect.arrayContaining(carol.scopes));
    expect(carol.scopes).toContain('read_fees');
    const before = await fx().executed('29');
    expectRequestError(
      await client.post('/core/carol/renew', { doc: [{ item: item('it-0070') }] }, { token: carol.token }),
      {
        status: 403,
        error: 'insufficient_scope',
      },
    );
    expect(await fx().executed('29')).toBe(before);
  });

  it('Auth form bodies: "An auth server MAY also accept application/x-www-form-urlencoded POST bodies"', async () => {
    const reply = await fx().client.call('POST', '/auth/login', {
      form: { username: 'alice', password: 'alice-pass', grant_type: 'password', scope: 'read_patron' },
    });
    const body = expectOk(reply);
    expect(loginProblems(body)).toEqual([]);
    expect(body.scope).toBe('read_patron');
  });

  it('login: parameters that do not fit (missing password, grant_type other than "password") are invalid_request 422, without a code field (auth)', async () => {
    const { client } = fx();
    const cases = [
      { username: 'alice', grant_type: 'password' },
      { password: 'alice-pass', grant_type: 'password' },
      { username: 'alice', password: 'alice-pass' },
      { username: 'alice', password: 'alice-pass', grant_type: 'authorization_code' },
      { username: 'alice', password: 42, grant_type: 'password' },
    ];
    for (const body of cases) {
      const reply = await client.post('/auth/login', body);
      expectRequestError(reply, { status: 422, error: 'invalid_request', api: 'auth' });
    }
  });

  it('login: grant_type client_credentials where no trusted clients are configured is unsupported_grant_type 400 (RFC 6749 5.2), without a code field (auth)', async () => {
    const { client } = fx();
    for (const body of [
      { username: 'alice', password: 'alice-pass', grant_type: 'client_credentials' },
      { grant_type: 'client_credentials', patron: 'alice' },
    ]) {
      const reply = await client.post('/auth/login', body);
      expectRequestError(reply, { status: 400, error: 'unsupported_grant_type', api: 'auth' });
    }
  });

  it('"An auth server MUST protect against brute-force attacks": after repeated failures even the right password is refused for a while, with the same access_denied', async () => {
    const { client } = fx();
    let last: Reply | undefined;
    for (let i = 0; i < 6; i++) last = await client.loginReply('gina', `guess-${i}`);
    expectRequestError(last!, { status: 403, error: 'access_denied', api: 'auth' });
    const right = await client.loginReply('gina', 'gina-pass');
    expectRequestError(right, { status: 403, error: 'access_denied', api: 'auth' });
    expect(right.body).not.toHaveProperty('access_token');
  });

  it('"A username SHOULD identify one patron identifier" and "MAY equal the patron identifier (NOT RECOMMENDED)": opaque identifiers differ from the username, are stable, and address the account', async () => {
    const { client } = fx().extras[1]!;
    const first = await client.login('alice');
    const second = await client.login('alice');
    const bob = await client.login('bob');
    expect(first.patron).not.toBe('alice');
    expect(second.patron).toBe(first.patron);
    expect(bob.patron).not.toBe(first.patron);
    const patron = expectOk(await client.get(`/core/${encodeURIComponent(first.patron)}`, { token: first.token }));
    expect(patron.name).toBe('Alice Example');
    // the barcode is not an identifier of the account here
    expectRequestError(await client.get('/core/alice', { token: first.token }), {
      status: 403,
      error: 'access_denied',
    });
    const logout = expectOk(await client.post('/auth/logout', { patron: first.patron }, { token: first.token }));
    expect(logout.patron).toBe(first.patron);
  });

  it('"An auth server ... SHOULD restrict access to specific clients" (auth.allowedClients): a client outside the list gets 403 access_denied, one inside logs in', async () => {
    const refused = await fx().extras[2]!.client.loginReply('alice', PASSWORDS.alice!);
    expectRequestError(refused, { status: 403, error: 'access_denied', api: 'auth' });
    expect(refused.body).not.toHaveProperty('access_token');
    expect(String(refused.body.error_description)).toMatch(/this client is not allowed to log in/);
    expect(String(refused.body.error_description)).not.toMatch(/username or password/);
    const allowed = await fx().extras[3]!.client.login('alice');
    expectOk(await fx().extras[3]!.client.get('/core/alice', { token: allowed.token }));
  });

  // ------------------------------------------------------------ tokens

  it('"Every method except login requires an access token": without one, invalid_grant 401 with WWW-Authenticate: Bearer', async () => {
    for (const method of CORE_METHODS) {
      expectRequestError(await callCore(method, 'alice'), { status: 401, error: 'invalid_grant' });
    }
    const logout = await fx().client.post('/auth/logout', { patron: 'alice' });
    expectRequestError(logout, { status: 401, error: 'invalid_grant', api: 'auth' });
  });

  it('invalid_grant 401: "The access token was missing, invalid, or expired" (an invalid token, in header or query)', async () => {
    for (const method of CORE_METHODS) {
      expectRequestError(await callCore(method, 'alice', { token: 'AAAAinvalidtokenAAAA' }), {
        status: 401,
        error: 'invalid_grant',
      });
      expectRequestError(await callCore(method, 'alice', { token: 'AAAAinvalidtokenAAAA', tokenIn: 'query' }), {
        status: 401,
        error: 'invalid_grant',
      });
    }
  });

  it('access_token: "sent either as query parameter access_token or as HTTP header Authorization: Bearer <ACCESS_TOKEN>"', async () => {
    const { client } = fx();
    const { token } = await client.login('alice');
    const header = expectOk(await client.get('/core/alice', { token }));
    const query = expectOk(await client.get('/core/alice', { token, tokenIn: 'query' }));
    expect(query).toEqual(header);
    // the auth scheme is case-insensitive (RFC 7235)
    expectOk(await client.get('/core/alice', { headers: { Authorization: `bearer ${token}` } }));
  });

  it('access_token in both the header and the query with different values is refused as malformed (400), not silently picked', async () => {
    const { client } = fx();
    const alice = await client.login('alice');
    const bob = await client.login('bob');
    const reply = await client.get('/core/alice', { token: alice.token, query: { access_token: bob.token } });
    expectRequestError(reply, { status: 400, error: 'invalid_request' });
  });

  it('not_found: "Implementations SHOULD check authentication first": an unknown patron without a valid token is 401 invalid_grant, never 404', async () => {
    const { client } = fx();
    for (const method of CORE_METHODS) {
      expectRequestError(await callCore(method, 'no-such-patron-4711'), { status: 401, error: 'invalid_grant' });
      expectRequestError(await callCore(method, 'no-such-patron-4711', { token: 'AAAAinvalidtokenAAAA' }), {
        status: 401,
        error: 'invalid_grant',
      });
    }
    expect((await client.get('/core/no-such-patron-4711')).status).toBe(401);
  });

  it('not_found: a valid token used for another or an unknown patron id is 403 access_denied, never 404, and executes nothing', async () => {
    const { token } = await fx().client.login('alice');
    const before = { renew: await fx().executed('29'), hold: await fx().executed('15') };
    for (const patron of ['bob', 'no-such-patron-4711']) {
      for (const method of CORE_METHODS) {
        expectRequestError(await callCore(method, patron, { token }), { status: 403, error: 'access_denied' });
      }
    }
    expect({ renew: await fx().executed('29'), hold: await fx().executed('15') }).toEqual(before);
  });

  // ------------------------------------------------------------ scopes headers

  it('"A server SHOULD send on every response: X-OAuth-Scopes (scopes the token has) and X-Accepted-OAuth-Scopes (scopes the current method checks for)"', async () => {
    const { client } = fx();
    const session = await client.login('alice');
    for (const method of CORE_METHODS) {
      const reply = await callCore(method, 'alice', { token: session.token });
      expectOk(reply);
      expect(scopeSet(reply.headers.get('x-oauth-scopes')), `${reply.request}: X-OAuth-Scopes`).toEqual(
        [...CORE_SCOPES].sort(),
      );
      expect(
        scopeSet(reply.headers.get('x-accepted-oauth-scopes')),
        `${reply.request}: X-Accepted-OAuth-Scopes`,
      ).toEqual([method.scope]);
    }
    // on request errors too: a token lacking the scope, and no token at all
    const narrow = await client.login('alice', { scope: 'read_patron' });
    const denied = await client.get('/core/alice/fees', { token: narrow.token });
    expectRequestError(denied, { status: 403, error: 'insufficient_scope' });
    expect(scopeSet(denied.headers.get('x-oauth-scopes'))).toEqual(['read_patron']);
    expect(scopeSet(denied.headers.get('x-accepted-oauth-scopes'))).toEqual(['read_fees']);
    const anonymous = await client.get('/core/alice/items');
    expect(anonymous.headers.has('x-oauth-scopes')).toBe(true);
    expect(scopeSet(anonymous.headers.get('x-accepted-oauth-scopes'))).toEqual(['read_items']);
    expect(session.reply.headers.has('x-oauth-scopes')).toBe(true);
  });

  it('"A core server SHOULD NOT list change_password in X-OAuth-Scopes" (a VuFind login asking for change_password)', async () => {
    const { client } = fx();
    const vufind = await client.login('alice', {
      scope: 'read_patron read_fees read_items write_items change_password',
    });
    // change is not implemented, so change_password is not granted either
    expect(scopeSet(vufind.scopes.join(' '))).toEqual([...CORE_SCOPES].sort());
    for (const method of CORE_METHODS) {
      const reply = await callCore(method, 'alice', { token: vufind.token });
      expect(scopeSet(reply.headers.get('x-oauth-scopes')), reply.request).not.toContain('change_password');
    }
  });

  // ------------------------------------------------------------ logout, change

  it('logout: "invalidates the token used for the call, independent of its remaining lifetime" and answers the patron', async () => {
    const { client } = fx();
    const session = await client.login('alice');
    expectOk(await client.get('/core/alice', { token: session.token }));
    const logout = await client.post('/auth/logout', { patron: 'alice' }, { token: session.token });
    expect(patronOnlyProblems(expectOk(logout))).toEqual([]);
    expect(logout.body.patron).toBe('alice');
    expectRequestError(await client.get('/core/alice', { token: session.token }), {
      status: 401,
      error: 'invalid_grant',
    });
    expectRequestError(await client.post('/auth/logout', { patron: 'alice' }, { token: session.token }), {
      status: 401,
      error: 'invalid_grant',
      api: 'auth',
    });
  });

  it('logout: a form body is accepted (auth form bodies) and another session of the patron may live on', async () => {
    const { client } = fx();
    const first = await client.login('alice');
    const second = await client.login('alice');
    expectOk(await client.call('POST', '/auth/logout', { token: first.token, form: { patron: 'alice' } }));
    expectRequestError(await client.get('/core/alice', { token: first.token }), {
      status: 401,
      error: 'invalid_grant',
    });
    const other = await client.get('/core/alice', { token: second.token });
    // the server MAY invalidate other tokens of the same patron: either answer is conformant
    expect([200, 401]).toContain(other.status);
  });

  it('change: "A server MAY reject it with access_denied (403) or not_implemented (501)"; the password stays valid', async () => {
    const { client } = fx();
    const session = await client.login('alice');
    const reply = await client.post(
      '/auth/change',
      { patron: 'alice', username: 'alice', old_password: 'alice-pass', new_password: 'a-New-Passw0rd!' },
      { token: session.token },
    );
    expect([403, 501]).toContain(reply.status);
    expectRequestError(reply, {
      status: reply.status,
      error: reply.status === 501 ? 'not_implemented' : 'access_denied',
      api: 'auth',
    });
    await client.login('alice');
  });

  it('"Servers SHOULD limit token lifetime and the number of requests per minute": expires_in bounds the lifetime; past auth.requestsPerMinute a token gets 429 with Retry-After, other tokens go on', async () => {
    const { client } = await fx().extraGateway({ PAIA_AUTH_REQUESTS_PER_MINUTE: '4' });
    const session = await client.login('alice');
    expect(session.reply.body.expires_in).toBe(3600);
    for (let i = 0; i < 4; i++)
      expectOk(await client.get('/core/alice', { token: session.token, tokenIn: i % 2 === 0 ? 'header' : 'query' }));
    const limited = await client.get('/core/alice/items', { token: session.token });
    expectRequestError(limited, { status: 429, error: 'service_unavailable' });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // logout counts against the same token's budget; a fresh token is unaffected
    const other = await client.login('alice');
    expectOk(await client.get('/core/alice', { token: other.token }));
  });

  // last in the block: the token has had time to expire meanwhile
  it('invalid_grant 401: an expired access token is refused for reads and writes, and no write is executed', async () => {
    // logged in at the start of this block (so the wait overlaps the other tests)
    const { client } = fx().extras[0]!;
    const { session, at, fresh } = shortLived!;
    expect(session.reply.body.expires_in).toBe(1);
    expectOk(fresh);
    await sleep(Math.max(0, at + 2200 - Date.now()));
    const before = await fx().executed('29');
    expectRequestError(await client.get('/core/alice', { token: session.token }), {
      status: 401,
      error: 'invalid_grant',
    });
    expectRequestError(
      await client.post('/core/alice/renew', { doc: [{ item: item('it-0002') }] }, { token: session.token }),
      {
        status: 401,
        error: 'invalid_grant',
      },
    );
    expect(await fx().executed('29')).toBe(before);
  });

  // VuFind (PAIA.php): paiaLogin() keeps access_token in each browser's session for expires_in, patronLogin() reads
  // core/{patron} with it on every account page (paiaGetUserDetails()) and logs in again only once it expired;
  // nothing calls auth/logout. So every browser of a patron adds a token, and all of them stay in use.
  it('a patron who never logs out (VuFind): 12 logins in a row, the first session used between each, leave the first working', async () => {
    const { client } = fx();
    const first = await client.login('dave');
    for (let login = 2; login <= 12; login++) {
      await client.login('dave');
      const page = await client.get('/core/dave', { token: first.token });
      expect(page.status, `page view with the first token after login ${login}: ${page.text}`).toBe(200);
    }
  });
});
