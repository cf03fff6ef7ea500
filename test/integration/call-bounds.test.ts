/**
 * Every call is bounded as a whole (http.requestTimeoutMs), whatever the ILS
 * does per message, and a call whose client went away stops costing the ILS
 * anything. Real gateway and simulator processes; the simulator's counters
 * count a message when it arrives, so "received" after the answer shows
 * whether anything more was sent for the call.
 */
import { describe, expect, it } from 'vitest';
import { expectRequestError, item, useFixture } from '../conformance/support.js';

const DEADLINE_MS = 6000;
/** Just under the gateway's response timeout (5 s, the default): no single message ever times out. */
const SLOW_ILS_MS = 4500;
const MARGIN_MS = 1500;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('a whole call is bounded by http.requestTimeoutMs', () => {
  const fx = useFixture('generic', {
    PAIA_HTTP_REQUEST_TIMEOUT_MS: String(DEADLINE_MS),
    PAIA_SIP2_TIMEOUTS_RESPONSE_MS: '5000',
    PAIA_SIP2_POOL_MIN: '2',
    PAIA_SIP2_POOL_MAX: '2',
    PAIA_SIP2_POOL_KEEPALIVE_MS: '0',
    PAIA_CACHE_ITEMS_ENABLED: 'false',
    PAIA_AUTH_MAX_SESSIONS_PER_PATRON: '100',
  });

  it('answers 504 at the deadline for an ILS answering every message just in time, and sends nothing more for the call', async () => {
    const { client, sim } = fx();
    const dave = await client.login('dave');
    await sim.setFaults({ latencyMs: SLOW_ILS_MS });
    try {
      const before = (await sim.counters()).received['63'] ?? 0;
      const started = performance.now();
      const reply = await client.get('/core/dave/items', { token: dave.token });
      const ms = performance.now() - started;
      expectRequestError(reply, { status: 504, error: 'gateway_timeout' });
      expect(ms).toBeGreaterThanOrEqual(DEADLINE_MS - 100);
      expect(ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);
      const atAnswer = (await sim.counters()).received;
      // Two connections, 4.5 s a message: the charged list's first page, then its two other pages, went
      // out before the deadline (the overdue list and the 17s wait behind them).
      expect((atAnswer['63'] ?? 0) - before).toBe(3);
      // Long enough for the messages in flight to finish and for a call that went on to send the next ones.
      await sleep(SLOW_ILS_MS + 1500);
      expect((await sim.counters()).received).toEqual(atAnswer);
    } finally {
      await sim.clearFaults();
    }
  });

  it('drops the SIP2 work of a call whose client went away: nothing unsent is ever sent', async () => {
    const { client, sim, gateway } = fx();
    const dave = await client.login('dave');
    await sim.setFaults({ latencyMs: 1000 });
    try {
      const before = (await sim.counters()).received['63'] ?? 0;
      const controller = new AbortController();
      const call = fetch(`${gateway.url}/core/dave/items`, {
        headers: { Authorization: `Bearer ${dave.token}` },
        signal: controller.signal,
      }).catch((error: unknown) => error);
      await sleep(1500);
      controller.abort();
      expect(await call).toBeInstanceOf(Error);
      await sleep(200);
      const atAbort = (await sim.counters()).received;
      // 1 s a message: the first page, then two more pages, were out when the client went away at 1.5 s.
      expect((atAbort['63'] ?? 0) - before).toBe(3);
      await sleep(3000);
      expect((await sim.counters()).received).toEqual(atAbort);
    } finally {
      await sim.clearFaults();
    }
  });
});

describe('a write call at the deadline tells what happened to each document', () => {
  const fx = useFixture('generic', {
    PAIA_HTTP_REQUEST_TIMEOUT_MS: String(DEADLINE_MS),
    PAIA_SIP2_POOL_MIN: '1',
    PAIA_SIP2_POOL_MAX: '1',
    PAIA_SIP2_POOL_KEEPALIVE_MS: '0',
    PAIA_CACHE_ITEMS_ENABLED: 'false',
  });

  it('confirmed, outcome unknown (at the ILS when time ran out), not sent (never left): 200 at the deadline, nothing sent later', async () => {
    const { client, sim } = fx();
    const alice = await client.login('alice');
    await sim.setFaults({ latencyMs: SLOW_ILS_MS });
    try {
      const started = performance.now();
      const reply = await client.post(
        '/core/alice/renew',
        { doc: [{ item: item('it-0002') }, { item: item('it-0001') }, { item: item('it-0003') }] },
        { token: alice.token },
      );
      const ms = performance.now() - started;
      expect(reply.status, reply.text).toBe(200);
      expect(ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);
      const docs = reply.body.doc as Array<Record<string, unknown>>;
      expect(docs[0]).toMatchObject({ status: 3, item: item('it-0002') });
      expect(docs[0]!.error).toBeUndefined();
      expect(docs[1]).toMatchObject({
        status: 3,
        item: item('it-0001'),
        error: expect.stringMatching(/^outcome unknown/),
      });
      expect(docs[2]).toMatchObject({
        status: 3,
        item: item('it-0003'),
        error: expect.stringMatching(/^renewal not sent: the call ran out of time/),
      });
      await sleep(SLOW_ILS_MS + 1000);
      const counters = await sim.counters();
      expect(counters.received['29']).toBe(2);
      expect(counters.executed['29']).toBe(2);
    } finally {
      await sim.clearFaults();
    }
  });
});
