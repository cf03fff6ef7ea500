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
  /** Fewer entries than the ILS announced (it ignores BP/BQ, or pages came back short): the caller may log it. */
  truncated: boolean;
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
 * we ask for); the remaining pages are then asked for in parallel, and any gap
 * a short page leaves is filled one page at a time. Stops when a page brings
 * nothing new, so an ILS whose count is wrong cannot make it loop.
 */
export async function fetchPatronList(
  send: (request: PatronInformation) => Promise<PatronInformationResponse>,
  build: (start: number, end: number) => PatronInformation,
  list: SummaryList,
  pageSize: number,
): Promise<PatronList> {
  let requests = 1;
  const first = await send(build(1, pageSize));
  const firstEntries = listEntries(first, list);
  const count = listCount(first, list);
  if (count === null || firstEntries.length >= count || firstEntries.length === 0) {
    return { entries: firstEntries, first, requests, truncated: count !== null && firstEntries.length < count };
  }
  const slots: Array<string | undefined> = Array.from({ length: count }, () => undefined);
  firstEntries.forEach((entry, i) => (slots[i] = entry));
  const step = firstEntries.length;
  const starts: number[] = [];
  for (let start = step + 1; start <= count; start += step) starts.push(start);
  const pages = await Promise.all(starts.map((start) => send(build(start, Math.min(start + step - 1, count)))));
  requests += pages.length;
  // An ILS that ignores BP/BQ answers every page with the first entries again: keep the first page only.
  if (pages.some((page) => listEntries(page, list)[0] === firstEntries[0])) {
    return { entries: firstEntries, first, requests, truncated: true };
  }
  pages.forEach((page, i) => place(slots, starts[i]! - 1, listEntries(page, list)));

  for (let gap = slots.indexOf(undefined); gap !== -1 && gap < count; gap = slots.indexOf(undefined)) {
    const page = listEntries(await send(build(gap + 1, Math.min(gap + step, count))), list);
    requests++;
    if (page.length === 0) break;
    place(slots, gap, page);
  }
  const entries = slots.filter((entry): entry is string => entry !== undefined);
  return { entries, first, requests, truncated: entries.length < count };
}

/** Puts a page's entries at their list positions; entries beyond the announced count are dropped. */
function place(slots: Array<string | undefined>, offset: number, page: string[]): void {
  page.forEach((entry, j) => {
    if (offset + j < slots.length) slots[offset + j] = entry;
  });
}
