import { httpClient, httpLoop, httpPool, type LoopResult, percentile, sequential, sortedOf } from './driver.js';
import { login } from './paia.js';
import { type Gateway, gatewayEnv, startGateway, startRedis, startSimulator } from './processes.js';
import { counts, metOf, ms, perSecond, type Row } from './report.js';
import type { Settings } from './settings.js';

/**
 * B6: several instances on one Redis (issue 14). Two numbers, from one run:
 *
 * - throughput of GET /core/alice with two gateway processes sharing one
 *   Redis (the token from one used on both, half the connections each)
 *   divided by one gateway process on the same Redis, same driver;
 * - the store's added p50 per call: sequential GET /core/alice on one
 *   gateway with the redis store minus the same on the memory store
 *   (alternating batches), which is what a patron's call pays for its
 *   session check and rate-limit count going over the network.
 *
 * Simulator at 0 ms, pool 4 per gateway. On a 2-core machine the driver,
 * the simulator, Redis and the gateways share the cores, so the ratio says
 * how much a second process can add there, not what a second machine adds.
 */

const POOL = '4';
const BATCH = 50;
/** The store's added p50 per call is expected to stay below this (a loopback Redis answers in well under a millisecond). */
const ADDED_P50_TARGET_MS = 1;
/** Two processes on one Redis should not serve less than one. */
const RATIO_TARGET = 1;

function describe(result: LoopResult): string {
  return `${perSecond(result.requestsPerSecond)} (p50 ${ms(result.p50)}, p99 ${ms(result.p99)}; statuses ${counts(result.outcomes)})`;
}

export async function runB6(settings: Settings): Promise<Row[]> {
  const simulator = await startSimulator();
  const redis = await startRedis();
  const gateways: Gateway[] = [];
  const gateway = async (extra: Record<string, string>) => {
    const g = await startGateway(
      gatewayEnv(simulator.port, {
        PAIA_SIP2_POOL_MIN: POOL,
        PAIA_SIP2_POOL_MAX: POOL,
        PAIA_LOG_LEVEL: 'warn',
        ...extra,
      }),
    );
    gateways.push(g);
    return g;
  };
  const onRedis = { PAIA_STATE_STORE: 'redis', PAIA_STATE_REDIS_URL: redis.url, PAIA_STATE_REDIS_KEY_PREFIX: 'b6:' };
  try {
    // The store's added latency: one gateway per store, sequential calls in alternating batches.
    const memory = await gateway({});
    const shared = await gateway(onRedis);
    const sample = async (g: Gateway) => {
      const http = httpPool(g.url, 1);
      const token = await login(http, 'alice', 'alice-pass');
      await http.close();
      const client = httpClient(g.url);
      const call = async () => {
        const response = await client.request({
          path: '/core/alice',
          method: 'GET',
          headers: { authorization: `Bearer ${token}` },
        });
        await response.body.arrayBuffer();
        if (response.statusCode !== 200) throw new Error(`GET /core/alice: ${response.statusCode}`);
      };
      return { call, close: () => client.close() };
    };
    const viaMemory = await sample(memory);
    const viaRedis = await sample(shared);
    const memoryTimes: number[] = [];
    const redisTimes: number[] = [];
    await sequential(BATCH, viaMemory.call);
    await sequential(BATCH, viaRedis.call);
    for (let batch = 0; batch < settings.b3Batches; batch++) {
      memoryTimes.push(...(await sequential(BATCH, viaMemory.call)));
      redisTimes.push(...(await sequential(BATCH, viaRedis.call)));
    }
    await Promise.all([viaMemory.close(), viaRedis.close()]);
    const m = sortedOf(memoryTimes);
    const r = sortedOf(redisTimes);
    const added = percentile(r, 50) - percentile(m, 50);
    await memory.stop();

    // Throughput: one gateway on Redis, then two on the same Redis (and prefix), the same token on both.
    const http = httpPool(shared.url, 1);
    const token = await login(http, 'alice', 'alice-pass');
    await http.close();
    const headers = { authorization: `Bearer ${token}` };
    const loop = { warmupMs: settings.warmupMs, durationMs: settings.durationMs, path: '/core/alice', headers };
    const one = await httpLoop({ origin: shared.url, connections: settings.b1Connections, ...loop });
    const second = await gateway(onRedis);
    const half = Math.max(1, Math.floor(settings.b1Connections / 2));
    const [a, b] = await Promise.all([
      httpLoop({ origin: shared.url, connections: half, ...loop }),
      httpLoop({ origin: second.url, connections: half, ...loop }),
    ]);
    const two = a.requestsPerSecond + b.requestsPerSecond;
    const ratio = two / one.requestsPerSecond;
    const valid = one.failures === 0 && a.failures === 0 && b.failures === 0 && one.completed > 0;

    const notes = [
      `one gateway on Redis: ${describe(one)}`,
      `two gateways on one Redis: ${perSecond(two)} in all; first ${describe(a)}; second ${describe(b)} (the token was issued by the first)`,
      `sequential GET /core/alice p50: redis store ${ms(percentile(r, 50))} (p99 ${ms(percentile(r, 99))}), memory store ${ms(percentile(m, 50))} (p99 ${ms(percentile(m, 99))}); ${r.length} samples each in alternating batches of ${BATCH}`,
      `driver: ${settings.b1Connections} connections (split evenly over two gateways), ${settings.warmupMs / 1000} s warm-up + ${settings.durationMs / 1000} s; pool min=max=${POOL} per gateway, simulator 0 ms, redis-server on loopback without persistence`,
    ];
    if (!valid) notes.push(`INVALID: non-200 answers (${one.failures}, ${a.failures}, ${b.failures})`);
    return [
      {
        id: 'B6',
        what: 'two gateways on one Redis ÷ one gateway (throughput)',
        result: `${ratio.toFixed(2)} (${perSecond(two)} ÷ ${perSecond(one.requestsPerSecond)})`,
        target: `>= ${RATIO_TARGET}`,
        met: metOf(ratio >= RATIO_TARGET, valid),
        notes,
      },
      {
        id: 'B6',
        what: 'p50 added per call by the redis store',
        result: ms(added),
        target: `<= ${ms(ADDED_P50_TARGET_MS)}`,
        met: metOf(added <= ADDED_P50_TARGET_MS, valid),
        notes: [],
      },
    ];
  } finally {
    await Promise.all(gateways.map((g) => g.stop()));
    await redis.stop();
    await simulator.stop();
  }
}
