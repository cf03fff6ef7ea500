import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { type Config, loadConfigWithWarnings } from '../src/config/index.js';
import { listCount } from '../src/sip2/paging.js';
import type { SummaryList } from '../src/sip2/spec.js';
import { demoPlusLoansPatron } from './data.js';
import { httpClient, percentile, sortedOf } from './driver.js';
import { visitFloor } from './floor.js';
import { ITEM_LISTS } from './naive-items.js';
import { call, login } from './paia.js';
import { counterDelta, gatewayEnv, type Simulator, startGateway, startSimulator } from './processes.js';
import { counts, metOf, ms, type Row } from './report.js';
import type { Settings } from './settings.js';
import { openDirect, roundTripP50, unknownSettings } from './sip2-direct.js';

/**
 * B8: a discovery system's visit to "My account", as VuFind's PAIA driver
 * sends it, one call after another: login (POST auth/login with the
 * password), GET core, GET items three times (loans, holds, requests pages),
 * GET core twice more, GET fees. For alice, dave (120 loans, 5 overdue) and
 * the 10-loan patron `ten` (bench/data.ts), simulator at 20 ms per SIP2
 * message, the gateway's defaults otherwise: the pool as shipped, the item
 * cache and the account window on.
 *
 * (a) SIP2 messages per visit (simulator /counters, by message code) against
 * one complete read of the account: login + core + items + fees once each on
 * a second gateway with nothing cached (window and item cache off), in the
 * same run. Target: equal.
 * (b) the visit's p50 against the floor of the round trips it needs
 * (bench/floor.ts visitFloor: login 1 + core 1 + the items floor + fees, the
 * repeated calls served from the window at no round trip; RT = p50 of one 63
 * sent straight to the simulator, as in B2 and B7). Target <= 1.1.
 *
 * Every measured visit starts cold: the item cache's TTL is set to the
 * window's length (the window itself as shipped), and a patron's next visit
 * waits until both have run out since the end of the previous one. The
 * patrons take turns, so the waits overlap. One visit per patron first, not
 * measured, opens the pool's connections and warms the gateway up.
 */

const LATENCY_MS = 20;
const TARGET = 1.1;
const TEN = 'ten';
const TEN_LOANS = 10;
/** Beyond the window's end, before a patron's next visit: timers and the clock's granularity. */
const COLD_MARGIN_MS = 500;

const PATRONS = ['alice', 'dave', TEN] as const;

/** The calls of one visit after the login, in VuFind's order. */
const VISIT = ['core', 'items', 'items', 'items', 'core', 'core', 'fees'] as const;
type Step = 'login' | (typeof VISIT)[number];

/** Pool-level messages (SC login, SC status / keepalive): sent by the pool whatever the visit, not counted. */
const SESSION_CODES = new Set(['93', '99']);

interface Visit {
  ms: number;
  steps: Record<Step, number[]>;
  /** Account messages (pool-level ones left out), by code. */
  sent: Record<string, number>;
  /** Pool-level messages seen during the visit. */
  session: Record<string, number>;
  documents: number;
}

const total = (sent: Record<string, number>) => Object.values(sent).reduce((sum, n) => sum + n, 0);

function split(delta: Record<string, number>): { sent: Record<string, number>; session: Record<string, number> } {
  const sent: Record<string, number> = {};
  const session: Record<string, number> = {};
  for (const [code, n] of Object.entries(delta)) (SESSION_CODES.has(code) ? session : sent)[code] = n;
  return { sent, session };
}

const path = (patron: string, step: Exclude<Step, 'login'>) =>
  `/core/${encodeURIComponent(patron)}${step === 'core' ? '' : `/${step}`}`;

/** The p50 of each call of the visits, in the visit's order: "login 41 ms, core 22 ms, items 180 ms, ...". */
function stepMedians(visits: readonly Visit[]): string {
  const out: string[] = [];
  for (const step of ['login', ...VISIT] as Step[]) {
    if (out.some((entry) => entry.startsWith(`${step} `))) continue;
    const calls = visits[0]!.steps[step].length;
    const perCall = Array.from({ length: calls }, (_, i) =>
      ms(percentile(sortedOf(visits.map((v) => v.steps[step][i]!)), 50)),
    );
    out.push(`${step} ${perCall.join(' / ')}`);
  }
  return out.join(', ');
}

async function timed<T>(steps: Record<Step, number[]>, step: Step, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const result = await fn();
  steps[step].push(performance.now() - t0);
  return result;
}

async function get(http: Dispatcher, token: string, url: string): Promise<string> {
  const answer = await call(http, 'GET', url, { token });
  if (answer.status !== 200) throw new Error(`GET ${url}: HTTP ${answer.status}`);
  return answer.text;
}

