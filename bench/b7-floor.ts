import type { Dispatcher } from 'undici';
import { listCount } from '../src/sip2/paging.js';
import { demoPlusLoansPatron } from './data.js';
import { httpClient, percentile, sequential, sortedOf } from './driver.js';
import { itemsFloor } from './floor.js';
import { ITEM_LISTS } from './naive-items.js';
import { call, login } from './paia.js';
import { counterDelta, gatewayEnv, type Simulator, startGateway, startSimulator } from './processes.js';
import { counts, metOf, ms, type Row } from './report.js';
import type { Settings } from './settings.js';
import { openDirect, roundTripP50, unknownSettings } from './sip2-direct.js';

/**
 * B7: a patron with 10 loans and nothing else, GET /core/ten/items against a
 * simulator that answers every SIP2 message after 20 ms, pool 4 (as in the
 * peer comparison of issue 17), item cache off: p50 over sequential calls
 * divided by the floor of the messages the answer needs (bench/floor.ts: one
 * 63, then ceil(10 / 4) rounds of 17s, each the round trip of one message
 * sent straight to the simulator in this run). The patron is added to a copy
 * of the demo data (bench/data.ts); the demo patrons are unchanged.
 *
 * Also the SIP2 messages per call (simulator GET /counters) of alice, dave
 * and the 10-loan patron: GET items, and the full account view (patron +
 * items + fees). messagesPerCall() is what bench/RESULTS.md's "Messages per
 * call" table comes from.
 */

const LATENCY_MS = 20;
const POOL = 4;
const TARGET = 1.1;
const PATRON = 'ten';
const LOANS = 10;

/** The patrons of the messages table and their passwords (demo data, plus the bench's own). */
const MESSAGE_PATRONS: ReadonlyArray<{ barcode: string; password: string }> = [
  { barcode: 'alice', password: 'alice-pass' },
  { barcode: 'dave', password: 'dave-pass' },
  { barcode: PATRON, password: `${PATRON}-pass` },
];

interface PatronMessages {
  patron: string;
  items: Record<string, number>;
  patronInfo: Record<string, number>;
  fees: Record<string, number>;
}

const total = (sent: Record<string, number>) => Object.values(sent).reduce((sum, n) => sum + n, 0);

/** What each GET sends to the ILS, one call at a time (63 and 17 only: the pool may open a session meanwhile). */
export async function messagesPerCall(
  http: Dispatcher,
  simulator: Pick<Simulator, 'counters'>,
  patrons: ReadonlyArray<{ barcode: string; password: string }> = MESSAGE_PATRONS,
): Promise<PatronMessages[]> {
  const out: PatronMessages[] = [];
  for (const { barcode, password } of patrons) {
    const token = await login(http, barcode, password);
    const sent = async (path: string) => {
      const before = await simulator.counters();
      const answer = await call(http, 'GET', path, { token });
      if (answer.status !== 200) throw new Error(`${path}: HTTP ${answer.status}`);
      const delta = counterDelta(before, await simulator.counters());
      return Object.fromEntries(Object.entries(delta).filter(([code]) => code === '63' || code === '17'));
    };
    const base = `/core/${encodeURIComponent(barcode)}`;
    out.push({
      patron: barcode,
      patronInfo: await sent(base),
      items: await sent(`${base}/items`),
      fees: await sent(`${base}/fees`),
    });
  }
  return out;
}

/** One line per patron: GET items, and patron + items + fees. */
export function describeMessages(rows: readonly PatronMessages[]): string[] {
  return rows.map(
    (row) =>
      `${row.patron}: GET items ${total(row.items)} (${counts(row.items)}); account view (patron + items + fees) ${
        total(row.patronInfo) + total(row.items) + total(row.fees)
      } (patron ${total(row.patronInfo)}, fees ${total(row.fees)})`,
  );
}

