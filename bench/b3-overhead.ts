import { httpClient, percentile, sequential, sortedOf } from './driver.js';
import { call, login } from './paia.js';
import { counterDelta, gatewayEnv, type Simulator, startGateway, startLayer, startSimulator } from './processes.js';
import { counts, metOf, ms, type Row } from './report.js';
import type { Settings } from './settings.js';
import { type DirectSip2, openDirect } from './sip2-direct.js';

/**
 * B3: how much longer one call through the gateway takes than the SIP2
 * round trip it needs, at low load. One request at a time, simulator at 0 ms:
 * p50 of GET /core/alice through the gateway divided by p50 of the same 63
 * (Sip2Messages.patronInformation('alice'), no list, no password) sent
 * straight to the simulator over one persistent SIP2 connection from the
 * bench process. A ratio, not a difference in milliseconds: both move with
 * the machine (an added 0.48 ms on one machine was 0.81 ms on another of the
 * same kind), their ratio much less. The two alternate in batches of 100 so
 * they share the machine's noise. Then, for information, the raw relay
 * (bench/relay-server.mjs raw, B1's floor of any HTTP-to-SIP2 relay on Hono
 * and Node) answering the same call, against the direct round trip the same
 * way.
 *
 * Each is warmed up first (settings.b3Warmup calls): a gateway in service is
 * warm, and a fresh one is not for thousands of calls: on Node 22 one
 * answered 1.33, 1.06, 0.95, 0.72, 0.64, 0.60, 0.57, 0.57, 0.56, 0.55 ms
 * (p50 of successive batches of 1,000 calls), while V8 tiered its code up.
 * The notes give the gateway's warm-up curve, so a run shows whether it had
 * settled.
 */

/** p50 through the gateway ÷ p50 of the direct SIP2 round trip (issue 26). */
const TARGET = 2;
const BATCH = 100;
/** Warm-up batch whose p50 the notes give. */
const WARMUP_BATCH = 1000;
const POOL = '4';

type Call = () => Promise<void>;

/** `via` and `direct` in alternating batches of BATCH, so that they share the machine's noise: their times. */
async function alternating(batches: number, via: Call, direct: Call): Promise<[number[], number[]]> {
  const viaTimes: number[] = [];
  const directTimes: number[] = [];
  for (let batch = 0; batch < batches; batch++) {
    viaTimes.push(...(await sequential(BATCH, via)));
    directTimes.push(...(await sequential(BATCH, direct)));
  }
  return [viaTimes, directTimes];
}

/** `n` sequential calls in batches of WARMUP_BATCH; the p50 of each batch. */
async function warmUp(n: number, fn: Call): Promise<number[]> {
  const p50s: number[] = [];
  for (let done = 0; done < n; done += WARMUP_BATCH) {
    p50s.push(percentile(sortedOf(await sequential(Math.min(WARMUP_BATCH, n - done), fn)), 50));
  }
  return p50s;
}

export async function runB3(settings: Settings): Promise<Row[]> {
  const simulator = await startSimulator();
  try {
    const env = gatewayEnv(simulator.port, { PAIA_SIP2_POOL_MIN: POOL, PAIA_SIP2_POOL_MAX: POOL });
    const gateway = await startGateway(env);
    try {
      const relay = await startLayer('raw', env);
      try {
        const direct = await openDirect(simulator.port);
        try {
          return await measure(settings, simulator, gateway.url, relay.url, direct);
        } finally {
          direct.close();
        }
      } finally {
        await relay.stop();
      }
    } finally {
      await gateway.stop();
    }
  } finally {
    await simulator.stop();
  }
}

