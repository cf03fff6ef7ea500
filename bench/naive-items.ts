import { listCount, listEntries } from '../src/sip2/paging.js';
import type { SummaryList } from '../src/sip2/spec.js';
import type { DirectSip2 } from './sip2-direct.js';

/**
 * The B2 baseline: what a naive, sequential translation of "GET items" would
 * send over ONE SIP2 connection. For each list (charged, overdue, recall,
 * hold, unavailableHold) the pages one after another (a page only after the
 * previous one answered), then one 17 item information per distinct entry,
 * one after another. Same messages as the gateway, none in parallel.
 */

/** The lists GET items reads, as the gateway does (src/backend/list-reads.ts items()). */
export const ITEM_LISTS: readonly SummaryList[] = ['charged', 'overdue', 'recall', 'hold', 'unavailableHold'];
const LISTS = ITEM_LISTS;

export interface NaiveItemsResult {
  /** Distinct item (or title) entries over the five lists. */
  distinct: number;
  patronInformation: number;
  itemInformation: number;
}

export async function naiveItems(direct: DirectSip2, barcode: string): Promise<NaiveItemsResult> {
  const { connection, requests, pageSize } = direct;
  let sent63 = 0;
  const all: string[] = [];
  for (const list of LISTS) {
    let start = 1;
    let got = 0;
    for (;;) {
      const page = await connection.send(
        requests.patronInformation(barcode, { list, start, end: start + pageSize - 1 }),
      );
      sent63++;
      const entries = listEntries(page, list);
      const count = listCount(page, list) ?? 0;
      all.push(...entries);
      got += entries.length;
      if (entries.length === 0 || got >= count) break;
      start += entries.length;
    }
  }
  const distinct = [...new Set(all)];
  for (const item of distinct) {
    const answer = await connection.send(requests.itemInformation(item));
    if (answer.code !== '18') throw new Error(`expected 18, got ${answer.code}`);
  }
  return { distinct: distinct.length, patronInformation: sent63, itemInformation: distinct.length };
}
