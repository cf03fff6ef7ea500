/**
 * /metrics of `serve --workers 2` answers for both workers, whichever takes
 * the scrape: the counters are the sums of what each worker did, the gauges
 * of a process's own facts come once per worker (label `worker`), and a
 * stopped worker (SIGSTOP) is left out within metrics.workerTimeoutMs rather
 * than holding the scrape, which says so (paia_workers_scraped). Real
 * processes: the gateway's primary and workers, redis-server (workers need
 * the Redis store), the SIP2 simulator.
 */
import { Agent, request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { GatewayProcess } from '../helpers/gateway.js';
import { sendOnOwnConnection as send } from '../helpers/http-call.js';
import { type RedisServer, startRedisServer } from '../helpers/redis.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';
import { type LogLine, logLines, startWorkersGateway } from '../helpers/workers.js';
import { type Exposition, parseExposition, samplesOf, single, sumOf } from '../unit/metrics/exposition.js';

/** metrics.workerTimeoutMs here: short, so the stopped worker's scrape is quick. */
const WORKER_TIMEOUT_MS = 300;
/** Patron calls the test sends, each on a connection of its own (the primary hands them to the workers in turn). */
const CALLS = 20;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The lines `pick` accepts once there are `count` of them (at most 10 s: a line comes a little after its request). */
async function linesOf(gateway: GatewayProcess, pick: (line: LogLine) => boolean, count: number): Promise<LogLine[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const lines = logLines(gateway).filter(pick);
    if (lines.length >= count) return lines;
    if (Date.now() > deadline) throw new Error(`fewer than ${count} matching log lines within 10 s`);
    await sleep(50);
  }
}

/** GET on `agent`'s connection (kept alive, so the same worker answers each time): status, body and time taken. */
function getOn(agent: Agent, url: string): Promise<{ status: number; body: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent, timeout: 10_000 }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body, ms: Date.now() - started }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end();
  });
}

/** One scrape on a connection of its own. */
async function scrape(gateway: GatewayProcess): Promise<Exposition> {
  const answer = await send(`${gateway.url}/metrics`);
  expect(answer.status, answer.body).toBe(200);
  return parseExposition(answer.body);
}

describe('/metrics with serve --workers 2', () => {
  let redis: RedisServer;
  let sim: SimulatorProcess;
  let gateway: GatewayProcess;
  let pids: number[];

  beforeAll(async () => {
    [redis, sim] = await Promise.all([
      startRedisServer(),
      startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] }),
    ]);
    gateway = await startWorkersGateway({
      sip2Port: sim.port,
      redisUrl: redis.url,
      keyPrefix: 'workers-metrics-test:',
      env: { PAIA_METRICS_WORKER_TIMEOUT_MS: String(WORKER_TIMEOUT_MS) },
    });
    const [started] = await linesOf(gateway, (line) => line.msg === 'paia-sip2 started with workers', 1);
    pids = started!.pids as number[];

    // Real traffic through the one port: a login and CALLS patron reads, each on a new connection.
    const login = await send(`${gateway.url}/auth/login`, {
      method: 'POST',
      json: { username: 'alice', password: 'alice-pass', grant_type: 'password' },
    });
    expect(login.status, login.body).toBe(200);
    const token = (JSON.parse(login.body) as { access_token: string }).access_token;
    for (let call = 0; call < CALLS; call += 1) {
      expect((await send(`${gateway.url}/core/alice`, { token })).status).toBe(200);
    }
    const served = await linesOf(gateway, (line) => line.msg === 'request' && line.path === '/core/alice', CALLS);
    // Both workers served some, so no one worker's counters can equal the sums.
    expect(new Set(served.map((line) => line.pid))).toEqual(new Set(pids));
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([sim?.stop(), redis?.close()]);
  });

  it('every scrape counts the requests of both workers, whichever worker takes it', async () => {
    // Each scrape on a new connection: the primary hands them to the workers in turn, so both answer some.
    for (let round = 0; round < 4; round += 1) {
      const metrics = await scrape(gateway);
      expect(sumOf(metrics, 'paia_http_requests_total', { route: 'patron', status: '200' })).toBe(CALLS);
      expect(sumOf(metrics, 'paia_http_requests_total', { route: 'login', status: '200' })).toBe(1);
      // The histogram is summed the same way: one observation per request.
      expect(sumOf(metrics, 'paia_http_request_duration_seconds_count', { route: 'patron' })).toBe(CALLS);
      expect(single(metrics, 'paia_workers_expected')).toBe(2);
      expect(single(metrics, 'paia_workers_scraped')).toBe(2);
    }
  });

  it("a process's own facts come once per worker with a worker label; the group's totals once", async () => {
    const metrics = await scrape(gateway);
    for (const name of ['process_start_time_seconds', 'nodejs_heap_size_used_bytes', 'paia_sip2_session_limit']) {
      const workers = samplesOf(metrics, name).map((sample) => sample.labels.worker);
      expect(workers.sort(), name).toEqual(['1', '2']);
    }
    // Open SIP2 sessions: the sum over both pools, one series without a worker label.
    const connections = samplesOf(metrics, 'paia_sip2_connections');
    expect(connections).toHaveLength(1);
    expect(connections[0]!.labels).toEqual({});
    expect(connections[0]!.value).toBeGreaterThanOrEqual(2);
    expect(samplesOf(metrics, 'paia_build_info')).toHaveLength(1);
  });

  it('with one worker stopped (SIGSTOP), a scrape answers within metrics.workerTimeoutMs without it, and says so', async () => {
    // A kept-alive connection, and which worker holds it (the access log of a first call on it).
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect((await getOn(agent, `${gateway.url}/which-worker-probe`)).status).toBe(404);
      const [probe] = await linesOf(
        gateway,
        (line) => line.msg === 'request' && line.path === '/which-worker-probe',
        1,
      );
      const victim = pids.find((pid) => pid !== probe!.pid) as number;
      // Both workers' last answers are known to the primary before one stops.
      const before = await getOn(agent, `${gateway.url}/metrics`);
      expect(single(parseExposition(before.body), 'paia_workers_scraped')).toBe(2);

      process.kill(victim, 'SIGSTOP');
      let stopped: Awaited<ReturnType<typeof getOn>>;
      try {
        stopped = await getOn(agent, `${gateway.url}/metrics`);
      } finally {
        // Long before the primary's heartbeat kills a worker that stays silent (5 s).
        process.kill(victim, 'SIGCONT');
      }
      expect(stopped.status, stopped.body).toBe(200);
      // The timeout and its margin, far below the 5 s after which the stopped worker would be killed and so answer.
      expect(stopped.ms).toBeLessThan(WORKER_TIMEOUT_MS + 2000);
      const metrics = parseExposition(stopped.body);
      expect(single(metrics, 'paia_workers_expected')).toBe(2);
      expect(single(metrics, 'paia_workers_scraped')).toBe(1);
      // Its gauges are left out; its counters stand as it last told them, so the sums do not fall.
      expect(samplesOf(metrics, 'process_start_time_seconds')).toHaveLength(1);
      expect(sumOf(metrics, 'paia_http_requests_total', { route: 'patron', status: '200' })).toBe(CALLS);

      // Going on, it answers again, once it has worked through what the IPC channel held for it while stopped.
      await vi.waitFor(
        async () => {
          const again = await getOn(agent, `${gateway.url}/metrics`);
          expect(single(parseExposition(again.body), 'paia_workers_scraped')).toBe(2);
        },
        { timeout: 4000, interval: 100 },
      );
    } finally {
      agent.destroy();
    }
  });
});