/** One visit: login, then VISIT's calls one after another; all answers must be 200. */
async function visit(http: Dispatcher, simulator: Pick<Simulator, 'counters'>, patron: string): Promise<Visit> {
  const steps: Record<Step, number[]> = { login: [], core: [], items: [], fees: [] };
  const before = await simulator.counters();
  const t0 = performance.now();
  const token = await timed(steps, 'login', () => login(http, patron, `${patron}-pass`));
  let documents = -1;
  for (const step of VISIT) {
    const text = await timed(steps, step, () => get(http, token, path(patron, step)));
    if (step === 'items') documents = (JSON.parse(text) as { doc: unknown[] }).doc.length;
  }
  const elapsed = performance.now() - t0;
  return { ms: elapsed, steps, ...split(counterDelta(before, await simulator.counters())), documents };
}

/** login + core + items + fees once each: what one complete read of the account sends. */
async function completeRead(
  http: Dispatcher,
  simulator: Pick<Simulator, 'counters'>,
  patron: string,
): Promise<Record<string, number>> {
  const before = await simulator.counters();
  const token = await login(http, patron, `${patron}-pass`);
  for (const step of ['core', 'items', 'fees'] as const) await get(http, token, path(patron, step));
  return split(counterDelta(before, await simulator.counters())).sent;
}

/** The configuration a gateway started with `env` runs with (its own loader, its PAIA_* variables only). */
function configOf(env: NodeJS.ProcessEnv): Config {
  const paia = Object.fromEntries(Object.entries(env).filter(([name]) => name.startsWith('PAIA_')));
  return loadConfigWithWarnings({ env: paia }).config;
}

const LISTS: readonly SummaryList[] = [...ITEM_LISTS, 'fine'];

