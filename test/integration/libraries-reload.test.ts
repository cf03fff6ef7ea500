/**
 * Libraries added and removed without a restart (issue 29): one gateway
 * process with DE-A and DE-B, each on its own simulator, and a third
 * simulator for DE-C. While calls run against DE-B in a loop and one call of
 * DE-A is held in flight by its simulator's latency, the file is rewritten
 * to remove DE-A and add DE-C (whose ILS answers slower still) and the
 * gateway gets SIGHUP; then an invalid entry for DE-B, a file that does not
 * parse, a changed DE-B (its sessions stay) with an ILS nobody listens at
 * for DE-C and a new DE-D (neither is put in), and DE-B removed and added
 * back while its call in flight still drains. The tests run in order, each
 * on what the one before left; the state store is the memory store, with
 * its state directory.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { delay } from '../../src/cancel-signal.js';
import { freePort } from '../helpers/free-port.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

const WAIT_MS = 10_000;
/** How long DE-A's simulator holds each answer: the call in flight at the SIGHUP must outlast the reload. */
const SLOW_MS = 1500;
/**
 * How long DE-C's simulator holds each answer while DE-C starts (a 93 and a
 * 99): DE-C's start outlasts DE-A's call in flight, so that DE-A leaving at
 * once cannot be DE-C's start being quick.
 */
const SLOWER_MS = 1000;

