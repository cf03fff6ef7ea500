/**
 * Several libraries behind one gateway (issue 29), served: one gateway
 * process with three libraries at {basePath}/{id} over two real simulators:
 * DE-A on one, DE-B on the other, and DE-C on DE-B's simulator but in a
 * scheduled maintenance window that is on now. Tokens, lockouts and ILS
 * trouble stay with their library; an unknown library is not_found before
 * any token is looked at; /readyz and /metrics report each library. The last
 * test kills DE-A's simulator. The second block shares one Redis between
 * two libraries: their keys are apart, so are their tokens.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { delay } from '../../src/cancel-signal.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { type RedisServer, startRedisServer } from '../helpers/redis.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

const BASE = '/paia';
const WAIT_MS = 10_000;

/** hh:mm in UTC. */
const hhmm = (date: Date): string => date.toISOString().slice(11, 16);

describe('three libraries behind one gateway, over two simulators', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paia-libraries-'));
  let simA: SimulatorProcess;
  let simB: SimulatorProcess;
  let gateway: GatewayProcess;
  const at = (library: string, path: string) => `${gateway.url}${BASE}/${library}${path}`;

  const login = async (library: string, username: string, password: string) => {
    const response = await fetch(at(library, '/auth/login'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username, password, grant_type: 'password' }),
      signal: AbortSignal.timeout(WAIT_MS),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const core = async (library: string, patron: string, token: string) => {
    const response = await fetch(at(library, `/core/${patron}`), {
      headers: { Authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(WAIT_MS),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const readyz = async () => {
    const response = await fetch(`${gateway.url}/readyz`, { signal: AbortSignal.timeout(WAIT_MS) });
    return {
      status: response.status,
      body: (await response.json()) as {
        status: string;
        reasons?: string[];
        libraries: Record<string, { status: string }>;
      },
    };
  };

  beforeAll(async () => {
    [simA, simB] = await Promise.all([
      startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] }),
      startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] }),
    ]);
    // From the current minute to two minutes on, every day, in UTC: DE-C is in maintenance for the whole file.
    const now = new Date();
    const window = {
      days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
      from: hhmm(now),
      to: hhmm(new Date(now.getTime() + 2 * 60_000)),
      timeZone: 'UTC',
    };
    const file = join(dir, 'libraries.yaml');
    writeFileSync(
      file,
      [
        'libraries:',
        '  DE-A:',
        `    sip2: { port: ${simA.port} }`,
        '  DE-B:',
        `    sip2: { port: ${simB.port} }`,
        '  DE-C:',
        `    sip2: { port: ${simB.port}, maintenance: [${JSON.stringify(window)}] }`,
        '',
      ].join('\n'),
    );
    // The top level's sip2 (host, terminal, institution) and paia come from the environment, for every library.
    gateway = await startGatewayProcess({
      sip2Port: simA.port,
      dialect: 'generic',
      args: ['--config', file],
      env: {
        PAIA_HTTP_BASE_PATH: BASE,
        PAIA_LOG_LEVEL: 'info',
        PAIA_AUTH_BRUTE_FORCE_LOCKOUT_BASE_MS: '60000',
        PAIA_AUTH_BRUTE_FORCE_MAX_SLOWDOWN_MS: '0',
        PAIA_AUTH_BRUTE_FORCE_FREE_FAILURES_PER_ADDRESS: '1000',
        PAIA_AUTH_MAX_LOGINS_PER_SECOND: '1000',
      },
    });
    // Each pool logs in on its own; until both are up, /readyz says which is not.
    const until = Date.now() + WAIT_MS;
    while (
      (await readyz()).body.libraries['DE-B']?.status !== 'ready' ||
      (await readyz()).body.libraries['DE-A']?.status !== 'ready'
    ) {
      if (Date.now() > until)
        throw new Error(`the libraries did not get ready: ${JSON.stringify((await readyz()).body)}`);
      await delay(50);
    }
  }, 30_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([simA?.stop(), simB?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('/readyz names every library and is not ready while one is not (DE-C in maintenance)', async () => {
    const { status, body } = await readyz();
    expect(status).toBe(503);
    expect(Object.keys(body.libraries)).toEqual(['DE-A', 'DE-B', 'DE-C']);
    expect(body.libraries['DE-A']).toMatchObject({ status: 'ready', sip2: { online: true } });
    expect(body.libraries['DE-B']).toMatchObject({ status: 'ready' });
    expect(body.libraries['DE-C']).toMatchObject({ status: 'not ready', maintenance: {} });
    expect(body.reasons).toEqual([expect.stringMatching(/^DE-C: scheduled maintenance of the ILS until/)]);
  });

  it('an unknown library, or none, is not_found (404) before any token is looked at', async () => {
    for (const path of [
      `${BASE}/DE-X/core/alice`,
      `${BASE}/core/alice`,
      `${BASE}/de-a/core/alice`,
      '/DE-A/core/alice',
    ]) {
      const response = await fetch(`${gateway.url}${path}`, {
        headers: { Authorization: 'Bearer not-a-token' },
        signal: AbortSignal.timeout(WAIT_MS),
      });
      expect(response.status, path).toBe(404);
      expect(response.headers.get('www-authenticate'), path).not.toContain('invalid_token');
      expect(await response.json(), path).toMatchObject({ error: 'not_found', code: 404 });
    }
  });

  it("a token of DE-A reads DE-A's account and is invalid_grant (401) at DE-B", async () => {
    const { status, body } = await login('DE-A', 'alice', 'alice-pass');
    expect(status).toBe(200);
    const token = body.access_token as string;
    const patron = body.patron as string;
    expect((await core('DE-A', patron, token)).status).toBe(200);
    const elsewhere = await core('DE-B', patron, token);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.body).toMatchObject({ error: 'invalid_grant' });
    // Its access line carries the library.
    const until = Date.now() + WAIT_MS;
    const line = () =>
      gateway
        .stdout()
        .split('\n')
        .find((text) => text.includes('"msg":"request"') && text.includes(`"${BASE}/DE-A/core/${patron}"`));
    while (line() === undefined && Date.now() < until) await delay(20);
    expect(JSON.parse(line() ?? '{}')).toMatchObject({
      library: 'DE-A',
      path: `${BASE}/DE-A/core/${patron}`,
      status: 200,
    });
  });

  it("DE-C's maintenance window makes only DE-C's calls 503", async () => {
    const [a, b, c] = await Promise.all([
      login('DE-A', 'alice', 'alice-pass'),
      login('DE-B', 'alice', 'alice-pass'),
      login('DE-C', 'alice', 'alice-pass'),
    ]);
    expect([a.status, b.status, c.status]).toEqual([200, 200, 503]);
    expect(c.body).toMatchObject({ error: 'service_unavailable' });
  });

  it('a lockout at DE-A does not lock the same username at DE-B', async () => {
    for (let i = 0; i < 5; i++) expect((await login('DE-A', 'gina', `wrong-${i}`)).status).toBe(403);
    expect((await login('DE-A', 'gina', 'gina-pass')).status).toBe(403);
    expect((await login('DE-B', 'gina', 'gina-pass')).status).toBe(200);
  });

  it("/metrics has every library's series, labelled with its id", async () => {
    const text = await (await fetch(`${gateway.url}/metrics`, { signal: AbortSignal.timeout(WAIT_MS) })).text();
    expect(text).toMatch(/^paia_sip2_connections\{library="DE-A"\} [1-9]/m);
    expect(text).toMatch(/^paia_sip2_connections\{library="DE-B"\} [1-9]/m);
    expect(text).toMatch(/^paia_sip2_maintenance\{library="DE-C"\} 1$/m);
    expect(text).toMatch(/^paia_http_requests_total\{.*library="DE-A".*\} [1-9]/m);
    // The process's own metrics and the build, once.
    expect(text.match(/^process_resident_memory_bytes /gm)).toHaveLength(1);
    expect(text.match(/^paia_build_info\{/gm)).toHaveLength(1);
  });

  it("DE-A's simulator killed: DE-A's calls fail with 502/503/504, DE-B's answer 200 meanwhile", async () => {
    const a = await login('DE-A', 'alice', 'alice-pass');
    const b = await login('DE-B', 'alice', 'alice-pass');
    await simA.kill('SIGKILL');
    const [onA, onB] = await Promise.all([
      core('DE-A', a.body.patron as string, a.body.access_token as string),
      Promise.all(
        Array.from({ length: 5 }, () => core('DE-B', b.body.patron as string, b.body.access_token as string)),
      ),
    ]);
    expect([502, 503, 504]).toContain(onA.status);
    expect(onB.map(({ status }) => status)).toEqual([200, 200, 200, 200, 200]);
    const ready = await readyz();
    expect(ready.body.libraries['DE-A']?.status).toBe('not ready');
    expect(ready.body.libraries['DE-B']?.status).toBe('ready');
  });
});

describe('two libraries sharing one Redis', () => {
  let redis: RedisServer;
  let sim: SimulatorProcess;
  let gateway: GatewayProcess;
  const dir = mkdtempSync(join(tmpdir(), 'paia-libraries-redis-'));

  beforeAll(async () => {
    [redis, sim] = await Promise.all([
      startRedisServer(),
      startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] }),
    ]);
    const file = join(dir, 'libraries.yaml');
    writeFileSync(file, 'libraries:\n  DE-A: {}\n  DE-B: {}\n');
    gateway = await startGatewayProcess({
      sip2Port: sim.port,
      dialect: 'generic',
      args: ['--config', file],
      env: { PAIA_STATE_STORE: 'redis', PAIA_STATE_REDIS_URL: redis.url },
    });
  }, 30_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([sim?.stop(), redis?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a token of DE-A is invalid_grant at DE-B, though both keep their sessions in the same Redis', async () => {
    const login = await fetch(`${gateway.url}/DE-A/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: 'alice', password: 'alice-pass', grant_type: 'password' }),
      signal: AbortSignal.timeout(WAIT_MS),
    });
    expect(login.status).toBe(200);
    const { access_token: token, patron } = (await login.json()) as { access_token: string; patron: string };
    const read = (library: string) =>
      fetch(`${gateway.url}/${library}/core/${patron}`, {
        headers: { Authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(WAIT_MS),
      });
    expect((await read('DE-A')).status).toBe(200);
    const elsewhere = await read('DE-B');
    expect(elsewhere.status).toBe(401);
    expect(await elsewhere.json()).toMatchObject({ error: 'invalid_grant' });
  });
});
