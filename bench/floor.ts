import type { Dialect } from '../src/sip2/dialect.js';
import type { SummaryList } from '../src/sip2/spec.js';

/**
 * The least time GET items can take against an ILS whose round trip takes
 * `roundTripMs` (measured in the same run by sending a message straight to
 * the simulator: its configured wait plus what timers and scheduling add on
 * this machine, so the floor is one a client could reach), over `pool`
 * connections, counting only the messages the answer really needs (B2, B7):
 *
 * - the charged list's first page: alone, since its 64 tells (by the counts)
 *   what else is needed;
 * - then everything else, `pool` at a time: the other charged pages, one 63
 *   per page of each other list whose count is not 0 (none for a list the
 *   dialect says is part of the charged list, chargedIncludes, once that is
 *   complete), and one 17 per document.
 *
 * floor = (1 + ceil(rest / pool)) × round trip, where rest = messages after the
 * first. A dependency the formula ignores (a 17 can only follow the page
 * naming its item) costs nothing as long as the first page names at least
 * `pool` items, as it does here; with counts not to be trusted all five lists
 * go out at once instead, and the floor would be that of today's flow.
 */
export interface Floor {
  ms: number;
  /** 63s needed: the charged pages plus the pages of the other lists needed. */
  lists: number;
  /** 17s needed: one per document. */
  items: number;
  /** Round trips on the critical path: the first page, then the rest pool at a time. */
  rounds: number;
  /** How it was computed, for the notes. */
  formula: string;
}

const OTHER_LISTS: readonly SummaryList[] = ['overdue', 'recall', 'hold', 'unavailableHold'];

export function itemsFloor(
  sizes: Readonly<Record<string, number>>,
  documents: number,
  options: { dialect: Dialect; perPage: number; pool: number; latencyMs: number; roundTripMs: number },
): Floor {
  const { dialect, perPage, pool, latencyMs, roundTripMs } = options;
  const pages = (n: number) => Math.max(1, Math.ceil(n / perPage));
  const chargedPages = pages(sizes.charged ?? 0);
  const others = OTHER_LISTS.filter(
    (list) => (sizes[list] ?? 0) > 0 && !(dialect.chargedIncludes as readonly string[]).includes(list),
  );
  const lists = chargedPages + others.reduce((sum, list) => sum + pages(sizes[list] ?? 0), 0);
  const rest = lists - 1 + documents;
  const rounds = 1 + Math.ceil(rest / pool);
  const ms = rounds * roundTripMs;
  const rt = roundTripMs.toFixed(1);
  const formula =
    `floor = (1 + ceil((L - 1 + D) / ${pool})) × RT = (1 + ceil((${lists} - 1 + ${documents}) / ${pool})) × ${rt} ms = ${rounds} × ${rt} = ${ms.toFixed(1)} ms; ` +
    `RT = ${rt} ms, p50 of one 63 sent straight to the simulator (its ${latencyMs} ms wait plus timers and scheduling here; ${rounds} × ${latencyMs} ms = ${rounds * latencyMs} ms without them); ` +
    `L = ${lists} list requests needed (${chargedPages} charged page${chargedPages === 1 ? '' : 's'} of ${perPage}` +
    `${others.length > 0 ? `, plus ${others.join(', ')}` : ''}; lists with count 0${dialect.chargedIncludes.length > 0 ? ` or part of the charged list (${dialect.chargedIncludes.join(', ')})` : ''} are not read), D = ${documents} documents (one 17 each)`;
  return { ms, lists, items: documents, rounds, formula };
}

/**
 * The least time a discovery system's visit (B8: login, core, items three
 * times, core twice more, fees) can take when the calls after the first
 * read of each kind are served from the account window:
 *
 * - login: one 63 with the password, 1 round trip;
 * - core: one 63, 1 round trip;
 * - items: itemsFloor above;
 * - fees: the fine list's first page alone (its 64 tells how many fines),
 *   then its other pages `pool` at a time;
 * - the repeated items and core calls: no round trip.
 *
 * floor = (2 + items rounds + fee rounds) × round trip.
 */
export function visitFloor(
  sizes: Readonly<Record<string, number>>,
  documents: number,
  options: { dialect: Dialect; perPage: number; pool: number; latencyMs: number; roundTripMs: number },
): Floor {
  const { perPage, pool, roundTripMs } = options;
  const items = itemsFloor(sizes, documents, options);
  const finePages = Math.max(1, Math.ceil((sizes.fine ?? 0) / perPage));
  const feeRounds = 1 + Math.ceil((finePages - 1) / pool);
  const rounds = 2 + items.rounds + feeRounds;
  const ms = rounds * roundTripMs;
  const rt = roundTripMs.toFixed(1);
  const formula =
    `floor = (login 1 + core 1 + items ${items.rounds} + fees ${feeRounds}) × RT = ${rounds} × ${rt} ms = ${ms.toFixed(1)} ms ` +
    `(fees: ${sizes.fine ?? 0} fines, ${finePages} page${finePages === 1 ? '' : 's'} of ${perPage}; the two repeated items calls and two repeated core calls 0 RT); items: ${items.formula}`;
  // 63s: login, core, the items lists, the fine pages.
  return { ms, lists: 2 + items.lists + finePages, items: documents, rounds, formula };
}