describe('SIGHUP with a libraries section', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paia-libraries-reload-'));
  const file = join(dir, 'libraries.yaml');
  let simA: SimulatorProcess;
  let simB: SimulatorProcess;
  let simC: SimulatorProcess;
  let gateway: GatewayProcess;
  let tokenB: { token: string; patron: string };

  const at = (library: string, path: string) => `${gateway.url}/${library}${path}`;
  const writeLibraries = (entries: Record<string, string>) =>
    writeFileSync(
      file,
      ['libraries:', ...Object.entries(entries).flatMap(([id, sip2]) => [`  ${id}:`, `    sip2: ${sip2}`]), ''].join(
        '\n',
      ),
    );
  const login = async (library: string) => {
    const response = await fetch(at(library, '/auth/login'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: 'alice', password: 'alice-pass', grant_type: 'password' }),
      signal: AbortSignal.timeout(WAIT_MS),
    });
    expect(response.status, `login at ${library}`).toBe(200);
    const body = (await response.json()) as { access_token: string; patron: string };
    return { token: body.access_token, patron: body.patron };
  };
  const core = async (library: string, { token, patron }: { token: string; patron: string }) =>
    (
      await fetch(at(library, `/core/${patron}`), {
        headers: { Authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(WAIT_MS),
      })
    ).status;
  const readyz = async () =>
    (await (await fetch(`${gateway.url}/readyz`, { signal: AbortSignal.timeout(WAIT_MS) })).json()) as {
      libraries: Record<string, { status: string }>;
    };
  const until = async (what: string, done: () => Promise<boolean> | boolean) => {
    const end = Date.now() + WAIT_MS;
    while (!(await done())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await delay(20);
    }
  };
  const logLines = () => gateway.stdout().split('\n');
  const logged = (text: string) =>
    until(`the log line "${text}"`, () => logLines().some((line) => line.includes(text)));
  /** The status of a request no library's ILS is asked for: 401 while the library serves, 404 once it does not. */
  const probe = async (library: string) =>
    (await fetch(at(library, '/core/x'), { signal: AbortSignal.timeout(WAIT_MS) })).status;
  /** Logins at DE-B's simulator (93): an untouched library opens no new session. */
  const loginsAtB = async () => (await simB.counters()).received['93'] ?? 0;
  const summaries = () => logLines().filter((line) => line.includes('"msg":"reload: libraries reloaded"'));
  /** SIGHUP, and the summary line of the reload it starts. */
  const reload = async () => {
    const before = summaries().length;
    process.kill(gateway.pid, 'SIGHUP');
    await until('the reload summary', () => summaries().length > before);
    return JSON.parse(summaries()[before] ?? '{}') as Record<string, string[]>;
  };
  /** A call of `library` in flight at its ILS, held there by the simulator's latency; resolves with its status. */
  const holdCall = async (library: string, sim: SimulatorProcess, token: { token: string; patron: string }) => {
    await sim.setFaults({ latencyMs: SLOW_MS });
    const patronInfo = (await sim.counters()).received['63'] ?? 0;
    const call = { done: false, status: core(library, token) };
    call.status
      .finally(() => {
        call.done = true;
      })
      .catch(() => {}); // the test awaits call.status itself
    await until(
      `the call at ${library} to reach its ILS`,
      async () => ((await sim.counters()).received['63'] ?? 0) > patronInfo,
    );
    return call;
  };
  /** A library's state directory refused to this very gateway (its sessions then kept in memory only). */
  const ownLockRefused = () => logLines().filter((line) => line.includes('in use by another gateway'));

  beforeAll(async () => {
    const start = () => startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] });
    [simA, simB, simC] = await Promise.all([start(), start(), start()]);
    writeLibraries({ 'DE-A': `{ port: ${simA.port} }`, 'DE-B': `{ port: ${simB.port} }` });
    gateway = await startGatewayProcess({
      sip2Port: simA.port,
      dialect: 'generic',
      args: ['--config', file],
      // The loop against DE-B is one token's many calls: above its rate limit, it would get 429.
      env: { PAIA_LOG_LEVEL: 'info', PAIA_SIP2_POOL_MIN: '1', PAIA_AUTH_REQUESTS_PER_MINUTE: '100000' },
    });
    await until('DE-A and DE-B ready', async () => {
      const { libraries } = await readyz();
      return libraries['DE-A']?.status === 'ready' && libraries['DE-B']?.status === 'ready';
    });
    tokenB = await login('DE-B');
  }, 30_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([simA?.stop(), simB?.stop(), simC?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("removing DE-A and adding DE-C: DE-B's calls all succeed, DE-A's call in flight finishes, DE-A then 404, DE-C serves", async () => {
    const tokenA = await login('DE-A');
    const sessionsAtB = await loginsAtB();
    // DE-B under calls for the whole reload.
    let running = true;
    const statusesB: number[] = [];
    const loops = [0, 1].map(async () => {
      while (running) {
        statusesB.push(await core('DE-B', tokenB));
        await delay(10);
      }
    });
    // One call of DE-A in flight: its simulator has taken the request and holds the answer.
    const inFlightA = await holdCall('DE-A', simA, tokenA);
    await simC.setFaults({ latencyMs: SLOWER_MS });

    writeLibraries({ 'DE-B': `{ port: ${simB.port} }`, 'DE-C': `{ port: ${simC.port} }` });
    process.kill(gateway.pid, 'SIGHUP');

    // DE-A takes no new call at once, while its call in flight is still held by its ILS.
    await until('DE-A to be unknown', async () => (await probe('DE-A')) === 404);
    expect(inFlightA.done).toBe(false);
    expect(await inFlightA.status).toBe(200);
    // Then its pool closes: DE-A's simulator has no session left.
    await logged('reload: library DE-A: calls finished, SIP2 connections closed');
    await until('DE-A sessions closed', async () => (await simA.state()).connections === 0);

    await until('DE-C ready', async () => (await readyz()).libraries['DE-C']?.status === 'ready');
    await simC.setFaults({ latencyMs: 0 });
    expect(Object.keys((await readyz()).libraries)).toEqual(['DE-B', 'DE-C']);
    expect(await core('DE-C', await login('DE-C'))).toBe(200);

    running = false;
    await Promise.all(loops);
    expect(statusesB.length).toBeGreaterThan(0);
    expect(statusesB.filter((status) => status !== 200)).toEqual([]);
    // DE-B untouched: its token still valid, no new session at its ILS.
    expect(await core('DE-B', tokenB)).toBe(200);
    expect(await loginsAtB()).toBe(sessionsAtB);
    const summary = logLines().find((line) => line.includes('"msg":"reload: libraries reloaded"'));
    expect(JSON.parse(summary ?? '{}')).toMatchObject({ added: ['DE-C'], removed: ['DE-A'], unchanged: ['DE-B'] });
    // Nothing but the libraries changed in the file, so nothing is named as needing a restart.
    expect(logLines().filter((line) => line.includes('reload: not applied'))).toEqual([]);
  }, 20_000);

  it('an invalid entry for DE-B keeps DE-B as it runs, and the log names the reason', async () => {
    const sessionsAtB = await loginsAtB();
    writeLibraries({ 'DE-B': '{ port: "not a port" }', 'DE-C': `{ port: ${simC.port} }` });
    process.kill(gateway.pid, 'SIGHUP');
    await logged(
      'reload: the new configuration of library DE-B is invalid, it keeps serving with its running configuration: libraries[DE-B].sip2.port',
    );
    expect(await core('DE-B', tokenB)).toBe(200);
    expect(await loginsAtB()).toBe(sessionsAtB);
    expect(Object.keys((await readyz()).libraries)).toEqual(['DE-B', 'DE-C']);
  });

  it('a file that does not parse changes nothing', async () => {
    writeFileSync(file, 'libraries:\n  DE-B: [unclosed\n');
    process.kill(gateway.pid, 'SIGHUP');
    await logged('reload: the configuration cannot be used, nothing changed');
    expect(await core('DE-B', tokenB)).toBe(200);
    expect(Object.keys((await readyz()).libraries)).toEqual(['DE-B', 'DE-C']);
    expect(await probe('DE-A')).toBe(404);
  });

  it('a changed DE-B keeps its sessions; DE-C moved to where no ILS listens keeps running, a new DE-D there is not added', async () => {
    const nowhere = await freePort();
    writeLibraries({
      'DE-B': `{ port: ${simB.port}, pool: { max: 3 } }`,
      'DE-C': `{ port: ${nowhere} }`,
      'DE-D': `{ port: ${nowhere} }`,
    });
    const summary = await reload();
    expect(summary).toMatchObject({ added: [], replaced: ['DE-B'], failed: ['DE-D', 'DE-C'] });
    for (const [id, keeps] of [
      ['DE-C', 'it keeps serving with its running configuration'],
      ['DE-D', 'it is not added'],
    ])
      expect(
        logLines().some((line) =>
          line.includes(
            `reload: library ${id} did not start, ${keeps}: cannot log in to the ILS at 127.0.0.1:${nowhere}`,
          ),
        ),
      ).toBe(true);
    // DE-B's new parts took over its store: the token issued before is still valid, the state file still kept.
    expect(await core('DE-B', tokenB)).toBe(200);
    expect(ownLockRefused()).toEqual([]);
    const ready = await fetch(`${gateway.url}/readyz`, { signal: AbortSignal.timeout(WAIT_MS) });
    expect(ready.status).toBe(200);
    const { libraries } = (await ready.json()) as { libraries: Record<string, { store?: { warning?: string } }> };
    expect(Object.keys(libraries)).toEqual(['DE-B', 'DE-C']);
    expect(libraries['DE-B']?.store?.warning).toBeUndefined();
    expect(await core('DE-C', await login('DE-C'))).toBe(200);
  });

  it('DE-B removed and added back while its call in flight drains: the one added back has its sessions', async () => {
    writeLibraries({ 'DE-C': `{ port: ${simC.port} }` });
    const token = await login('DE-B');
    const inFlight = await holdCall('DE-B', simB, token);
    expect(await reload()).toMatchObject({ removed: ['DE-B'] });
    expect(await probe('DE-B')).toBe(404);
    // pool.min 0: DE-B is back without a login at its slow ILS, while its old parts still drain.
    writeLibraries({
      'DE-B': `{ port: ${simB.port}, pool: { min: 0, max: 3 } }`,
      'DE-C': `{ port: ${simC.port} }`,
    });
    expect(await reload()).toMatchObject({ added: ['DE-B'] });
    expect(await probe('DE-B')).toBe(401);
    expect(inFlight.done).toBe(false);
    expect(await inFlight.status).toBe(200);
    await logged('reload: library DE-B: calls finished, SIP2 connections closed');
    await simB.setFaults({ latencyMs: 0 });
    // The old parts closed, the store they shared with the new ones did not: the token is still valid.
    expect(await core('DE-B', token)).toBe(200);
    expect(ownLockRefused()).toEqual([]);
  });
});
