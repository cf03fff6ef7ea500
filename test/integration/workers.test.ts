/**
 * `serve --workers 2`: a primary process that listens and two workers
 * (node:cluster) it hands the connections to, sessions and limits in a real
 * Redis (redis-server), the SIP2 simulator as a separate process. Which
 * worker answered a request is read from the access-log lines: pino stamps
 * every line with its process's pid, and the primary logs the workers' pids
 * when they are all ready.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { withoutSettings } from '../../src/config/index.js';
import { makeTestCerts } from '../helpers/certs.js';
import { isRunning } from '../helpers/children.js';
import { sourceEntry } from '../helpers/entry-points.js';
import type { GatewayProcess } from '../helpers/gateway.js';
import { sendOnOwnConnection as send } from '../helpers/http-call.js';
import { openSocket, raw } from '../helpers/raw-http.js';
import { type RedisServer, startRedisServer } from '../helpers/redis.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';
import { type LogLine, logLines, startWorkersGateway } from '../helpers/workers.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

async function login(gateway: GatewayProcess): Promise<string> {
  const answer = await send(`${gateway.url}/auth/login`, {
    method: 'POST',
    json: { username: 'alice', password: 'alice-pass', grant_type: 'password' },
  });
  expect(answer.status, answer.body).toBe(200);
  return (JSON.parse(answer.body) as { access_token: string }).access_token;
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
    // Without the access-log lines, which a request loop would fill the excerpt with.
    const events = gateway
      .stdout()
      .split('\n')
      .filter((line) => !line.includes('"msg":"request"'))
      .join('\n');
    throw new Error(`${(error as Error).message}:\n${events.slice(-5000)}`);
  }
}

/** The pids the primary logged once every worker was ready (its log line may come after the listening line). */
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

/** The primary's line when a replacement worker is ready (one per replacement). */
const isReplacementReady = (line: LogLine) => line.msg === 'replacement worker ready';

/** Waits for the primary's line that a replacement worker is ready, one whose pid is none of `known`; its pid. */
async function replacementPid(gateway: GatewayProcess, known: number[]): Promise<number> {
  const [ready] = await waitForLines(
    gateway,
    (line) => isReplacementReady(line) && !known.includes(line.workerPid as number),
    (lines) => lines.length > 0,
    'a new replacement worker ready',
  );
  return ready!.workerPid as number;
}

/** One request of a loop: when it started, how long it took, and its status or why there was none. */
interface Attempt {
  startedAt: number;
  ms: number;
  /** The HTTP status; "connection error" when the connection was reset or closed; "no answer" when the client gave up. */
  outcome: number | 'connection error' | 'no answer';
  body: string;
}

/** GET /core/alice on a connection of its own; the client gives up after `timeoutMs`. */
async function attempt(gateway: GatewayProcess, token: string, timeoutMs: number): Promise<Attempt> {
  const startedAt = Date.now();
  try {
    const answer = await send(`${gateway.url}/core/alice`, { token, timeoutMs });
    return { startedAt, ms: Date.now() - startedAt, outcome: answer.status, body: answer.body };
  } catch (error) {
    const message = (error as Error).message;
    const outcome = message.startsWith('no answer within') ? 'no answer' : 'connection error';
    return { startedAt, ms: Date.now() - startedAt, outcome, body: message };
  }
}

/**
 * Clients that each send one request after the other, every one on a new
 * connection (as a red team's loop does), until stop(); stop() resolves with
 * every attempt once the last ones ended (each is bounded by its own timeout).
 */
function requestLoop(clients: number, request: () => Promise<Attempt>) {
  let running = true;
  const attempts: Attempt[] = [];
  const done = Promise.all(
    Array.from({ length: clients }, async () => {
      while (running) {
        attempts.push(await request());
        // A short pause: a steady stream, not a flood that measures the machine.
        await sleep(10);
      }
    }),
  );
  return {
    attempts,
    async stop(): Promise<Attempt[]> {
      running = false;
      await done;
      return attempts;
    },
  };
}

/** What a loop saw, for the failure messages: how many of each outcome, and the longest wait. */
function summary(attempts: Attempt[]): string {
  const counts = new Map<string, number>();
  for (const each of attempts) counts.set(String(each.outcome), (counts.get(String(each.outcome)) ?? 0) + 1);
  const longest = Math.max(0, ...attempts.map((each) => each.ms));
  return `${attempts.length} requests: ${[...counts].map(([outcome, n]) => `${n} × ${outcome}`).join(', ')}; longest ${longest} ms`;
}

