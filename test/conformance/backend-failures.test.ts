/**
 * Conformance: request errors caused by the library system (bad_gateway 502,
 * service_unavailable 503, gateway_timeout 504), produced with the
 * simulator's fault injection, and the write safety around them: a renew or
 * request is never sent twice and never sent into a known-dead backend.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, expectOk, expectRequestError, item, type Reply, type Session, useFixture } from './support.js';

const RESPONSE_TIMEOUT_MS = 1000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * An unreachable library system is a backend failure (bad_gateway 502) or,
 * once the gateway stops trying for a while, a temporary failure
 * (service_unavailable 503, then with Retry-After); never a client error.
 */
function expectBackendDown(reply: Reply, api: 'core' | 'auth'): void {
  expect([502, 503], `${reply.request} -> ${reply.status} ${reply.text}`).toContain(reply.status);
  if (reply.status === 502) {
    expectRequestError(reply, { status: 502, error: 'bad_gateway', api });
  } else {
    expectRequestError(reply, { status: 503, error: 'service_unavailable', api });
    expect(reply.headers.get('retry-after') ?? '', `${reply.request}: Retry-After`).toMatch(/^\d+$/);
  }
}

describe.each(DIALECTS)('library system failures (%s)', (dialect) => {
  // No background fill (min 0): connections are opened by requests, so after settle() two idle
  // connections are open and a fault hits the message under test, never a login.
  const fx = useFixture(
    dialect,
    {
      PAIA_SIP2_POOL_MIN: '0',
      PAIA_SIP2_POOL_MAX: '2',
      PAIA_SIP2_POOL_KEEPALIVE_MS: '0',
      PAIA_SIP2_TIMEOUTS_RESPONSE_MS: String(RESPONSE_TIMEOUT_MS),
      PAIA_SIP2_TIMEOUTS_CONNECT_MS: '1000',
    },
    [
      // extras[0]: one connection and a short acquire timeout, for service_unavailable
      {
        PAIA_SIP2_POOL_MIN: '1',
        PAIA_SIP2_POOL_MAX: '1',
        PAIA_SIP2_POOL_KEEPALIVE_MS: '0',
        PAIA_SIP2_POOL_ACQUIRE_TIMEOUT_MS: '100',
      },
    ],
  );
  let alice: Session;

  beforeAll(async () => {
    alice = await fx().client.login('alice');
  });

  /** Faults off, and the gateway serving again (items opens both pool connections). */
  async function settle(): Promise<void> {
    await fx().sim.clearFaults();
    const deadline = Date.now() + 20_000;
    for (;;) {
      const reply = await fx().client.get('/core/alice/items', { token: alice.token });
      if (reply.status === 200) return;
      if (Date.now() > deadline)
        throw new Error(`the gateway did not serve again within 20 s: ${reply.status} ${reply.text}`);
      await sleep(200);
    }
  }

  afterEach(async () => {
    await settle();
  });

  it('gateway_timeout 504: "Backend failure" when the library system does not answer in time', async () => {
    await settle();
    await fx().sim.setFaults({ hang: 1 });
    const started = Date.now();
    const reply = await fx().client.get('/core/alice', { token: alice.token });
    expectRequestError(reply, { status: 504, error: 'gateway_timeout' });
    expect(Date.now() - started, 'answered after the response timeout, not hanging').toBeLessThan(
      RESPONSE_TIMEOUT_MS + 8000,
    );
  });

  it('gateway_timeout 504 at login: a library system that does not answer is not access_denied', async () => {
    await settle();
    await fx().sim.setFaults({ hang: 1 });
    const reply = await fx().client.loginReply('alice', 'alice-pass');
    expectRequestError(reply, { status: 504, error: 'gateway_timeout', api: 'auth' });
    await settle();
    // and the lost attempt does not count as a failed login
    await fx().client.login('alice');
  });

  it('a renewal whose answer is lost is reported (504 or doc.error), never sent a second time', async () => {
    await settle();
    const before = await fx().sim.counters();
    await fx().sim.setFaults({ hang: 1 });
    const reply = await fx().client.post(
      '/core/alice/renew',
      { doc: [{ item: item('it-0002') }] },
      { token: alice.token },
    );
    if (reply.status === 200) {
      const [doc] = reply.body.doc as Array<Record<string, unknown>>;
      expect(typeof doc?.error, reply.text).toBe('string');
    } else {
      expectRequestError(reply, { status: 504, error: 'gateway_timeout' });
    }
    const after = await fx().sim.counters();
    expect((after.received['29'] ?? 0) - (before.received['29'] ?? 0), '29 messages received').toBe(1);
    expect((after.executed['29'] ?? 0) - (before.executed['29'] ?? 0), '29 messages executed').toBe(1);
    await fx().sim.reset();
  });

  it('bad_gateway 502: "Backend failure (for example the library system database)" when the library system answers garbage', async () => {
    await settle();
    await fx().sim.setFaults({ garbage: true });
    const reply = await fx().client.get('/core/alice', { token: alice.token });
    expectRequestError(reply, { status: 502, error: 'bad_gateway' });
  });

  it('bad_gateway 502 or service_unavailable 503 when the library system cannot be reached; writes are then not executed and login is not access_denied', async () => {
    await settle();
    const before = { renew: await fx().executed('29'), hold: await fx().executed('15') };
    await fx().sim.setFaults({ refuseConnections: true });
    await fx().sim.disconnectAll();
    const { client } = fx();
    const replies: Array<[Reply, 'core' | 'auth']> = [
      [await client.get('/core/alice', { token: alice.token }), 'core'],
      [await client.get('/core/alice/items', { token: alice.token }), 'core'],
      [await client.post('/core/alice/renew', { doc: [{ item: item('it-0002') }] }, { token: alice.token }), 'core'],
      [await client.post('/core/alice/request', { doc: [{ item: item('it-0030') }] }, { token: alice.token }), 'core'],
      [await client.loginReply('alice', 'alice-pass'), 'auth'],
    ];
    for (const [reply, api] of replies) expectBackendDown(reply, api);
    await fx().sim.setFaults({ refuseConnections: false });
    expect({ renew: await fx().executed('29'), hold: await fx().executed('15') }).toEqual(before);
  });

  it('after a backend failure the gateway serves again once the library system is back (the failure was temporary)', async () => {
    await settle();
    await fx().sim.setFaults({ refuseConnections: true });
    await fx().sim.disconnectAll();
    expectBackendDown(await fx().client.get('/core/alice', { token: alice.token }), 'core');
    await fx().sim.setFaults({ refuseConnections: false });
    let reply = await fx().client.get('/core/alice', { token: alice.token });
    for (let i = 0; i < 80 && reply.status !== 200; i++) {
      expectBackendDown(reply, 'core');
      await sleep(250);
      reply = await fx().client.get('/core/alice', { token: alice.token });
    }
    expectOk(reply);
    expectOk(await fx().client.get('/core/alice/items', { token: alice.token }));
  });

  it('service_unavailable 503: "Temporary failure" when no connection to the library system is free in time, with Retry-After', async () => {
    // The second gateway: one connection, 100 ms acquire timeout, on the same simulator.
    const { client } = fx().extras[0]!;
    await settle();
    // Earlier tests dropped this gateway's connection too (same simulator): wait until it serves again.
    const deadline = Date.now() + 20_000;
    let login = await client.loginReply('alice', 'alice-pass');
    while (login.status !== 200 && Date.now() < deadline) {
      await sleep(200);
      login = await client.loginReply('alice', 'alice-pass');
    }
    expect(login.status, login.text).toBe(200);
    const token = String(login.body.access_token);
    await fx().sim.setFaults({ latencyMs: 800 });
    // Two different reads: two identical ones at once would share a single 63 (SharedReads).
    const replies = await Promise.all([
      client.get('/core/alice', { token }),
      client.get('/core/alice/fees', { token }),
    ]);
    const statuses = replies.map((reply) => reply.status).sort();
    expect(statuses, replies.map((reply) => reply.text).join('\n')).toEqual([200, 503]);
    const busy = replies.find((reply) => reply.status === 503)!;
    expectRequestError(busy, { status: 503, error: 'service_unavailable' });
    expect(busy.headers.get('retry-after') ?? '').toMatch(/^\d+$/);
  });
});
