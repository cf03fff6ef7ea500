/**
 * Secrets stay out of the logs (issue 5, item 6): a full flow against the real
 * gateway process at log level debug and a separate simulator process: several
 * patrons log in, tokens are used in the header and in the query, errors are
 * triggered (wrong password, lockout, weak password, expired token, logout,
 * rate limit), and then everything the gateways wrote to stdout and stderr is
 * searched for every password and token used.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

async function call(
  base: string,
  method: string,
  path: string,
  options: { token?: string; inQuery?: boolean; json?: unknown; form?: Record<string, string> } = {},
): Promise<Reply> {
  const url = new URL(path, base);
  const headers: Record<string, string> = {};
  if (options.token !== undefined) {
    if (options.inQuery) url.searchParams.set('access_token', options.token);
    else headers.Authorization = `Bearer ${options.token}`;
  }
  let body: string | undefined;
  if (options.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form !== undefined) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  }
  const response = await fetch(url, { method, headers, body });
  const text = await response.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON
  }
  return { status: response.status, body: parsed };
}

const PATRONS: Record<string, string> = {
  alice: 'alice-pass',
  bob: 'bob-pass',
  carol: 'carol-pass',
  dave: 'dave-pass',
};
const WRONG = ['wrong-Guess-7f3a', 'wrong-Guess-91bc', 'wrong-Guess-c0de'];
const WEAK = 'letmein';

let sim: SimulatorProcess;
let gateway: GatewayProcess;
let shortLived: GatewayProcess;

beforeAll(async () => {
  sim = await startSimulatorProcess({ dialect: 'generic', extraArgs: ['--log-level', 'warn'] });
  const debug = {
    PAIA_LOG_LEVEL: 'debug',
    PAIA_AUTH_BRUTE_FORCE_FREE_FAILURES_PER_USER: '2',
    PAIA_AUTH_REQUESTS_PER_MINUTE: '20',
  };
  [gateway, shortLived] = await Promise.all([
    startGatewayProcess({ sip2Port: sim.port, dialect: 'generic', env: debug }),
    startGatewayProcess({
      sip2Port: sim.port,
      dialect: 'generic',
      env: { ...debug, PAIA_AUTH_TOKEN_LIFETIME_MS: '1000' },
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([gateway?.stop(), shortLived?.stop()]);
  await sim?.stop();
});

describe('secrets in logs (gateway process at log level debug)', () => {
  it('no password and no token appears anywhere in stdout or stderr after a full flow with errors', async () => {
    const base = gateway.url;
    const tokens: string[] = [];
    const login = async (username: string, password: string, asForm = false): Promise<Reply> => {
      const fields = { username, password, grant_type: 'password' };
      const reply = asForm
        ? await call(base, 'POST', '/auth/login', { form: fields })
        : await call(base, 'POST', '/auth/login', { json: fields });
      if (typeof reply.body.access_token === 'string') tokens.push(reply.body.access_token);
      return reply;
    };

    // several patrons, JSON and form logins; tokens in header and query
    for (const [index, [username, password]] of Object.entries(PATRONS).entries()) {
      const reply = await login(username, password, index % 2 === 1);
      expect(reply.status, `${username}: ${JSON.stringify(reply.body)}`).toBe(200);
      const token = reply.body.access_token as string;
      const patron = reply.body.patron as string;
      expect((await call(base, 'GET', `/core/${patron}`, { token })).status).toBe(200);
      expect((await call(base, 'GET', `/core/${patron}/items`, { token, inQuery: true })).status).toBe(200);
      expect((await call(base, 'GET', `/core/${patron}/fees`, { token, inQuery: index % 2 === 0 })).status).toBe(200);
      const renew = await call(base, 'POST', `/core/${patron}/renew`, {
        token,
        inQuery: true,
        json: { doc: [{ item: 'https://elsewhere.example/item/1' }] },
      });
      expect([200, 403]).toContain(renew.status); // 403 insufficient_scope for a blocked account
    }
    const [alice, bob, carol] = tokens as [string, string, string];

    // errors: another patron's token, bad token, header and query disagreeing, wrong passwords, lockout, weak password
    expect((await call(base, 'GET', '/core/bob', { token: alice })).status).toBe(403);
    expect((await call(base, 'GET', `/core/alice?access_token=${bob}`, { token: alice })).status).toBe(400);
    expect((await call(base, 'GET', '/core/alice', { token: `${alice.slice(0, -1)}x` })).status).toBe(401);
    for (const wrong of WRONG) expect((await login('bob', wrong)).status).toBe(403);
    const locked = await login('bob', 'bob-pass');
    expect(locked.status).toBe(403); // locked out, right password or not
    expect((await login('alice', WEAK)).status).toBe(403);
    expect((await login('nobody-here', WRONG[0]!)).status).toBe(403);
    // the rate limit
    let limited = 0;
    for (let i = 0; i < 25; i++)
      if ((await call(base, 'GET', '/core/carol', { token: carol, inQuery: true })).status === 429) limited += 1;
    expect(limited).toBeGreaterThan(0);
    // logout, then the dead token in the query
    expect((await call(base, 'POST', '/auth/logout', { token: alice, json: { patron: 'alice' } })).status).toBe(200);
    expect((await call(base, 'GET', '/core/alice', { token: alice, inQuery: true })).status).toBe(401);

    // an expired token (the second gateway's tokens live one second)
    const short = await call(shortLived.url, 'POST', '/auth/login', {
      json: { username: 'dave', password: PATRONS.dave, grant_type: 'password' },
    });
    expect(short.status).toBe(200);
    const expiring = short.body.access_token as string;
    tokens.push(expiring);
    expect((await call(shortLived.url, 'GET', '/core/dave', { token: expiring })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expect((await call(shortLived.url, 'GET', '/core/dave', { token: expiring })).status).toBe(401);
    expect((await call(shortLived.url, 'GET', '/core/dave', { token: expiring, inQuery: true })).status).toBe(401);

    // give the processes a moment to flush their logs
    await new Promise((resolve) => setTimeout(resolve, 300));
    const output = [gateway.stdout(), gateway.stderr(), shortLived.stdout(), shortLived.stderr()].join('\n');
    // the log is really at debug and really covers the flow (else the search proves nothing)
    expect(output).toMatch(/"level":"debug"/);
    expect(output).toMatch(/login lockout/);
    expect(output.length).toBeGreaterThan(5000);

    const secrets = [...Object.values(PATRONS), ...WRONG, WEAK, 'paia-secret', ...tokens];
    expect(tokens.length).toBe(5);
    const found = secrets.filter((secret) => output.includes(secret) || output.includes(encodeURIComponent(secret)));
    expect(found, 'secrets found in the gateway output').toEqual([]);
    // nor a token's first half (a log that truncates tokens still leaks most of them)
    expect(tokens.filter((token) => output.includes(token.slice(0, 20)))).toEqual([]);
  });
});
