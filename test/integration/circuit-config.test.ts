/**
 * sip2.circuit reaches the pool: with a threshold of 2 and a first pause of
 * 2 minutes, the third request after two refused connects is turned away at
 * once with a Retry-After only a long cool-down gives (the default caps it at 30 s).
 */
import { describe, expect, it } from 'vitest';
import { expectRequestError, useFixture } from '../conformance/support.js';

/** Polls /metrics until the pool holds no connection (bounded: fails after 10 s). */
async function untilNoConnections(url: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const text = await (await fetch(`${url}/metrics`)).text();
    if (/^paia_sip2_connections 0$/m.test(text)) return;
    if (Date.now() > deadline) throw new Error('the gateway still holds a SIP2 connection after 10 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('sip2.circuit settings', () => {
  const fx = useFixture('generic', {
    PAIA_SIP2_POOL_MIN: '0',
    PAIA_SIP2_POOL_KEEPALIVE_MS: '0',
    PAIA_SIP2_TIMEOUTS_CONNECT_MS: '1000',
    PAIA_SIP2_CIRCUIT_FAILURE_THRESHOLD: '2',
    PAIA_SIP2_CIRCUIT_COOL_DOWN_MS: '120000',
    PAIA_SIP2_CIRCUIT_MAX_COOL_DOWN_MS: '240000',
  });

  it('opens after failureThreshold failures and announces the configured cool-down', async () => {
    const { client, sim } = fx();
    const alice = await client.login('alice');
    await sim.setFaults({ refuseConnections: true });
    await sim.disconnectAll();
    // Until the gateway has seen its connection go, a request could still try it (one more failure).
    await untilNoConnections(fx().gateway.url);
    for (let i = 0; i < 2; i++)
      expectRequestError(await client.get('/core/alice', { token: alice.token }), {
        status: 502,
        error: 'bad_gateway',
      });
    const open = await client.get('/core/alice', { token: alice.token });
    expectRequestError(open, { status: 503, error: 'service_unavailable' });
    // Equal jitter: between half and all of the 120 s first pause.
    const retryAfter = Number(open.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(60);
    expect(retryAfter).toBeLessThanOrEqual(120);
  });
});