/** Whether a new TCP connection to `url` is refused. */
function connectionRefused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/** GET `path` over HTTPS on a connection of its own, trusting `ca`: the status and the certificate the server showed. */
function httpsGet(url: string, ca: string): Promise<{ status: number; fingerprint256: string }> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(url, { agent: false, ca: readFileSync(ca), timeout: 10_000 }, (response) => {
      const fingerprint256 = (response.socket as TLSSocket).getPeerCertificate().fingerprint256;
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, fingerprint256 }));
    });
    request.on('timeout', () => request.destroy(new Error('no answer within 10 s')));
    request.on('error', reject);
    request.end();
  });
}

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
    // Each test its own keys in the one Redis.
    gateway = await startWorkersGateway({
      sip2Port,
      redisUrl: redis.url,
      keyPrefix: `workers-test-${Date.now()}:`,
      env,
    });
    return gateway;
  };

  it('starts two worker processes behind one port and prints the listening line once, when both are ready', async () => {
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

  it('SIGTERM with requests in flight: the primary refuses new connections at once, the workers answer what they hold (Connection: close), exit 0', async () => {
    // Logged-in SIP2 connections before the latency fault: each request then costs one held round trip.
    const g = await start({ PAIA_HTTP_SHUTDOWN_TIMEOUT_MS: '15000', PAIA_SIP2_POOL_MIN: '2' });
    const pids = await workerPids(g);
    const token = await login(g);
    await sim.setFaults({ latencyMs: 1500 });
    const inFlight = Array.from({ length: 4 }, () => send(`${g.url}/core/alice`, { token }));
    // A login whose body comes only after the signal: its worker's drain must wait for the connection itself.
    const body = JSON.stringify({ username: 'alice', password: 'alice-pass', grant_type: 'password' });
    let sendBody: () => void = () => {};
    const slowLogin = raw(g.url, (socket) => {
      socket.write(
        `POST /auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      sendBody = () => socket.write(body);
    });
    await sleep(300);

    const exit = g.kill('SIGTERM');
    await sleep(200);
    expect(await connectionRefused(g.url)).toBe(true);
    await sleep(300);
    sendBody();
    const answers = await Promise.all(inFlight);
    for (const answer of answers) {
      expect(answer.status, answer.body).toBe(200);
      expect(answer.headers.connection).toBe('close');
    }
    const loginAnswer = await slowLogin;
    expect(loginAnswer.text).toMatch(/^HTTP\/1\.1 200 /);
    expect(loginAnswer.text).toMatch(/\r\nconnection: close\r\n/i);
    expect(await exit).toEqual({ code: 0, signal: null });
    // Both workers held some of them.
    const served = logLines(g).filter(isPatronRequest);
    expect(new Set(served.map((line) => line.pid))).toEqual(new Set(pids));
  });

  it("the HTTP server's own limits hold on handed-over connections: a slow request head gets 408, one beyond a worker's per-address cap 503", async () => {
    const g = await start({ PAIA_HTTP_HEADERS_TIMEOUT_MS: '1000', PAIA_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '1' });
    await workerPids(g);
    const slow = await raw(g.url, (socket) => {
      socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      // One more header line every 300 ms, never the blank line: a slow head.
      const drip = setInterval(() => socket.writable && socket.write('X-Slow: 1\r\n'), 300);
      socket.once('close', () => clearInterval(drip));
    });
    expect(slow.text).toMatch(/^HTTP\/1\.1 408 /);

    // One idle connection for each worker (they go in turn), then a third: over its worker's cap of 1.
    const held = [await openSocket(g.url), await openSocket(g.url)];
    try {
      await sleep(300);
      const refused = await raw(g.url, (socket) => socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
      expect(refused.text).toMatch(/^HTTP\/1\.1 503 /);
      expect(refused.text).toContain('too many connections are open');
    } finally {
      for (const socket of held) socket.destroy();
    }
  });

  it('over HTTPS: both workers serve the connections the primary hands them, and SIGHUP reloads the certificate in each', async () => {
    const certs = makeTestCerts();
    try {
      // The gateway reads copies, which the test overwrites as a certificate renewal would.
      const cert = join(certs.dir, 'live.crt');
      const key = join(certs.dir, 'live.key');
      copyFileSync(certs.server.cert, cert);
      copyFileSync(certs.server.key, key);
      const g = await start({ PAIA_HTTP_TLS_CERT: cert, PAIA_HTTP_TLS_KEY: key });
      const pids = await workerPids(g);
      expect(g.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      for (const line of await workerStartLines(g)) expect(line.url).toBe(g.url);
      const before = await Promise.all([1, 2, 3, 4].map(() => httpsGet(`${g.url}/healthz`, certs.ca)));
      expect(before).toEqual(Array(4).fill({ status: 200, fingerprint256: certs.server.fingerprint256 }));

      copyFileSync(certs.second.cert, cert);
      copyFileSync(certs.second.key, key);
      process.kill(g.pid, 'SIGHUP');
      const reloads = await waitForLines(
        g,
        (line) => line.msg === 'TLS certificate reloaded; new connections use it, open connections keep theirs',
        (lines) => lines.length === 2,
        "both workers' reload lines",
      );
      expect(reloads.map((line) => line.pid).sort()).toEqual([...pids].sort());
      // Fresh connections go to both workers in turn: every one shows the new certificate.
      const after = await Promise.all([1, 2, 3, 4].map(() => httpsGet(`${g.url}/healthz`, certs.ca)));
      expect(after).toEqual(Array(4).fill({ status: 200, fingerprint256: certs.second.fingerprint256 }));
    } finally {
      certs.cleanup();
    }
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
      isReplacementReady,
      (lines) => lines.length === 1,
      'the replacement worker ready',
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

  it('SIGKILL to a worker, four times, under a stream of new connections: each gets an answer or a connection error within http.requestTimeoutMs, and the survivor and the replacements serve afterwards', async () => {
    const g = await start({ PAIA_HTTP_REQUEST_TIMEOUT_MS: '3000', PAIA_AUTH_REQUESTS_PER_MINUTE: '100000' });
    let pids = await workerPids(g);
    // Every worker pid so far: a replacement is one none of them has. (The current ones alone would let the third
    // round take the first replacement's old "ready" line, for a worker killed since, whenever the log still holds it.)
    const seen = [...pids];
    const token = await login(g);
    const loop = requestLoop(3, () => attempt(g, token, 3000));
    const kills = 4;
    for (let round = 0; round < kills; round += 1) {
      // Both workers take connections of the loop before the next kill.
      await sleep(700);
      const victim = pids[round % 2] as number;
      process.kill(victim, 'SIGKILL');
      const replacement = await replacementPid(g, seen);
      seen.push(replacement);
      pids = pids.map((pid) => (pid === victim ? replacement : pid));
    }
    await sleep(500);
    const attempts = await loop.stop();

    // Without an answer are only the connections a killed worker was serving: a few per kill, reset at once.
    expect(
      attempts.filter((each) => each.outcome === 'no answer'),
      summary(attempts),
    ).toEqual([]);
    const errors = attempts.filter((each) => each.outcome === 'connection error');
    expect(errors.length, summary(attempts)).toBeLessThanOrEqual(kills * 3);
    const answered = attempts.filter((each) => typeof each.outcome === 'number');
    expect(new Set(answered.map((each) => each.outcome)), summary(attempts)).toEqual(new Set([200]));
    expect(answered.length).toBeGreaterThan(50);

    const since = Date.now();
    const after = await Promise.all(
      Array.from({ length: 20 }, async (_, index) => {
        await sleep(index * 10);
        return send(`${g.url}/core/alice`, { token });
      }),
    );
    expect(after.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    const served = await waitForLines(
      g,
      (line) => isPatronRequest(line) && Date.parse(line.time as string) >= since,
      (lines) => lines.length >= 20,
      'the access-log lines',
    );
    expect(new Set(served.map((line) => line.pid))).toEqual(new Set(pids));
  }, 120_000);

  it('a replacement worker gets no connection before it is ready: no 503 "the gateway is starting" under a steady stream of requests', async () => {
    const g = await start({ PAIA_AUTH_REQUESTS_PER_MINUTE: '100000' });
    const pids = await workerPids(g);
    const token = await login(g);
    const loop = requestLoop(3, () => attempt(g, token, 10_000));
    await sleep(300);

    process.kill(pids[0] as number, 'SIGKILL');
    const replacement = await replacementPid(g, pids);
    // The stream goes on until the replacement has served its share.
    await waitForLines(
      g,
      (line) => isPatronRequest(line) && line.pid === replacement,
      (lines) => lines.length >= 20,
      'requests served by the replacement',
    );
    const attempts = await loop.stop();

    expect(
      attempts.filter((each) => each.outcome === 503),
      summary(attempts),
    ).toEqual([]);
    expect(
      attempts.filter((each) => each.outcome === 'no answer'),
      summary(attempts),
    ).toEqual([]);
    const answered = attempts.filter((each) => typeof each.outcome === 'number');
    expect(new Set(answered.map((each) => each.outcome)), summary(attempts)).toEqual(new Set([200]));
  }, 60_000);

  it('a stopped worker (SIGSTOP) gets no new connections, and is killed and replaced once its heartbeat answer is 5 s late; no connection is lost', async () => {
    const g = await start({ PAIA_AUTH_REQUESTS_PER_MINUTE: '100000' });
    const pids = await workerPids(g);
    const [victim, survivor] = pids as [number, number];
    const token = await login(g);

    const stoppedAt = Date.now();
    process.kill(victim, 'SIGSTOP');
    const loop = requestLoop(2, () => attempt(g, token, 10_000));
    const [killing] = await waitForLines(
      g,
      (line) => line.msg.startsWith('worker did not answer the heartbeat') && line.workerPid === victim,
      (lines) => lines.length === 1,
      "the primary's line about killing the stopped worker",
    );
    expect(killing!.msg).toBe('worker did not answer the heartbeat for 5 s (stopped or blocked); killing it');
    const [died] = await waitForLines(
      g,
      (line) => line.msg === 'worker died; starting a replacement' && line.workerPid === victim,
      (lines) => lines.length === 1,
      "the primary's line about the dead worker",
    );
    expect(died).toMatchObject({
      exit: 'signal SIGKILL',
      reason: 'did not answer the heartbeat for 5 s (stopped or blocked)',
    });
    // The stopped worker was sent one connection (the loop's first or second) and never took it, so it counted as
    // busy from then on; once it was dead that connection went to another worker. (Read now: the access-log
    // lines of the loop push older lines out of what the helper keeps.)
    const handedOn = logLines(g).filter(
      (line) => line.msg === 'a worker exited before taking a connection; handing it to another',
    );
    expect(handedOn.map((line) => line.worker)).toEqual([died!.worker]);
    const replacement = await replacementPid(g, pids);
    await waitForLines(
      g,
      (line) => isPatronRequest(line) && line.pid === replacement,
      (lines) => lines.length >= 5,
      'requests served by the replacement',
    );
    const attempts = await loop.stop();
    expect(isRunning(victim)).toBe(false);

    // Every request was answered, the one the stopped worker had been sent too: it went to another worker once
    // the stopped one was killed.
    expect(
      attempts.map((each) => each.outcome),
      summary(attempts),
    ).toEqual(Array(attempts.length).fill(200));
    // From 3 s after the stop (its heartbeat answer late by then) every new connection went to the other worker:
    // it was answered before the stopped one was killed, none waited for the kill.
    const killedAt = Date.parse(killing!.time as string);
    const meanwhile = attempts.filter((each) => each.startedAt >= stoppedAt + 3000 && each.startedAt < killedAt - 1000);
    expect(meanwhile.length).toBeGreaterThan(10);
    expect(meanwhile.filter((each) => each.startedAt + each.ms >= killedAt)).toEqual([]);
    const served = logLines(g).filter((line) => isPatronRequest(line) && Date.parse(line.time as string) > killedAt);
    expect(new Set(served.map((line) => line.pid))).toEqual(new Set([survivor, replacement]));
  }, 60_000);

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
    const child = spawn(process.execPath, [...sourceEntry('src/cli/main.ts'), 'serve', '--workers', '2'], {
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
      'http.workers: must be 1 while state.store is "memory": each worker would keep its own sessions and counters, so a token issued by one worker would be unknown to the next; set state.store to "redis" (and state.redis.url or state.redis.sentinels) to run several workers (got 2, from --workers)',
    );
  });
});
