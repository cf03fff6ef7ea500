/**
 * `serve --workers 2`: a primary process and two workers (node:cluster) on
 * one port, sessions and limits in a real Redis (redis-server), the SIP2
 * simulator as a separate process. Which worker answered a request is read
 * from the access-log lines: pino stamps every line with its process's pid,
 * and the primary logs the workers' pids when they all listen.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { withoutSettings } from '../../src/config/index.js';
import { isRunning } from '../helpers/children.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { sendOnOwnConnection as send } from '../helpers/http-call.js';
import { type RedisServer, startRedisServer } from '../helpers/redis.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

async function login(gateway: GatewayProcess): Promise<string> {
  const answer = await send(`${gateway.url}/auth/login`, {
    method: 'POST',
    json: { username: 'alice', password: 'alice-pass', grant_type: 'password' },
  });
  expect(answer.status, answer.body).toBe(200);
  return (JSON.parse(answer.body) as { access_token: string }).access_token;
}

interface LogLine {
  pid: number;
  msg: string;
  [field: string]: unknown;
}

/** The JSON log lines on the gateway's stdout (primary and workers write to the same stream). */
function logLines(gateway: GatewayProcess): LogLine[] {
  return gateway
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `found` until it returns something (at most 10 s). */
async function waitFor<T>(found: () => T | null, what = 'the awaited output'): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = found();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`no ${what} within 10 s`);
    await sleep(50);
  }
}

/** Waits (at most 10 s) until the log has lines that `enough` accepts; lines come a little after what they tell of. */
async function waitForLines(
  gateway: GatewayProcess,
  pick: (line: LogLine) => boolean,
  enough: (lines: LogLine[]) => boolean,
  what: string,
): Promise<LogLine[]> {
  try {
    return await waitFor(() => {
      const lines = logLines(gateway).filter(pick);
      return enough(lines) ? lines : null;
    }, `${what} in the log`);
  } catch (error) {
    throw new Error(`${(error as Error).message}:\n${gateway.stdout().slice(-5000)}`);
  }
}

/** The pids the primary logged once every worker listened (its log line may come after the listening line). */
async function workerPids(gateway: GatewayProcess): Promise<number[]> {
  const [started] = await waitForLines(
    gateway,
    (line) => line.msg === 'paia-sip2 started with workers',
    (lines) => lines.length > 0,
    "the primary's start line",
  );
  return started!.pids as number[];
}

/** Each worker's "paia-sip2 started" line. */
const workerStartLines = (gateway: GatewayProcess) =>
  waitForLines(
    gateway,
    (line) => line.msg === 'paia-sip2 started',
    (lines) => lines.length === 2,
    "two workers' start lines",
  );

/** Access-log lines of GET /core/alice requests: which process answered each. */
const isPatronRequest = (line: LogLine) => line.msg === 'request' && line.path === '/core/alice';