export async function runB8(settings: Settings): Promise<Row[]> {
  const library = demoPlusLoansPatron(TEN, TEN_LOANS);
  try {
    const simulator = await startSimulator({ latencyMs: LATENCY_MS, dataFile: library.file });
    try {
      // The list sizes of each patron from the ILS itself, and the round trip, straight to the simulator.
      const direct = await openDirect(simulator.port);
      const sizes: Record<string, Record<string, number>> = {};
      let roundTripMs: number;
      try {
        for (const patron of PATRONS) {
          const summary = await direct.connection.send(direct.requests.patronInformation(patron));
          sizes[patron] = Object.fromEntries(LISTS.map((list) => [list, listCount(summary, list) ?? 0]));
        }
        roundTripMs = await roundTripP50(direct, direct.requests.patronInformation('alice'));
      } finally {
        direct.close();
      }

      // One complete read per patron, nothing cached.
      const readEnv = gatewayEnv(simulator.port, {
        PAIA_CACHE_ACCOUNTS_ENABLED: 'false',
        PAIA_CACHE_ITEMS_ENABLED: 'false',
      });
      const complete: Record<string, Record<string, number>> = {};
      {
        const gateway = await startGateway(readEnv);
        const http = httpClient(gateway.url);
        try {
          for (const patron of PATRONS) complete[patron] = await completeRead(http, simulator, patron);
        } finally {
          await http.close();
          await gateway.stop();
        }
      }

      // The visits: the window as shipped, item cache on, its TTL the window's so both are cold between visits.
      const shipped = configOf(gatewayEnv(simulator.port, { PAIA_CACHE_ACCOUNTS_ENABLED: 'true' }));
      const windowMs = shipped.cache.accounts.windowMs;
      const extra = {
        PAIA_CACHE_ACCOUNTS_ENABLED: 'true',
        PAIA_CACHE_ITEMS_ENABLED: 'true',
        PAIA_CACHE_ITEMS_TTL_MS: String(windowMs),
      };
      const env = gatewayEnv(simulator.port, extra);
      const config = configOf(env);
      const pool = config.sip2.pool.max;
      const coldAfterMs = Math.max(windowMs, config.cache.items.ttlMs) + COLD_MARGIN_MS;

      const visits: Record<string, Visit[]> = Object.fromEntries(PATRONS.map((patron) => [patron, []]));
      const gateway = await startGateway(env);
      const http = httpClient(gateway.url);
      const started = performance.now();
      try {
        const lastEnd: Record<string, number> = {};
        for (let round = 0; round <= settings.b8Visits; round++) {
          for (const patron of PATRONS) {
            const wait = (lastEnd[patron] ?? Number.NEGATIVE_INFINITY) + coldAfterMs - performance.now();
            if (wait > 0) await sleep(wait);
            const one = await visit(http, simulator, patron);
            lastEnd[patron] = performance.now();
            // Round 0 opens the pool's connections and warms the gateway up.
            if (round > 0) visits[patron]!.push(one);
          }
        }
      } finally {
        await http.close();
        await gateway.stop();
      }
      const seconds = (performance.now() - started) / 1000;

      const rows: Row[] = [];
      const notes: string[] = [
        `each visit: POST auth/login, then GET ${VISIT.join(', ')} one after another; ${settings.b8Visits} measured visits per patron after one unmeasured, each starting cold (the patron's previous visit ended at least ${(coldAfterMs / 1000).toFixed(1)} s before: the window and the item cache had run out); ${seconds.toFixed(0)} s of visits`,
        `gateway: pool max ${pool} (min ${config.sip2.pool.min}), as shipped; PAIA_CACHE_ACCOUNTS_ENABLED=true, window ${windowMs / 1000} s and at most ${config.cache.accounts.maxPatrons} patrons as shipped; PAIA_CACHE_ITEMS_ENABLED=true, PAIA_CACHE_ITEMS_TTL_MS=${config.cache.items.ttlMs} (shipped: 15000; set to the window so that visits start cold; every visit is shorter, so within a visit the cache behaves as shipped)`,
        `complete read: POST auth/login, GET core, items, fees once each on a second gateway with PAIA_CACHE_ACCOUNTS_ENABLED=false PAIA_CACHE_ITEMS_ENABLED=false, same simulator; messages counted by code from the simulator's /counters, the pool's own 93 and 99 left out (sent when a connection opens or idles, whatever the calls)`,
      ];
      const unknown = unknownSettings(extra);
      if (unknown.length > 0) notes.push(`the gateway ignores: ${unknown.join('; ')}`);

      for (const patron of PATRONS) {
        const mine = visits[patron]!;
        const first = mine[0]!;
        const read = complete[patron]!;
        const sameEach = mine.every((v) => counts(v.sent) === counts(first.sent));
        const documents = first.documents;
        const floor = visitFloor(sizes[patron]!, documents, {
          dialect: direct.dialect,
          perPage: Math.min(direct.pageSize, direct.dialect.listLimit),
          pool,
          latencyMs: LATENCY_MS,
          roundTripMs,
        });
        const latencies = sortedOf(mine.map((v) => v.ms));
        const p50 = percentile(latencies, 50);
        const ratio = p50 / floor.ms;
        const longest = latencies.at(-1) ?? 0;
        const valid =
          mine.every((v) => v.documents === documents) && documents >= 0 && longest < config.cache.items.ttlMs;
        const messagesMet = total(first.sent) === total(read);
        const session = mine.reduce<Record<string, number>>((sum, v) => {
          for (const [code, n] of Object.entries(v.session)) sum[code] = (sum[code] ?? 0) + n;
          return sum;
        }, {});
        const own = [
          `${patron} (${counts(sizes[patron]!)}; ${documents} documents): messages per visit ${total(first.sent)} (${counts(first.sent)})` +
            `${sameEach ? ' in every visit' : `; visits differed: ${mine.map((v) => total(v.sent)).join(', ')}`}` +
            ` against one complete read ${total(read)} (${counts(read)}); pool-level messages over all ${mine.length} visits: ${counts(session)}`,
          `${patron}: visit p50 ${ms(p50)} (visits: ${mine.map((v) => ms(v.ms)).join(', ')}; the longest within the item TTL) ÷ floor ${ms(floor.ms)} = ${ratio.toFixed(2)}; ` +
            `p50 of each call (the calls of a kind in the visit's order): ${stepMedians(mine)}`,
          `${patron}: ${floor.formula}`,
        ];
        if (!valid)
          own.push(
            `INVALID (${patron}): documents per answer ${[...new Set(mine.map((v) => v.documents))].join('/')}, longest visit ${ms(longest)} against an item TTL of ${config.cache.items.ttlMs / 1000} s`,
          );
        rows.push({
          id: `B8 ${patron}`,
          what: `VuFind visit of ${patron} (login, core, items ×3, core ×2, fees), ${LATENCY_MS} ms SIP2, pool ${pool}, window on: messages per visit vs one complete read; p50 ÷ floor`,
          result: `${total(first.sent)} vs ${total(read)} messages; ${ratio.toFixed(2)} (${ms(p50)} ÷ ${ms(floor.ms)})`,
          target: `messages = complete read; <= ${TARGET}`,
          met: metOf(messagesMet && ratio <= TARGET, valid),
          notes: rows.length === 0 ? [...notes, ...own] : own,
        });
      }
      return rows;
    } finally {
      await simulator.stop();
    }
  } finally {
    library.remove();
  }
}
