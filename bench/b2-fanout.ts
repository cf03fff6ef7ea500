import type { Client } from 'undici';
import { listCount } from '../src/sip2/paging.js';
import { httpClient, percentile, sequential, sortedOf } from './driver.js';
import { itemsFloor } from './floor.js';
import { ITEM_LISTS as LISTS, type NaiveItemsResult, naiveItems } from './naive-items.js';
import { items, login } from './paia.js';
import { counterDelta, gatewayEnv, type Simulator, startGateway, startSimulator } from './processes.js';
import { counts, metOf, ms, type Row } from './report.js';
import type { Settings } from './settings.js';
import { openDirect, roundTripP50, unknownSettings } from './sip2-direct.js';

/**
 * B2: GET /core/dave/items (120 loans, 5 of them overdue) against a simulator
 * that answers every SIP2 message after 20 ms, pool 8, item cache off: how
 * close the gateway's parallel fan-out comes to the floor of the messages the
 * answer needs (bench/floor.ts). Plus a naive sequential baseline over one
 * connection and the same call with a warm item cache.
 */

const LATENCY_MS = 20;
const POOL = 8;
const TARGET = 1.1;
const PATRON = 'dave';

interface GatewayRun {
  p50: number;
  p99: number;
  docs: number[];
  perCall: Record<string, number>;
  unknown: string[];
}

/** Starts a gateway, logs in dave, 2 warm-ups, one call between counter reads, then `calls` timed calls one at a time. */
async function measureGateway(simulator: Simulator, extra: Record<string, string>, calls: number): Promise<GatewayRun> {
  const env = gatewayEnv(simulator.port, {
    PAIA_SIP2_POOL_MIN: String(POOL),
    PAIA_SIP2_POOL_MAX: String(POOL),
    ...extra,
  });
  const gateway = await startGateway(env);
  let http: Client | undefined;
  try {
    http = httpClient(gateway.url);
    const token = await login(http, PATRON, `${PATRON}-pass`);
    const docs: number[] = [];
    const call = async () => {
      docs.push((await items(http!, token, PATRON)).length);
    };
    await call();
    await call();
    const before = await simulator.counters();
    await call();
    const perCall = counterDelta(before, await simulator.counters());
    const latencies = sortedOf(await sequential(calls, call));
    return {
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      docs,
      perCall,
      unknown: unknownSettings(extra),
    };
  } finally {
    await http?.close();
    await gateway.stop();
  }
}

export async function runB2(settings: Settings): Promise<Row[]> {
  const simulator = await startSimulator({ latencyMs: LATENCY_MS });
  try {
    // The list sizes, from the ILS itself (one 63 without a list gives all counts).
    const direct = await openDirect(simulator.port);
    let listSizes: Record<string, number>;
    let naive: { p50: number; runs: number[]; result: NaiveItemsResult; perRun: Record<string, number> };
    let roundTripMs: number;
    try {
      roundTripMs = await roundTripP50(direct, direct.requests.patronInformation(PATRON));
      const summary = await direct.connection.send(direct.requests.patronInformation(PATRON));
      listSizes = Object.fromEntries(LISTS.map((list) => [list, listCount(summary, list) ?? 0]));

      const runs: number[] = [];
      let result: NaiveItemsResult | undefined;
      let perRun: Record<string, number> = {};
      for (let i = 0; i < settings.b2NaiveRuns; i++) {
        const before = await simulator.counters();
        const [elapsed] = await sequential(1, async () => {
          result = await naiveItems(direct, PATRON);
        });
        perRun = counterDelta(before, await simulator.counters());
        runs.push(elapsed!);
      }
      naive = { p50: percentile(sortedOf(runs), 50), runs, result: result!, perRun };
    } finally {
      direct.close();
    }

    const noCache = await measureGateway(simulator, { PAIA_CACHE_ITEMS_ENABLED: 'false' }, settings.b2Calls);
    const cached = await measureGateway(
      simulator,
      { PAIA_CACHE_ITEMS_ENABLED: 'true', PAIA_CACHE_ITEMS_TTL_MS: '300000' },
      settings.b2Calls,
    );

    const D = noCache.docs[noCache.docs.length - 1] ?? 0;
    const floor = itemsFloor(listSizes, D, {
      dialect: direct.dialect,
      perPage: Math.min(direct.pageSize, direct.dialect.listLimit),
      pool: POOL,
      latencyMs: LATENCY_MS,
      roundTripMs,
    });
    const minimum = floor.ms;
    const ratio = noCache.p50 / minimum;
    const docsConsistent = noCache.docs.every((n) => n === D) && D > 0;

    const noCacheNotes = [
      `${floor.formula} (list sizes: ${counts(listSizes)})`,
      `gateway p50 ${ms(noCache.p50)}, p99 ${ms(noCache.p99)} over ${settings.b2Calls} sequential calls after 2 warm-ups; one call sent ${counts(noCache.perCall)} (simulator GET /counters before/after)`,
    ];
    if (!docsConsistent) noCacheNotes.push(`INVALID: answers had ${[...new Set(noCache.docs)].join('/')} documents`);
    if (noCache.unknown.length > 0) noCacheNotes.push(`the gateway ignores: ${noCache.unknown.join('; ')}`);

    const cachedNotes = [
      `second gateway with PAIA_CACHE_ITEMS_ENABLED=true PAIA_CACHE_ITEMS_TTL_MS=300000, after one warming call: p50 ${ms(cached.p50)}, p99 ${ms(cached.p99)}; one call sent ${counts(cached.perCall)}`,
    ];
    if (cached.unknown.length > 0)
      cachedNotes.push(`the gateway ignores: ${cached.unknown.join('; ')} (so this row is NOT a cached result)`);
    const cachedValid = cached.docs.every((n) => n === D);

    return [
      {
        id: 'B2',
        what: `fan-out GET /core/dave/items, ${LATENCY_MS} ms SIP2, pool ${POOL}, no cache: p50 ÷ floor`,
        result: `${ratio.toFixed(2)} (${ms(noCache.p50)} ÷ ${ms(minimum)})`,
        target: `<= ${TARGET}`,
        met: metOf(ratio <= TARGET, docsConsistent),
        notes: noCacheNotes,
      },
      {
        id: 'B2 baseline',
        what: 'naive sequential translation, one SIP2 connection: p50 ÷ floor',
        result: `${(naive.p50 / minimum).toFixed(2)} (${ms(naive.p50)} ÷ ${ms(minimum)})`,
        target: 'none (baseline)',
        met: 'n/a',
        notes: [
          `p50 of ${naive.runs.length} runs (${naive.runs.map((r) => ms(r)).join(', ')}); one run sent ${counts(naive.perRun)} for ${naive.result.distinct} distinct items, all one after another`,
        ],
      },
      {
        id: 'B2 cached',
        what: 'same call, item cache on and warm: p50 ÷ floor',
        result: `${(cached.p50 / minimum).toFixed(2)} (${ms(cached.p50)} ÷ ${ms(minimum)})`,
        target: 'none',
        met: cachedValid ? 'n/a' : 'INVALID',
        notes: cachedNotes,
      },
    ];
  } finally {
    await simulator.stop();
  }
}
