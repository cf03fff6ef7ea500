/**
 * Sessions as clients that never log out need them, against real gateway
 * processes and the simulator, with the default memory store (state.dir).
 *
 * VuFind's PAIA driver (vufind-org/vufind,
 * module/VuFind/src/VuFind/ILS/Driver/PAIA.php):
 * - paiaLogin() stores `access_token` in the browser's PHP session with
 *   `expires = time() + expires_in`;
 * - patronLogin() logs in again only once `$session->expires > time()` no
 *   longer holds, and otherwise reads `core/{patron}` with the stored token
 *   (paiaGetUserDetails()) on every account page;
 * - nothing in the driver calls auth/logout.
 * So a token must outlive a gateway restart, a logout must never be undone
 * by one, and the per-patron bound must never end the session a browser is
 * using. The store is below the backend: what it keeps does not depend on
 * the SIP2 dialect (the same in every dialect: test/conformance/auth.test.ts
 * runs the 12-logins case in each).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/state/tokens.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { call } from '../helpers/http-call.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

const WRITE_WAIT_MS = 5000;

async function login(gateway: GatewayProcess, username = 'alice'): Promise<string> {
  const answer = await call(gateway.url, 'POST', '/auth/login', {
    json: { username, password: `${username}-pass`, grant_type: 'password' },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return String(answer.body.access_token);
}

/** What VuFind does on every account page: GET core/{patron} with the token it keeps. */
const pageView = (gateway: GatewayProcess, token: string) => call(gateway.url, 'GET', '/core/alice', { token });

const stateFile = (gateway: GatewayProcess) => join(gateway.stateDir, 'sessions.jsonl');