describe('serve --workers 2 with the Redis store', () => {
  let redis: RedisServer;
  let sim: SimulatorProcess;
  let gateway: GatewayProcess | undefined;

  beforeAll(async () => {
    [redis, sim] = await Promise.all([
      startRedisServer(),
      startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] }),
    ]);
  });

  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
    await sim.clearFaults();
  });

  afterAll(async () => {
    await Promise.all([sim?.stop(), redis?.close()]);
  });

  const start = async (env: Record<string, string> = {}, sip2Port: number | null = sim.port) => {
    gateway = await startGatewayProcess({
      sip2Port,
      dialect: 'generic',
      args: ['--workers', '2'],
      env: {
        PAIA_LOG_LEVEL: 'info',
        PAIA_STATE_STORE: 'redis',
        PAIA_STATE_REDIS_URL: redis.url,
        // Each test its own keys in the one Redis.
        PAIA_STATE_REDIS_KEY_PREFIX: `workers-test-${Date.now()}:`,
        ...env,
      },
    });
    return gateway;
  };

  it('starts two worker processes on one port and prints the listening line once, when both listen', async () => {
    const g = await start();
    const pids = await workerPids(g);
    expect(pids).toHaveLength(2);
    expect(new Set(pids).size).toBe(2);
    expect(pids).not.toContain(g.pid);
    expect(g.stdout().match(/^paia-sip2 listening on /gm)).toHaveLength(1);
    // Each worker started its own gateway on the one URL the primary printed.
    const started = await workerStartLines(g);
    expect(started.map((line) => line.pid).sort()).toEqual([...pids].sort());
    for (const line of started) expect(line.url).toBe(g.url);
    const healthz = await send(`${g.url}/healthz`);
    expect(healthz.status).toBe(200);
  });

  it('a token from one login is accepted on every request, whichever worker takes it', async () => {
    const g = await start();
    const pids = await workerPids(g);
    const token = await login(g);
    const loginLine = await waitForLines(
      g,
      (line) => line.msg === 'request' && line.path === '/auth/login',
      (lines) => lines.length === 1,
      'access-log line of the login',
    );

    const answers = await Promise.all(
      Array.from({ length: 30 }, async (_, index) => {
        await sleep(index * 10);
        return send(`${g.url}/core/alice`, { token });
      }),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(30).fill(200));

    const served = await waitForLines(g, isPatronRequest, (lines) => lines.length === 30, '30 access-log lines');
    expect(served.every((line) => line.status === 200)).toBe(true);
    // Both workers answered with the one token, so one of them accepted a token the other issued.
    expect(new Set(served.map((line) => line.pid))).toEqual(new Set(pids));
    expect(served.some((line) => line.pid !== loginLine[0]!.pid)).toBe(true);
  });

  it('SIGTERM to the primary: both workers drain, the primary exits 0 and no worker is left', async () => {
    const g = await start();
    const pids = await workerPids(g);
    const token = await login(g);
    expect((await send(`${g.url}/core/alice`, { token })).status).toBe(200);

    const exit = await g.kill('SIGTERM');
    expect(exit).toEqual({ code: 0, signal: null });
    for (const pid of pids) expect(isRunning(pid), `worker ${pid}`).toBe(false);
    const complete = logLines(g).filter((line) => line.msg === 'shutdown: complete');
    expect(complete.map((line) => line.pid).sort()).toEqual([...pids, g.pid].sort());
  });

  it('SIGTERM while a request outlasts http.shutdownTimeoutMs: the worker drops it and the primary exits 1', async () => {
    const g = await start({ PAIA_HTTP_SHUTDOWN_TIMEOUT_MS: '500' });
    const pids = await workerPids(g);
    const token = await login(g);
    await sim.setFaults({ latencyMs: 5000 });
    const held = send(`${g.url}/core/alice`, { token }).catch((error: Error) => error);
    // Let the request reach the simulator, where the latency holds it.
    await sleep(300);

    const exit = await g.kill('SIGTERM');
    expect(exit).toEqual({ code: 1, signal: null });
    expect(await held).toBeInstanceOf(Error);
    for (const pid of pids) expect(isRunning(pid), `worker ${pid}`).toBe(false);
    expect(g.stdout()).toContain('shutdown: not done within http.shutdownTimeoutMs');
  });

  it('SIGTERM then SIGINT to the primary: the second signal ends the drain at once with 130, and no worker is left', async () => {
    const g = await start({ PAIA_HTTP_SHUTDOWN_TIMEOUT_MS: '20000' });
    const pids = await workerPids(g);
    const token = await login(g);
    await sim.setFaults({ latencyMs: 8000 });
    const held = send(`${g.url}/core/alice`, { token }).catch((error: Error) => error);
    await sleep(300);

    const exit = g.kill('SIGTERM');
    await waitForLines(
      g,
      (line) => line.msg === 'shutdown: the primary passed a signal on; draining (a second signal exits at once)',
      (lines) => lines.length === 2,
      "both workers' drain lines",
    );
    process.kill(g.pid, 'SIGINT');
    const started = Date.now();
    expect(await exit).toEqual({ code: 130, signal: null });
    // Far below the 8 s the held request would take and the 20 s bound.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await held).toBeInstanceOf(Error);
    await waitFor(() => (pids.some(isRunning) ? null : true), 'the workers gone');
  });

  it('SIGHUP to the primary is passed on to every worker, and nothing stops', async () => {
    const g = await start();
    const pids = await workerPids(g);
    process.kill(g.pid, 'SIGHUP');
    // Plain HTTP here: each worker says it has no certificate to reload, which shows the SIGHUP reached it.
    const reloads = await waitForLines(
      g,
      (line) => line.msg === 'SIGHUP: no http.tls configured (plain HTTP); nothing to reload',
      (lines) => lines.length === 2,
      "both workers' reload lines",
    );
    expect(reloads.map((line) => line.pid).sort()).toEqual([...pids].sort());
    expect((await send(`${g.url}/healthz`)).status).toBe(200);
    expect(pids.every(isRunning)).toBe(true);
  });

  it('a worker killed with SIGKILL is replaced, and the other answers meanwhile', async () => {
    const g = await start();
    const [victim, survivor] = (await workerPids(g)) as [number, number];
    const token = await login(g);

    process.kill(victim, 'SIGKILL');
    await waitForLines(
      g,
      (line) => line.msg === 'worker died; starting a replacement' && line.workerPid === victim,
      (lines) => lines.length === 1,
      "the primary's line about the dead worker",
    );
    const meanwhile = await Promise.all(Array.from({ length: 6 }, () => send(`${g.url}/core/alice`, { token })));
    expect(meanwhile.map((answer) => answer.status)).toEqual(Array(6).fill(200));

    const [replaced] = await waitForLines(
      g,
      (line) => line.msg === 'replacement worker listening',
      (lines) => lines.length === 1,
      'the replacement worker listening',
    );
    const replacement = replaced!.workerPid as number;
    expect([victim, survivor]).not.toContain(replacement);
    expect(isRunning(victim)).toBe(false);

    const before = logLines(g).filter(isPatronRequest).length;
    const answers = await Promise.all(
      Array.from({ length: 20 }, async (_, index) => {
        await sleep(index * 10);
        return send(`${g.url}/core/alice`, { token });
      }),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    const served = (
      await waitForLines(g, isPatronRequest, (lines) => lines.length === before + 20, 'the access-log lines')
    ).slice(before);
    expect(new Set(served.map((line) => line.pid))).toEqual(new Set([survivor, replacement]));
  });

  it('demo mode: the primary runs the one embedded simulator and both workers use it', async () => {
    const g = await start({}, null);
    const pids = await workerPids(g);
    // Printed right after the listening line.
    const demo = await waitFor(() => /^demo mode: embedded SIP2 simulator on (127\.0\.0\.1:\d+),/m.exec(g.stdout()));
    const started = await workerStartLines(g);
    expect(started.map((line) => line.pid).sort()).toEqual([...pids].sort());
    for (const line of started) expect(line).toMatchObject({ sip2: demo[1], demo: true });
    // The simulator's own lines come from the primary.
    const simulatorUp = logLines(g).filter((line) => line.msg === 'SIP2 listener up');
    expect(simulatorUp.map((line) => line.pid)).toEqual([g.pid]);
    const token = await login(g);
    const answers = await Promise.all(Array.from({ length: 6 }, () => send(`${g.url}/core/alice`, { token })));
    expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(200));
  });
});

describe('serve --workers 2 with the memory store', () => {
  it('is refused at start with exit code 2 and the reason', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--workers', '2'], {
      cwd: REPO_ROOT,
      env: { ...withoutSettings(process.env), PAIA_HTTP_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(timer);
    expect(code).toBe(2);
    expect(stdout).not.toContain('listening');
    expect(stderr).toContain(
      'http.workers: must be 1 while state.store is "memory": each worker would keep its own sessions and counters, so a token issued by one worker would be unknown to the next; set state.store to "redis" (and state.redis.url) to run several workers (got 2, from --workers)',
    );
  });
});
