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
  const first = await send(build(1, Math.min(options.pageSize, maxEntries)));
  const firstEntries = listEntries(first, list).slice(0, maxEntries);
  const announced = listCount(first, list);
  if (
    announced === null ||
    firstEntries.length >= announced ||
    firstEntries.length === 0 ||
    firstEntries.length >= maxEntries
  ) {
    return {
      entries: firstEntries,
      first,
      requests: 1,
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
  const pages = await Promise.all(starts.map((start) => send(build(start, Math.min(start + step - 1, count)))));
  const requests = 1 + pages.length;
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