/** Waits (bounded) until the state file names these tokens' hashes: what a crash can no longer lose. */
async function written(gateway: GatewayProcess, tokens: string[]): Promise<void> {
  const deadline = Date.now() + WRITE_WAIT_MS;
  const file = stateFile(gateway);
  for (;;) {
    const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
    if (tokens.every((token) => text.includes(hashToken(token)))) return;
    if (Date.now() > deadline)
      throw new Error(`the state file did not name the new sessions within ${WRITE_WAIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** paia_auth_sessions of /metrics: the live sessions of this (memory-store) gateway. */
async function liveSessions(gateway: GatewayProcess): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  const line = /^paia_auth_sessions (\d+)$/m.exec(text);
  if (!line) throw new Error('no paia_auth_sessions in /metrics');
  return Number(line[1]);
}

describe('sessions of clients that never log out (memory store, state.dir)', () => {
  const BOUND = 5;
  let sim: SimulatorProcess;
  const running: GatewayProcess[] = [];

  /** A gateway on the simulator; `stateDir` to start it on another's directory (a restart). */
  async function start(stateDir?: string, env: Record<string, string> = {}): Promise<GatewayProcess> {
    const gateway = await startGatewayProcess({
      sip2Port: sim.port,
      dialect: 'generic',
      env: {
        PAIA_AUTH_MAX_SESSIONS_PER_PATRON: String(BOUND),
        ...(stateDir === undefined ? {} : { PAIA_STATE_DIR: stateDir }),
        ...env,
      },
    });
    running.push(gateway);
    return gateway;
  }

  beforeAll(async () => {
    sim = await startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] });
  });

  afterAll(async () => {
    await Promise.all(running.map((gateway) => gateway.stop()));
    await sim?.stop();
  });

  // One chain of restarts on one directory: each step starts where the one before stopped.
  let first: GatewayProcess;
  let kept: string;
  let loggedOut: string;
  let afterCrash: GatewayProcess;

  it('graceful restart (SIGTERM, the same state.dir): the token still reads core/{patron}; a logged-out one stays dead', async () => {
    first = await start();
    kept = await login(first);
    loggedOut = await login(first);
    expect((await pageView(first, kept)).status).toBe(200);
    const logout = await call(first.url, 'POST', '/auth/logout', { token: loggedOut, json: { patron: 'alice' } });
    expect(logout.status, JSON.stringify(logout.body)).toBe(200);
    expect(await first.kill('SIGTERM')).toEqual({ code: 0, signal: null });

    const second = await start(first.stateDir);
    const page = await pageView(second, kept);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.body).toMatchObject({ name: 'Alice Example', status: 0 });
    const dead = await pageView(second, loggedOut);
    expect(dead.status).toBe(401);
    expect(dead.body.error).toBe('invalid_grant');
    await second.stop();
  });

  it('the state file: mode 0600, in a 0700 directory, with no token, barcode, username or password in clear', () => {
    const file = stateFile(first);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(first.stateDir).mode & 0o777).toBe(0o700);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain(hashToken(kept));
    expect(text).not.toContain(hashToken(loggedOut));
    for (const secret of [kept, loggedOut, 'alice', 'alice-pass']) expect(text).not.toContain(secret);
  });

  it('a crash (SIGKILL) right after a logout answered: the logout holds; sessions written before it survive', async () => {
    const gateway = await start(first.stateDir);
    const fresh = await login(gateway);
    const out = await login(gateway);
    // A crash may lose the last seconds of logins, never a logout: wait until these two were written.
    await written(gateway, [fresh, out]);
    expect((await call(gateway.url, 'POST', '/auth/logout', { token: out, json: { patron: 'alice' } })).status).toBe(
      200,
    );
    expect((await gateway.kill('SIGKILL')).signal).toBe('SIGKILL');

    afterCrash = await start(first.stateDir);
    for (const token of [kept, fresh]) expect((await pageView(afterCrash, token)).status).toBe(200);
    expect((await pageView(afterCrash, out)).status).toBe(401);
  });

  it(`a client looping logins: ${2 * BOUND} logins with auth.maxSessionsPerPatron ${BOUND}, the first used between each, keep the first and at most ${BOUND} sessions`, async () => {
    // The gateway of the step before: alice already holds two sessions there.
    const gateway = afterCrash;
    const used = await login(gateway);
    for (let round = 0; round < 2 * BOUND; round++) {
      await login(gateway);
      const page = await pageView(gateway, used);
      expect(page.status, `page view after login ${round + 2}: ${JSON.stringify(page.body)}`).toBe(200);
      expect(await liveSessions(gateway)).toBeLessThanOrEqual(BOUND);
    }
    expect(await liveSessions(gateway)).toBe(BOUND);
  });

  it('a second gateway on the directory of a running one keeps its sessions in memory only, and its /readyz says why', async () => {
    const second = await start(afterCrash.stateDir);
    const ready = await call(second.url, 'GET', '/readyz');
    expect(ready.body.store).toMatchObject({
      kind: 'memory',
      ok: true,
      warning: expect.stringMatching(
        new RegExp(`in use by another gateway \\(pid ${afterCrash.pid} on host .*memory only`),
      ),
    });
    // The first keeps the directory.
    expect(JSON.parse(readFileSync(join(afterCrash.stateDir, 'lock'), 'utf8'))).toMatchObject({ pid: afterCrash.pid });
    await second.stop();
  });
});

describe('a state file that cannot be used: the gateway starts with no sessions and says so', () => {
  let sim: SimulatorProcess;
  const running: GatewayProcess[] = [];
  const cases: Array<{ what: string; setUp: (file: string) => void; why: RegExp }> = [
    {
      what: 'corrupt',
      setUp: (file) => writeFileSync(file, '{"format":"paia-sip2 sessions","version":1,"key"\n\u0000\u0001garbage'),
      why: /it is not a session state file/,
    },
    {
      // Mode 000 stops no one who runs as root (as tests may): a directory in the file's place is unreadable to all.
      what: 'unreadable',
      setUp: (file) => mkdirSync(file),
      why: /it cannot be read \(it is a directory\)/,
    },
    {
      what: 'from another version',
      setUp: (file) =>
        writeFileSync(file, '{"format":"paia-sip2 sessions","version":2,"key":"x","count":0,"savedAt":0}\n'),
      why: /format version 2, another version of paia-sip2 wrote it/,
    },
  ];
  const started = new Map<string, GatewayProcess>();

  const root = mkdtempSync(join(tmpdir(), 'paia-sip2-bad-state-'));

  beforeAll(async () => {
    sim = await startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] });
    await Promise.all(
      cases.map(async ({ what, setUp }) => {
        const dir = join(root, what.replaceAll(' ', '-'));
        mkdirSync(dir, { mode: 0o700 });
        setUp(join(dir, 'sessions.jsonl'));
        const gateway = await startGatewayProcess({
          sip2Port: sim.port,
          dialect: 'generic',
          env: { PAIA_STATE_DIR: dir },
        });
        running.push(gateway);
        started.set(what, gateway);
      }),
    );
  });

  afterAll(async () => {
    await Promise.all(running.map((gateway) => gateway.stop()));
    await sim?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it.each(cases.map((entry) => [entry.what, entry] as const))('%s', async (what, { why }) => {
    const gateway = started.get(what)!;
    const warnings = gateway
      .stdout()
      .split('\n')
      .filter((line) => line.includes('session state file'));
    expect(warnings).toHaveLength(1);
    const { level, msg } = JSON.parse(warnings[0]!) as { level: string | number; msg: string };
    expect([40, 'warn']).toContain(level);
    expect(msg).toMatch(why);
    expect(msg).toMatch(/the gateway starts with no sessions .*it was moved to .*sessions\.jsonl\.bad/);
    expect(existsSync(join(gateway.stateDir, 'sessions.jsonl.bad'))).toBe(true);
    // It serves, and keeps its new sessions again.
    const token = await login(gateway);
    expect((await pageView(gateway, token)).status).toBe(200);
    await gateway.stop();
    expect(readFileSync(join(gateway.stateDir, 'sessions.jsonl'), 'utf8')).toContain(hashToken(token));
  });
});