export async function runB7(settings: Settings): Promise<Row[]> {
  const library = demoPlusLoansPatron(PATRON, LOANS);
  try {
    const simulator = await startSimulator({ latencyMs: LATENCY_MS, dataFile: library.file });
    try {
      const direct = await openDirect(simulator.port);
      let sizes: Record<string, number>;
      let roundTripMs: number;
      try {
        const summary = await direct.connection.send(direct.requests.patronInformation(PATRON));
        sizes = Object.fromEntries(ITEM_LISTS.map((list) => [list, listCount(summary, list) ?? 0]));
        roundTripMs = await roundTripP50(direct, direct.requests.patronInformation(PATRON));
      } finally {
        direct.close();
      }
      const extra = {
        PAIA_SIP2_POOL_MIN: String(POOL),
        PAIA_SIP2_POOL_MAX: String(POOL),
        PAIA_CACHE_ITEMS_ENABLED: 'false',
      };
      const gateway = await startGateway(gatewayEnv(simulator.port, extra));
      const http = httpClient(gateway.url);
      try {
        const token = await login(http, PATRON, library.patron.password);
        const docs: number[] = [];
        const itemsCall = async () => {
          const answer = await call(http, 'GET', `/core/${PATRON}/items`, { token });
          if (answer.status !== 200) throw new Error(`items ${PATRON}: HTTP ${answer.status}`);
          docs.push((JSON.parse(answer.text) as { doc: unknown[] }).doc.length);
        };
        await itemsCall();
        await itemsCall();
        const before = await simulator.counters();
        await itemsCall();
        const perCall = counterDelta(before, await simulator.counters());
        const latencies = sortedOf(await sequential(settings.b7Calls, itemsCall));
        const p50 = percentile(latencies, 50);
        const p99 = percentile(latencies, 99);
        const D = docs.at(-1) ?? 0;
        const valid = D === LOANS && docs.every((n) => n === D);
        const floor = itemsFloor(sizes, D, {
          dialect: direct.dialect,
          perPage: Math.min(direct.pageSize, direct.dialect.listLimit),
          pool: POOL,
          latencyMs: LATENCY_MS,
          roundTripMs,
        });
        const ratio = p50 / floor.ms;
        const messages = await messagesPerCall(http, simulator);

        const notes = [
          floor.formula,
          `gateway p50 ${ms(p50)}, p99 ${ms(p99)} over ${settings.b7Calls} sequential calls after 2 warm-ups; ≈ ${(p50 / roundTripMs).toFixed(1)} round trips per call (p50 ÷ RT; the floor is ${floor.rounds}); one call sent ${counts(perCall)} = ${total(perCall)} messages (simulator GET /counters before/after)`,
          `list sizes of ${PATRON}: ${counts(sizes)}`,
        ];
        if (!valid) notes.push(`INVALID: answers had ${[...new Set(docs)].join('/')} documents, expected ${LOANS}`);
        const unknown = unknownSettings(extra);
        if (unknown.length > 0) notes.push(`the gateway ignores: ${unknown.join('; ')}`);
        return [
          {
            id: 'B7',
            what: `GET /core/${PATRON}/items (${LOANS} loans), ${LATENCY_MS} ms SIP2, pool ${POOL}, no cache: p50 ÷ floor`,
            result: `${ratio.toFixed(2)} (${ms(p50)} ÷ ${ms(floor.ms)})`,
            target: `<= ${TARGET}`,
            met: metOf(ratio <= TARGET, valid),
            notes,
          },
          {
            id: 'B7 messages',
            what: 'SIP2 messages per call (simulator /counters), one call at a time',
            result: messages.map((row) => `${row.patron} ${total(row.items)}`).join(', '),
            target: 'none',
            met: 'n/a',
            notes: describeMessages(messages),
          },
        ];
      } finally {
        await http.close();
        await gateway.stop();
      }
    } finally {
      await simulator.stop();
    }
  } finally {
    library.remove();
  }
}
