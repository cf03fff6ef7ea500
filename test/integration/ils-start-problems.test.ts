/**
 * A gateway whose ILS refuses its terminal login, or cannot be reached: an
 * error line with the cause and the fix at start, /readyz saying why it is
 * not ready, and clients told what fails: the service's own login to the
 * library system, or the library system unreachable (not that the service is
 * busy). Real gateway and simulator processes on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

/** The gateway's log lines at error level (pino's 50). */
function errorLines(gateway: GatewayProcess): { msg: string; problem?: string }[] {
  return gateway
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: string; msg: string; problem?: string })
    .filter((line) => line.level === 'error' || line.level === 'fatal');
}

/** The first error line, once the log has it (pino writes asynchronously; at most 5 s). */
async function firstErrorLine(gateway: GatewayProcess): Promise<{ msg: string } | undefined> {
  const until = Date.now() + 5000;
  while (errorLines(gateway).length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  return errorLines(gateway)[0];
}

async function getJson(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const login = (gateway: GatewayProcess) =>
  getJson(`${gateway.url}/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'alice', password: 'alice-pass', grant_type: 'password' }),
  });

// One failure opens the circuit, so that the test need not wait for five.
const QUICK_CIRCUIT = { PAIA_SIP2_CIRCUIT_FAILURE_THRESHOLD: '1', PAIA_SIP2_CIRCUIT_COOL_DOWN_MS: '30000' };

describe('a wrong terminal password', () => {
  let sim: SimulatorProcess;
  let gateway: GatewayProcess;
  beforeAll(async () => {
    sim = await startSimulatorProcess();
    gateway = await startGatewayProcess({
      sip2Port: sim.port,
      dialect: 'generic',
      env: { ...QUICK_CIRCUIT, PAIA_SIP2_TERMINAL_PASSWORD: 'not-the-password' },
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await sim?.stop();
  });

  it('is an error line at start naming the terminal settings, without the password', async () => {
    const line = await firstErrorLine(gateway);
    expect(line?.msg, gateway.stdout()).toContain(
      'cannot log in to the ILS at start: the ILS rejected the SIP2 terminal login',
    );
    expect(line?.msg).toContain('sip2.terminal.user ("paia")');
    expect(gateway.stdout() + gateway.stderr()).not.toContain('not-the-password');
  });

  it('makes /readyz say that the ILS refused the terminal login', async () => {
    const ready = await getJson(`${gateway.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body.reasons).toEqual([
      'no logged-in SIP2 connection: the ILS refused the terminal login (check sip2.terminal.user, sip2.terminal.password and sip2.terminal.location)',
    ]);
  });

  it('answers a patron login 503 saying the service cannot log in to the library system, with Retry-After; no secret, no barcode anywhere', async () => {
    const response = await fetch(`${gateway.url}/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: 'alice', password: 'alice-pass', grant_type: 'password' }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    expect(response.status, text).toBe(503);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The spec's request error body; an auth answer carries no code (OAuth clients).
    const body = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
    expect(body.error).toBe('service_unavailable');
    expect(body.error_description).toMatch(
      /^this service cannot log in to the library system right now: the library system refuses the service's own account \(not yours\); please try again in \d+ seconds?$/,
    );
    // Neither the terminal password nor the patron's barcode (its username here) nor password, in the answer or the log.
    const everything = text + gateway.stdout() + gateway.stderr();
    expect(everything).not.toContain('not-the-password');
    expect(everything).not.toMatch(/\balice\b/);
    expect(everything).not.toContain('alice-pass');
  });
});

describe('an ILS port where nothing listens', () => {
  let gateway: GatewayProcess;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    gateway = await startGatewayProcess({ sip2Port: port, dialect: 'generic', env: QUICK_CIRCUIT });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('is an error line at start: connection refused, check sip2.host and sip2.port', async () => {
    const line = await firstErrorLine(gateway);
    expect(line?.msg, gateway.stdout()).toContain(
      'cannot log in to the ILS at start: connection refused (nothing listens there)',
    );
    expect(line?.msg).toContain(`sip2.host ("127.0.0.1") and sip2.port (${port})`);
  });

  it('makes /readyz say that the ILS cannot be reached at its address', async () => {
    const ready = await getJson(`${gateway.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body.reasons).toEqual([
      `no logged-in SIP2 connection: the ILS cannot be reached at 127.0.0.1:${port} (check sip2.host and sip2.port, and that its SIP2 service runs)`,
    ]);
  });

  it('answers calls 503: the library system cannot be reached', async () => {
    const answer = await login(gateway);
    expect(answer.status).toBe(503);
    expect(answer.body.error_description).toMatch(/^the library system cannot be reached right now/);
  });
});
