/**
 * The client credentials grant (issue 16): a trusted client of auth.clients
 * logs a patron in without the patron's password, with the real gateway
 * (behind a pretend proxy, so that X-Forwarded-For gives the client's
 * address) and the simulator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/auth/client-secret.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

const VUFIND_SECRET = 'vufind-secret-4f9a1c2e7b';
// With characters form encoding changes: the Basic header carries it encoded (RFC 6749) or as it is (VuFind).
const READER_SECRET = 'reader+secret%93be07d1aa';
const LOCKED_SECRET = 'locked-secret-5d2c88e0f3';
const VICTIM_SECRET = 'victim-secret-71c0e5a9d4';
const VUFIND_HOST = '192.0.2.10';
const OTHER_HOST = '203.0.113.99';
const item = (barcode: string) => `http://127.0.0.1:8080/item/${barcode}`;

interface Answer {
  status: number;
  body: Record<string, unknown>;
  retryAfter: string | null;
}

/** Basic credentials as RFC 6749, 2.3.1 has them: id and secret form-urlencoded, then joined by ":" and base64. */
function basic(id: string, secret: string): string {
  const encode = (text: string) => encodeURIComponent(text).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64')}`;
}

describe('client credentials grant (auth.clients)', () => {
  let sim: SimulatorProcess;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    sim = await startSimulatorProcess({ dialect: 'generic', extraArgs: ['--log-level', 'warn'] });
    const clients = [
      { id: 'vufind', secretEnv: 'VUFIND_CLIENT_SECRET', allowedAddresses: [VUFIND_HOST] },
      {
        id: 'reader',
        secretHash: await hashSecret(READER_SECRET, 1024),
        scopes: ['read_patron', 'read_items'],
        allowedAddresses: ['192.0.2.0/24'],
      },
      { id: 'locked', secretEnv: 'LOCKED_CLIENT_SECRET', allowedAddresses: [VUFIND_HOST] },
      { id: 'victim', secretEnv: 'VICTIM_CLIENT_SECRET', allowedAddresses: [VUFIND_HOST] },
    ];
    gateway = await startGatewayProcess({
      sip2Port: sim.port,
      dialect: 'generic',
      env: {
        PAIA_HTTP_TRUSTED_PROXY: 'true',
        PAIA_AUTH_CLIENTS: JSON.stringify(clients),
        PAIA_AUTH_BRUTE_FORCE_FREE_FAILURES_PER_USER: '2',
        PAIA_AUTH_BRUTE_FORCE_LOCKOUT_BASE_MS: '60000',
        // The tests send logins back to back; the login ceiling has tests of its own.
        PAIA_AUTH_MAX_LOGINS_PER_SECOND: '1000',
        VUFIND_CLIENT_SECRET: VUFIND_SECRET,
        LOCKED_CLIENT_SECRET: LOCKED_SECRET,
        VICTIM_CLIENT_SECRET: VICTIM_SECRET,
        PAIA_LOG_LEVEL: 'info',
      },
    });
  }, 30_000);

  afterAll(async () => {
    await gateway?.stop();
    await sim?.stop();
  });

  async function call(
    verb: 'GET' | 'POST',
    path: string,
    options: { body?: unknown; form?: Record<string, string>; authorization?: string; from?: string } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = {
      'X-Forwarded-For': options.from ?? VUFIND_HOST,
      'X-Forwarded-Proto': 'https',
    };
    if (options.authorization) headers.Authorization = options.authorization;
    let body: string | undefined;
    if (options.form) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    } else if (options.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const response = await fetch(`${gateway.url}${path}`, {
      method: verb,
      headers,
      ...(body === undefined ? {} : { body }),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await response.text();
    return {
      status: response.status,
      body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
      retryAfter: response.headers.get('retry-after'),
    };
  }

  /** A client credentials login, as VuFind's PAIA driver sends it (a JSON body; vufind-org/vufind, module/VuFind/src/VuFind/ILS/Driver/PAIA.php, paiaLogin). */
  const clientLogin = (id: string, secret: string, patron: string, extra: { scope?: string; from?: string } = {}) =>
    call('POST', '/auth/login', {
      body: { grant_type: 'client_credentials', patron, ...(extra.scope ? { scope: extra.scope } : {}) },
      authorization: basic(id, secret),
      ...(extra.from ? { from: extra.from } : {}),
    });

  const reachedIls = async () => (await sim.counters()).executed['63'] ?? 0;

  it('gives a good client a token for alice by her barcode, and the token works on every core method and on logout', async () => {
    const login = await clientLogin('vufind', VUFIND_SECRET, 'alice');
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({
      patron: 'alice',
      token_type: 'Bearer',
      scope: 'read_patron read_fees read_items write_items',
      expires_in: 3600,
    });
    const bearer = `Bearer ${login.body.access_token as string}`;
    const as = (verb: 'GET' | 'POST', method: string, body?: unknown) =>
      call(verb, `/core/alice${method}`, { authorization: bearer, ...(body ? { body } : {}) });

    const patron = await as('GET', '');
    expect(patron.status).toBe(200);
    expect(patron.body.name).toBe('Alice Example');
    const items = await as('GET', '/items');
    expect(items.status).toBe(200);
    expect((items.body.doc as { item?: string }[]).map((doc) => doc.item)).toContain(item('it-0002'));
    const fees = await as('GET', '/fees');
    expect(fees.status).toBe(200);
    expect((fees.body.fee as unknown[]).length).toBe(2);
    const renew = await as('POST', '/renew', { doc: [{ item: item('it-0002') }] });
    expect(renew.status).toBe(200);
    expect((renew.body.doc as { status: number; error?: string }[])[0]).toMatchObject({ status: 3 });
    expect((renew.body.doc as { error?: string }[])[0]?.error).toBeUndefined();
    const request = await as('POST', '/request', { doc: [{ item: item('it-0030') }] });
    expect(request.status).toBe(200);
    expect((request.body.doc as { error?: string }[])[0]?.error).toBeUndefined();
    const cancel = await as('POST', '/cancel', { doc: [{ item: item('it-0030') }] });
    expect(cancel.status).toBe(200);
    expect((cancel.body.doc as { error?: string }[])[0]?.error).toBeUndefined();

    const logout = await call('POST', '/auth/logout', { authorization: bearer, body: { patron: 'alice' } });
    expect(logout.status).toBe(200);
    expect((await as('GET', '')).status).toBe(401);
  });

  it('takes the login form-encoded too, asks the ILS once (one 63: there is no patron password to check) and never grants change_password', async () => {
    const before = await reachedIls();
    const login = await call('POST', '/auth/login', {
      form: { grant_type: 'client_credentials', patron: 'dave', scope: 'read_items change_password' },
      authorization: basic('vufind', VUFIND_SECRET),
    });
    expect(login.status).toBe(200);
    // change_password is never granted (as for a password login); the rest is.
    expect(login.body).toMatchObject({ patron: 'dave', scope: 'read_items' });
    expect(await reachedIls()).toBe(before + 1);
  });

  it('takes a secret sent in the Basic header without form encoding, as VuFind sends it', async () => {
    const raw = `Basic ${Buffer.from(`reader:${READER_SECRET}`).toString('base64')}`;
    const login = await call('POST', '/auth/login', {
      body: { grant_type: 'client_credentials', patron: 'alice' },
      authorization: raw,
    });
    expect(login.status).toBe(200);
  });

  it('caps the scopes of a blocked account (carol) as a password login does: read scopes only', async () => {
    const login = await clientLogin('vufind', VUFIND_SECRET, 'carol');
    expect(login.status).toBe(200);
    expect(login.body.scope).toBe('read_patron read_fees read_items');
  });

  it('grants a client no scope beyond its own: a scope outside them is not granted, only such scopes are refused with 422', async () => {
    const some = await clientLogin('reader', READER_SECRET, 'alice', { scope: 'read_patron write_items read_fees' });
    expect(some.status).toBe(200);
    expect(some.body.scope).toBe('read_patron');
    const renew = await call('POST', '/core/alice/renew', {
      authorization: `Bearer ${some.body.access_token as string}`,
      body: { doc: [{ item: item('it-0002') }] },
    });
    expect(renew.status).toBe(403);
    expect(renew.body.error).toBe('insufficient_scope');

    const none = await clientLogin('reader', READER_SECRET, 'alice', { scope: 'write_items' });
    expect(none.status).toBe(422);
    expect(none.body.error_description).toMatch(/read_patron read_items/);
    // Without a scope the client's own scopes: never the four core ones.
    const unasked = await clientLogin('reader', READER_SECRET, 'alice');
    expect(unasked.body.scope).toBe('read_patron read_items');
  });

  it('answers a client from an address it may not log in from as an unknown client, whether its secret is right or not, and never asks the ILS', async () => {
    const before = await reachedIls();
    const right = await clientLogin('vufind', VUFIND_SECRET, 'alice', { from: OTHER_HOST });
    expect(right.status).toBe(403);
    expect(right.body.error).toBe('access_denied');
    expect(right.body.access_token).toBeUndefined();
    const wrong = await clientLogin('vufind', 'a-guess-0000000000', 'alice', { from: OTHER_HOST });
    const unknown = await clientLogin('nobody-here', 'a-guess-0000000000', 'alice', { from: OTHER_HOST });
    // The same body: nothing tells a known client id from an unknown one, from any address.
    expect(wrong).toEqual(right);
    expect(unknown).toEqual(right);
    expect(await reachedIls()).toBe(before);
  });

  it('keeps a client working while someone locks every folding of client<id> out with wrong password logins', async () => {
    const variants = ['clientvictim', 'CLIENTVICTIM', 'ｃlientvictim', 'client\u200bvictim', 'Clientvíctim'];
    const answers: number[] = [];
    for (let i = 0; i < 8; i++) {
      const username = variants[i % variants.length] as string;
      const answer = await call('POST', '/auth/login', {
        body: { username, password: `wrong-password-${i}`, grant_type: 'password' },
        from: OTHER_HOST,
      });
      answers.push(answer.status);
    }
    expect(answers).toEqual(Array(8).fill(403));
    // The username folding those spellings share is locked now ...
    const folded = await call('POST', '/auth/login', {
      body: { username: 'clientvictim', password: 'wrong-password-x', grant_type: 'password' },
      from: OTHER_HOST,
    });
    expect(Number(folded.retryAfter)).toBeGreaterThanOrEqual(1);
    // ... and the client of that name logs patrons in as before.
    const login = await clientLogin('victim', VICTIM_SECRET, 'alice');
    expect(login.status).toBe(200);
  });

  it('never locks a client out through wrong secrets from outside its addresses', async () => {
    for (let i = 0; i < 4; i++) {
      expect((await clientLogin('victim', `outside-guess-${i}-000000`, 'alice', { from: OTHER_HOST })).status).toBe(
        403,
      );
    }
    const elsewhere = await clientLogin('victim', VICTIM_SECRET, 'alice', { from: OTHER_HOST });
    expect(Number(elsewhere.retryAfter)).toBeGreaterThanOrEqual(1);
    expect((await clientLogin('victim', VICTIM_SECRET, 'alice')).status).toBe(200);
  });

  it('answers an unknown patron exactly as a wrong secret and an unknown client: 403 access_denied', async () => {
    const unknownPatron = await clientLogin('vufind', VUFIND_SECRET, 'no-such-patron');
    const wrongSecret = await clientLogin('reader', 'wrong-secret-000000000', 'alice');
    const unknownClient = await clientLogin('nobody', VUFIND_SECRET, 'alice');
    const noHeader = await call('POST', '/auth/login', { form: { grant_type: 'client_credentials', patron: 'alice' } });
    expect(unknownPatron.status).toBe(403);
    expect(unknownPatron.body.error).toBe('access_denied');
    for (const other of [wrongSecret, unknownClient, noHeader]) expect(other).toEqual(unknownPatron);
  });

  it('locks a client out after its free failed secrets: 403 with Retry-After, the right secret too, and no 63 reaches the ILS meanwhile', async () => {
    const before = await reachedIls();
    const free = [
      await clientLogin('locked', 'guess-1-000000000000', 'alice'),
      await clientLogin('locked', 'guess-2-000000000000', 'alice'),
    ];
    for (const answer of free) {
      expect(answer.status).toBe(403);
      expect(answer.retryAfter).toBeNull();
    }
    const locked = await clientLogin('locked', 'guess-3-000000000000', 'alice');
    expect(locked.status).toBe(403);
    expect(Number(locked.retryAfter)).toBeGreaterThanOrEqual(1);
    const right = await clientLogin('locked', LOCKED_SECRET, 'alice');
    expect(right.status).toBe(403);
    expect(Number(right.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(right.body.access_token).toBeUndefined();
    // Wrong secrets never reach the ILS; neither does a locked client.
    expect(await reachedIls()).toBe(before);
    // Other clients are not locked with it.
    expect((await clientLogin('vufind', VUFIND_SECRET, 'alice')).status).toBe(200);
    // The log names the client, and that it was locked by failures from its own addresses.
    expect(gateway.stdout()).toContain(
      'client credentials lockout: client \\"locked\\" locked for 60 s after 2 failed logins from its addresses',
    );
  });

  it('never writes a client secret or the Basic header into its log', () => {
    const log = gateway.stdout() + gateway.stderr();
    expect(log).toMatch(/client credentials login/);
    for (const secret of [VUFIND_SECRET, READER_SECRET, LOCKED_SECRET, 'guess-3-000000000000']) {
      expect(log).not.toContain(secret);
    }
    expect(log).not.toContain(basic('vufind', VUFIND_SECRET).slice(6));
  });

  it('leaves password logins as they were', async () => {
    const login = await call('POST', '/auth/login', {
      body: { username: 'alice', password: 'alice-pass', grant_type: 'password' },
    });
    expect(login.status).toBe(200);
  });
});
