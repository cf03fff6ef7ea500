import { httpClient, percentile, sequential, sortedOf } from './driver.js';
import { call, login } from './paia.js';
import { counterDelta, gatewayEnv, startGateway, startSimulator } from './processes.js';
import { counts, metOf, ms, type Row } from './report.js';
import type { Settings } from './settings.js';
import { openDirect } from './sip2-direct.js';

/**
 * B3: how much longer one call through the gateway takes than the SIP2
 * round trip it needs, at low load. One request at a time, simulator at 0 ms:
 * p50 of GET /core/alice through the gateway divided by p50 of the same 63
 * (Sip2Messages.patronInformation('alice'), no list, no password) sent
 * straight to the simulator over one persistent SIP2 connection from the
 * bench process. A ratio, not a difference in milliseconds: both move with
 * the machine (an added 0.48 ms on one machine was 0.81 ms on another of the
 * same kind), their ratio much less. The two alternate in batches of 100 so
 * they share the machine's noise.
 *
 * Both are warmed up first with 2000 calls each: a fresh gateway answers a
 * sequential GET /core/alice about 0.3 ms slower over its first ~2000 calls
 * while V8 tiers its code up (measured: overhead 0.68, 0.45, 0.39 ms over
 * successive batches of 300 after 200 warm-ups); a gateway in service is warm.
 */

/** p50 through the gateway ÷ p50 of the direct SIP2 round trip (issue 26). */
const TARGET = 2;
const BATCH = 100;
const WARMUP = 2000;
const POOL = '4';

export async function runB3(settings: Settings): Promise<Row[]> {
  const simulator = await startSimulator();
  try {
    const gateway = await startGateway(
      gatewayEnv(simulator.port, { PAIA_SIP2_POOL_MIN: POOL, PAIA_SIP2_POOL_MAX: POOL }),
    );
    const http = httpClient(gateway.url);
    const direct = await openDirect(simulator.port);
    try {
      const token = await login(http, 'alice', 'alice-pass');
      const statuses: Record<string, number> = {};
      const viaGateway = async () => {
        const answer = await call(http, 'GET', '/core/alice', { token });
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      };
      const viaSip2 = async () => {
        const answer = await direct.connection.send(direct.requests.patronInformation('alice'));
        if (answer.code !== '64') throw new Error(`expected 64, got ${answer.code}`);
      };

      await sequential(WARMUP, viaGateway);
      await sequential(WARMUP, viaSip2);
      const before = await simulator.counters();
      await viaGateway();
      const perCall = counterDelta(before, await simulator.counters());

      const gatewayTimes: number[] = [];
      const sip2Times: number[] = [];
      for (let batch = 0; batch < settings.b3Batches; batch++) {
        gatewayTimes.push(...(await sequential(BATCH, viaGateway)));
        sip2Times.push(...(await sequential(BATCH, viaSip2)));
      }
      const g = sortedOf(gatewayTimes);
      const s = sortedOf(sip2Times);
      const ratio = percentile(g, 50) / percentile(s, 50);
      const non200 = Object.entries(statuses).filter(([status]) => status !== '200');
      const valid = non200.length === 0;
      const notes = [
        `result = p50 gateway GET /core/alice ÷ p50 direct SIP2 63: ${ms(percentile(g, 50))} ÷ ${ms(percentile(s, 50))}; the gateway adds ${ms(percentile(g, 50) - percentile(s, 50))} at p50`,
        `gateway p99 ${ms(percentile(g, 99))}, direct SIP2 p99 ${ms(percentile(s, 99))}; ${g.length} samples each, alternating batches of ${BATCH}, after ${WARMUP} warm-ups each`,
        `one GET /core/alice sent ${counts(perCall)} to the simulator; HTTP statuses ${counts(statuses)}`,
      ];
      if (!valid) notes.push(`INVALID: ${non200.map(([status, n]) => `${n}× HTTP ${status}`).join(', ')}`);
      return [
        {
          id: 'B3',
          what: 'gateway at low load: p50 gateway ÷ p50 direct SIP2 round trip',
          result: `${ratio.toFixed(2)} (${ms(percentile(g, 50))} ÷ ${ms(percentile(s, 50))})`,
          target: `<= ${TARGET}`,
          met: metOf(ratio <= TARGET, valid),
          notes,
        },
      ];
    } finally {
      direct.close();
      await http.close();
      await gateway.stop();
    }
  } finally {
    await simulator.stop();
  }
}
