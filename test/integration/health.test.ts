/**
 * /healthz and /readyz against the real gateway process and a simulator
 * process: outside PAIA (no token, no PAIA error body, at the root whatever
 * the base path), and readiness following the SIP2 side.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

/** The version package.json names, which /healthz reports. */
const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** What /readyz says of the default state store. */
const MEMORY_STORE = { kind: 'memory', ok: true };

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

async function get(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON: the test says so
  }
  return { status: response.status, headers: response.headers, body, text };
}

/** Polls /readyz until `until` holds (or fails with the last answer after timeoutMs). */
async function readyzUntil(base: string, until: (answer: Answer) => boolean, timeoutMs: number): Promise<Answer> {
  const deadline = Date.now() + timeoutMs;
  let last: Answer | undefined;
  while (Date.now() < deadline) {
    last = await get(`${base}/readyz`);
    if (until(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(
    `/readyz did not reach the expected state within ${timeoutMs} ms; last: ${last?.status} ${last?.text}`,
  );
}

function expectNoPaiaHeaders(answer: Answer): void {
  for (const name of ['www-authenticate', 'x-oauth-scopes', 'x-accepted-oauth-scopes', 'x-paia-version']) {
    expect(answer.headers.get(name), name).toBeNull();
  }
}

describe('/healthz and /readyz', () => {
  let sim: SimulatorProcess;
  let gateway: GatewayProcess;
  let based: GatewayProcess;

  beforeAll(async () => {
    sim = await startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] });
    [gateway, based] = await Promise.all([
      startGatewayProcess({ sip2Port: sim.port, dialect: 'generic', env: { PAIA_SIP2_POOL_MIN: '1' } }),
      startGatewayProcess({ sip2Port: sim.port, dialect: 'generic', env: { PAIA_HTTP_BASE_PATH: '/paia' } }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([gateway?.stop(), based?.stop()]);
    await sim?.stop();
  });

  it('/healthz: 200 {"status":"alive","version":<package.json version>}, no token, no PAIA headers, not cached', async () => {
    const answer = await get(`${gateway.url}/healthz`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: 'alive', version: PACKAGE_VERSION });
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expectNoPaiaHeaders(answer);
  });

  it('/readyz: 200 with the SIP2 connection count and on-line status while connected', async () => {
    const answer = await readyzUntil(gateway.url, (a) => a.status === 200, 10_000);
    expect(answer.body).toEqual({ status: 'ready', sip2: { connections: 1, online: true }, store: MEMORY_STORE });
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expectNoPaiaHeaders(answer);
  });

  it('answer HEAD without a body and refuse other methods with 405 and Allow', async () => {
    const head = await fetch(`${gateway.url}/readyz`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const post = await get(`${gateway.url}/healthz`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(post.body.status).toBe('error');
  });

  it('live at the root, outside http.basePath; below the base path they are PAIA 404s', async () => {
    expect((await get(`${based.url}/healthz`)).status).toBe(200);
    expect((await readyzUntil(based.url, (a) => a.status === 200, 10_000)).body.status).toBe('ready');
    const inside = await get(`${based.url}/paia/healthz`);
    expect(inside.status).toBe(404);
    expect(inside.body.error).toBe('not_found');
    // The PAIA methods are where they were.
    const login = await get(`${based.url}/paia/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'alice', password: 'alice-pass', grant_type: 'password' }),
    });
    expect(login.status).toBe(200);
  });

  it('/readyz: 503 "no logged-in SIP2 connection" while the ILS refuses connections, 200 again once it accepts them', async () => {
    await readyzUntil(gateway.url, (a) => a.status === 200, 10_000);
    await sim.setFaults({ refuseConnections: true });
    try {
      expect(await sim.disconnectAll()).toBeGreaterThan(0);
      const down = await readyzUntil(gateway.url, (a) => a.status === 503, 5000);
      expect(down.body).toEqual({
        status: 'not ready',
        reasons: ['no logged-in SIP2 connection'],
        sip2: { connections: 0, online: null },
        store: MEMORY_STORE,
      });
      expect(down.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expectNoPaiaHeaders(down);
      // Liveness does not follow the ILS.
      expect((await get(`${gateway.url}/healthz`)).status).toBe(200);
    } finally {
      await sim.clearFaults();
    }
    const up = await readyzUntil(gateway.url, (a) => a.status === 200, 20_000);
    expect(up.body).toEqual({ status: 'ready', sip2: { connections: 1, online: true }, store: MEMORY_STORE });
  });

  it('/readyz: 503 when the ACS reports itself offline (98 on-line N), 200 again when it is back on line', async () => {
    await readyzUntil(gateway.url, (a) => a.status === 200, 10_000);
    // The simulator answers 99 with on-line N; the reconnect after the drop reads that 98.
    await sim.setFaults({ rejectMessage: '99' });
    try {
      await sim.disconnectAll();
      const offline = await readyzUntil(
        gateway.url,
        (a) => a.status === 503 && a.body.sip2 !== undefined && (a.body.sip2 as { online: unknown }).online === false,
        20_000,
      );
      expect(offline.body).toEqual({
        status: 'not ready',
        reasons: ['the ILS reports it is offline (SC status on-line N)'],
        sip2: { connections: 1, online: false },
        store: MEMORY_STORE,
      });
    } finally {
      await sim.clearFaults();
    }
    await sim.disconnectAll();
    const back = await readyzUntil(gateway.url, (a) => a.status === 200, 20_000);
    expect(back.body).toEqual({ status: 'ready', sip2: { connections: 1, online: true }, store: MEMORY_STORE });
  });
});
