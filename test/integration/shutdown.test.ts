/**
 * Graceful shutdown of the real gateway process on SIGTERM and SIGINT, with
 * requests in flight held up by the simulator's latency fault.
 *
 * First signal: not ready, listener closed (new connections refused),
 * requests in flight finish, SIP2 pool closed, exit 0. Past
 * http.shutdownTimeoutMs: exit 1. A second signal: exit at once with
 * 128 + the signal number.
 */
import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayExit, type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { sendOnOwnConnection as send } from '../helpers/http-call.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

/** Whether a new TCP connection to the gateway's port is refused. */
function connectionRefused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

async function login(gateway: GatewayProcess, username = 'alice', password = 'alice-pass'): Promise<string> {
  const answer = await send(`${gateway.url}/auth/login`, {
    method: 'POST',
    json: { username, password, grant_type: 'password' },
  });
  expect(answer.status, answer.body).toBe(200);
  return (JSON.parse(answer.body) as { access_token: string }).access_token;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves with the exit and how long it took from now. */
async function timedExit(exit: Promise<GatewayExit>): Promise<GatewayExit & { ms: number }> {
  const start = Date.now();
  const result = await exit;
  return { ...result, ms: Date.now() - start };
}

/** Lets the requests reach the simulator, where the latency fault holds them. */
const IN_FLIGHT_SETTLE_MS = 300;

describe('graceful shutdown', () => {
  let sim: SimulatorProcess;
  let gateway: GatewayProcess | undefined;

  beforeAll(async () => {
    sim = await startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] });
  });

  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
    await sim.clearFaults();
  });

  afterAll(async () => {
    await sim?.stop();
  });

  const start = (env: Record<string, string>) =>
    startGatewayProcess({
      sip2Port: sim.port,
      dialect: 'generic',
      env: { PAIA_LOG_LEVEL: 'info', PAIA_SIP2_POOL_MAX: '6', ...env },
    });

  it('SIGTERM: requests in flight finish with 200, new connections are refused, readiness is gone, exit 0 within the bound', async () => {
    // Three connections logged in before the latency fault: each request then costs one held round trip, not a login too.
    const g = await start({ PAIA_HTTP_SHUTDOWN_TIMEOUT_MS: '15000', PAIA_SIP2_POOL_MIN: '3' });
    gateway = g;
    const token = await login(g);
    const ready = await send(`${g.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toMatchObject({ sip2: { connections: 3 } });

    // Each request is one SIP2 round trip (63), held 1.5 s by the simulator.
    await sim.setFaults({ latencyMs: 1500 });
    const started = Date.now();
    const inFlight = ['/core/alice', '/core/alice/fees', '/core/alice'].map((path) =>
      send(`${g.url}${path}`, { token }),
    );
    await sleep(IN_FLIGHT_SETTLE_MS);
    const exit = timedExit(g.kill('SIGTERM'));
    await sleep(200);

    // Draining: the listener is closed, so a readiness probe on a new connection is refused (or, on a kept connection, 503).
    expect(await connectionRefused(g.url)).toBe(true);
    const probe = await send(`${g.url}/readyz`).then(
      (answer) => answer.status,
      (error: NodeJS.ErrnoException) => error.code,
    );
    expect([503, 'ECONNREFUSED']).toContain(probe);

    const answers = await Promise.all(inFlight);
    for (const answer of answers) {
      expect(answer.status, answer.body).toBe(200);
      // The client is told not to reuse the connection.
      expect(answer.headers.connection).toBe('close');
    }
    expect(JSON.parse(answers[1]!.body)).toHaveProperty('fee');
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(1400);
    expect(took).toBeLessThan(5000);

    const { code, signal, ms } = await exit;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(ms).toBeLessThan(15_000);
    const log = g.stdout();
    for (const phase of [
      'shutdown: signal received',
      'shutdown 1/4: not ready any more, listener closed',
      'shutdown 2/4: requests finished',
      'shutdown 3/4: SIP2 connections closed',
      'shutdown 4/4: done',
      'shutdown: complete',
    ]) {
      expect(log).toContain(phase);
    }
    // The in-flight count at the start of the drain.
    expect(log).toMatch(/"inFlight":3,.*shutdown 1\/4/);
  });

  it('SIGTERM with nothing in flight: exits 0 at once', async () => {
    const g = await start({});
    gateway = g;
    expect((await send(`${g.url}/readyz`)).status).toBe(200);
    const { code, signal, ms } = await timedExit(g.kill('SIGTERM'));
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(ms).toBeLessThan(3000);
  });

  it('a request in flight longer than http.shutdownTimeoutMs: exit 1 by the bound, the request is cut off', async () => {
    const g = await start({ PAIA_HTTP_SHUTDOWN_TIMEOUT_MS: '700' });
    gateway = g;
    const token = await login(g);
    await sim.setFaults({ latencyMs: 4000 });
    const slow = send(`${g.url}/core/alice`, { token }).then(
      (answer) => answer.status,
      (error: NodeJS.ErrnoException) => error.code ?? error.message,
    );
    await sleep(IN_FLIGHT_SETTLE_MS);
    const { code, signal, ms } = await timedExit(g.kill('SIGTERM'));
    expect({ code, signal }).toEqual({ code: 1, signal: null });
    expect(ms).toBeGreaterThanOrEqual(600);
    expect(ms).toBeLessThan(3000);
    expect(await slow).not.toBe(200);
    expect(g.stdout()).toContain('shutdown: not done within http.shutdownTimeoutMs');
  });

  it('SIGTERM then SIGINT: the second signal exits at once with 130', async () => {
    const g = await start({ PAIA_HTTP_SHUTDOWN_TIMEOUT_MS: '20000' });
    gateway = g;
    const token = await login(g);
    await sim.setFaults({ latencyMs: 4000 });
    const slow = send(`${g.url}/core/alice`, { token }).catch(() => null);
    await sleep(IN_FLIGHT_SETTLE_MS);
    const first = g.kill('SIGTERM');
    await sleep(300);
    const { code, signal, ms } = await timedExit(g.kill('SIGINT'));
    await first;
    expect({ code, signal }).toEqual({ code: 130, signal: null });
    expect(ms).toBeLessThan(1500);
    await slow;
    expect(g.stdout()).toContain('shutdown: second signal; exiting now');
  });
});
