import type { PatronInformation, PatronInformationResponse, SummaryList } from './spec.js';

/** Which 64 count field announces the length of each list. */
const COUNT_FIELD = {
  hold: 'holdItemsCount',
  overdue: 'overdueItemsCount',
  charged: 'chargedItemsCount',
  fine: 'fineItemsCount',
  recall: 'recallItemsCount',
  unavailableHold: 'unavailableHoldsCount',
} as const satisfies Record<SummaryList, keyof PatronInformationResponse>;

/** Which 64 field carries each list. */
export const LIST_FIELD = {
  hold: 'holdItems',
  overdue: 'overdueItems',
  charged: 'chargedItems',
  fine: 'fineItems',
  recall: 'recallItems',
  unavailableHold: 'unavailableHoldItems',
} as const satisfies Record<SummaryList, keyof PatronInformationResponse>;

export interface PatronList {
  entries: string[];
  /** The first page's response: patron data and all six counts come with every page. */
  first: PatronInformationResponse;
  /** How many 63 round trips it took. */
  requests: number;
  /**
   * Fewer entries than the ILS announced (it ignores BP/BQ, pages came back
   * short, or the list was longer than the bound): the caller may log it.
   */
  truncated: boolean;
}

/** The most entries read of one list when the caller names no bound (sip2.maxListEntries). */
export const DEFAULT_MAX_LIST_ENTRIES = 10_000;

export interface PagingOptions {
  /** BP/BQ page size asked for. */
  pageSize: number;
  /** The most entries read, whatever count the ILS announces. */
  maxEntries?: number;
  /** The first page, when the caller already has it (it asked for page 1 itself): it is not asked for again. */
  first?: PatronInformationResponse;
  /**
   * Told of each page's entries as soon as the page is in (the first page
   * once the requests for the others are out), so work on them can start
   * before the last page arrives. Entries of pages found to repeat the first
   * (an ILS ignoring BP/BQ) may be among them.
   */
  onEntries?: (entries: readonly string[]) => void;
}

/** The BP/BQ range of the first page. */
export function firstPageRange(options: PagingOptions): { start: number; end: number } {
  return { start: 1, end: Math.min(options.pageSize, options.maxEntries ?? DEFAULT_MAX_LIST_ENTRIES) };
}

export function listEntries(response: PatronInformationResponse, list: SummaryList): string[] {
  return response[LIST_FIELD[list]] ?? [];
}

export function listCount(response: PatronInformationResponse, list: SummaryList): number | null {
  return response[COUNT_FIELD[list]];
}

/**
 * Reads one whole 64 list, paging with BP/BQ. The first page tells the count
 * and how many entries the ILS really returns per page (it may cap below what
 * we ask for); the remaining pages are then asked for in parallel. That is
 * all: never more pages than the count (capped at `maxEntries`) calls for at
 * that page size, whatever the ILS claims, so an ILS announcing 9,999
 * entries costs at most maxEntries / page size requests, and one whose count
 * is wrong cannot make it loop. Positions a short page left empty stay empty
 * (`truncated`).
 */
export async function fetchPatronList(
  send: (request: PatronInformation) => Promise<PatronInformationResponse>,
  build: (start: number, end: number) => PatronInformation,
  list: SummaryList,
  options: PagingOptions,
): Promise<PatronList> {
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_LIST_ENTRIES;
  const range = firstPageRange(options);
  const first = options.first ?? (await send(build(range.start, range.end)));
  const firstRequests = options.first === undefined ? 1 : 0;
  const firstEntries = listEntries(first, list).slice(0, maxEntries);
  const announced = listCount(first, list);
  if (
    announced === null ||
    firstEntries.length >= announced ||
    firstEntries.length === 0 ||
    firstEntries.length >= maxEntries
  ) {
    options.onEntries?.(firstEntries);
    return {
      entries: firstEntries,
      first,
      requests: firstRequests,
      truncated: announced !== null && firstEntries.length < announced,
    };
  }
  const count = Math.min(announced, maxEntries);
  const slots: Array<string | undefined> = Array.from({ length: count }, () => undefined);
  firstEntries.forEach((entry, i) => {
    slots[i] = entry;
  });
  const step = firstEntries.length;
  const starts: number[] = [];
  for (let start = step + 1; start <= count; start += step) starts.push(start);
  const pending = starts.map((start) => send(build(start, Math.min(start + step - 1, count))));
  options.onEntries?.(firstEntries);
  const pages = await Promise.all(
    options.onEntries
      ? pending.map((page, i) =>
          page.then((response) => {
            // Only the positions the count leaves this page: entries beyond it are dropped below, never looked up.
            const room = count - (starts[i]! - 1);
            options.onEntries?.(listEntries(response, list).slice(0, Math.min(step, room)));
            return response;
          }),
        )
      : pending,
  );
  const requests = firstRequests + pages.length;
  // An ILS that ignores BP/BQ answers every page with the first entries again: keep the first page only.
  if (pages.some((page) => listEntries(page, list)[0] === firstEntries[0])) {
    return { entries: firstEntries, first, requests, truncated: true };
  }
  pages.forEach((page, i) => {
    place(slots, starts[i]! - 1, listEntries(page, list).slice(0, step));
  });
  const entries = slots.filter((entry): entry is string => entry !== undefined);
  return { entries, first, requests, truncated: entries.length < announced };
}

/** Puts a page's entries at their list positions; entries beyond the announced count are dropped. */
function place(slots: Array<string | undefined>, offset: number, page: string[]): void {
  page.forEach((entry, j) => {
    if (offset + j < slots.length) slots[offset + j] = entry;
  });
}