/** B3's calls and rows over the running gateway, raw relay and direct SIP2 session. */
async function measure(
  settings: Settings,
  simulator: Simulator,
  gatewayUrl: string,
  relayUrl: string,
  direct: DirectSip2,
): Promise<Row[]> {
  const http = httpClient(gatewayUrl);
  const relayHttp = httpClient(relayUrl);
  try {
    const token = await login(http, 'alice', 'alice-pass');
    const statuses: Record<string, number> = {};
    const relayStatuses: Record<string, number> = {};
    const viaGateway: Call = async () => {
      const answer = await call(http, 'GET', '/core/alice', { token });
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
    };
    const viaRelay: Call = async () => {
      const answer = await call(relayHttp, 'GET', '/core/alice');
      relayStatuses[answer.status] = (relayStatuses[answer.status] ?? 0) + 1;
    };
    const viaSip2: Call = async () => {
      const answer = await direct.connection.send(direct.requests.patronInformation('alice'));
      if (answer.code !== '64') throw new Error(`expected 64, got ${answer.code}`);
    };

    const curve = await warmUp(settings.b3Warmup, viaGateway);
    await warmUp(settings.b3Warmup, viaSip2);
    const before = await simulator.counters();
    await viaGateway();
    const perCall = counterDelta(before, await simulator.counters());
    const [gatewayTimes, sip2Times] = await alternating(settings.b3Batches, viaGateway, viaSip2);
    // The raw relay afterwards, against the direct round trip again: run between the gateway's batches,
    // another Node process would take the gateway's place in the CPU's caches and slow it down.
    await warmUp(settings.b3Warmup, viaRelay);
    const [relayTimes, relaySip2Times] = await alternating(settings.b3Batches, viaRelay, viaSip2);
    const g = percentile(sortedOf(gatewayTimes), 50);
    const s = percentile(sortedOf(sip2Times), 50);
    const r = percentile(sortedOf(relayTimes), 50);
    const rs = percentile(sortedOf(relaySip2Times), 50);
    const p99 = (times: number[]) => ms(percentile(sortedOf(times), 99));
    const ratio = g / s;
    const failed = (answers: Record<string, number>) => Object.entries(answers).filter(([status]) => status !== '200');
    const valid = failed(statuses).length === 0;
    const relayValid = failed(relayStatuses).length === 0;
    const notes = [
      `result = p50 gateway GET /core/alice ÷ p50 direct SIP2 63: ${ms(g)} ÷ ${ms(s)}; the gateway adds ${ms(g - s)} at p50`,
      `the raw relay (B1's floor of any HTTP-to-SIP2 relay on Hono and Node), the same call the same way afterwards: p50 ${ms(r)} ÷ ${ms(rs)} direct = ${(r / rs).toFixed(2)}`,
      `p99: gateway ${p99(gatewayTimes)}, direct SIP2 ${p99(sip2Times)}; raw relay ${p99(relayTimes)}, direct SIP2 ${p99(relaySip2Times)}; ${gatewayTimes.length} samples each, alternating batches of ${BATCH}, after ${settings.b3Warmup} warm-up calls each`,
      `the gateway's warm-up, p50 of each ${WARMUP_BATCH} calls: ${curve.map((p50) => p50.toFixed(2)).join(', ')} ms`,
      `one GET /core/alice sent ${counts(perCall)} to the simulator; HTTP statuses: gateway ${counts(statuses)}, raw relay ${counts(relayStatuses)}`,
    ];
    for (const [who, answers] of [
      ['gateway', statuses],
      ['raw relay', relayStatuses],
    ] as const) {
      const bad = failed(answers);
      if (bad.length > 0) notes.push(`INVALID: ${who} ${bad.map(([status, n]) => `${n}× HTTP ${status}`).join(', ')}`);
    }
    return [
      {
        id: 'B3',
        what: 'gateway at low load: p50 gateway ÷ p50 direct SIP2 round trip',
        result: `${ratio.toFixed(2)} (${ms(g)} ÷ ${ms(s)})`,
        target: `<= ${TARGET}`,
        met: metOf(ratio <= TARGET, valid),
        notes,
      },
      {
        id: 'B3 raw relay',
        what: 'the raw relay the same way, for information: p50 raw relay ÷ p50 direct SIP2 round trip',
        result: `${(r / rs).toFixed(2)} (${ms(r)} ÷ ${ms(rs)})`,
        target: 'none (the floor of any relay)',
        met: relayValid ? 'n/a' : 'INVALID',
        notes: [],
      },
    ];
  } finally {
    await http.close();
    await relayHttp.close();
  }
}
