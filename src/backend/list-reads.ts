import type { Logger } from 'pino';
import {
  type Dialect,
  fetchPatronList,
  firstPageRange,
  type ItemInformationResponse,
  listCount,
  type PagingOptions,
  type PatronInformation,
  type PatronInformationResponse,
  type PatronList,
  type Sip2Messages,
  type SummaryList,
} from '../sip2/index.js';
import { isKnownPatron } from './account-state.js';
import type { ItemLookup } from './item-cache.js';
import { limiter } from './parallel.js';
import type { CallOptions } from './types.js';

/** One 63 round trip of a call (the backend's send, shared reads included). */
export type ListSend = (message: PatronInformation, options?: CallOptions) => Promise<PatronInformationResponse>;

/** The five lists an items call reads (a list not read is empty). */
export interface ItemLists {
  charged: PatronList;
  overdue: PatronList;
  recall: PatronList;
  hold: PatronList;
  unavailable: PatronList;
}

/** What an items call read: its lists, and its lookup of an entry (one 17 per item for the whole call). */
export interface ItemReads {
  lists: ItemLists;
  lookup: (entry: string) => Promise<ItemInformationResponse>;
}

export interface ListReadsOptions {
  send: ListSend;
  /** The 17 of one entry (through the item cache, when there is one). */
  itemInformation: ItemLookup;
  messages: Sip2Messages;
  /** Its listCounts (whether the 64's counts say which lists to read) and chargedIncludes. */
  dialect: Dialect;
  /** BP/BQ page size. */
  pageSize: number;
  /** The most entries read of one list. */
  maxListEntries: number;
  /** At most this many SIP2 requests of one call in the pool at once. */
  maxParallel: number;
  logger?: Logger | undefined;
}

/** The limiter priority of list requests (63) over item lookups (17, priority 0). */
const LIST_PRIORITY = 1;

/**
 * Which 64 lists a call reads, and how: pages, the counts (when the dialect
 * trusts them), and list requests before the 17s of their entries. The
 * backend makes documents and fees of what comes back.
 */
export class ListReads {
  private readonly options: ListReadsOptions;
  private readonly paging: PagingOptions;
  private warnedCounts = false;

  constructor(options: ListReadsOptions) {
    this.options = options;
    this.paging = { pageSize: options.pageSize, maxEntries: options.maxListEntries };
  }

  /**
   * The lists of an items call, with a 17 for each entry as soon as its page
   * is in; null for an unknown patron. Lists, pages and items of the call
   * share one bound on what it has in the pool at once; waiting list requests
   * go before waiting 17s: a list page names more items to ask about.
   */
  async items(barcode: string, options: CallOptions): Promise<ItemReads | null> {
    const limit = limiter(this.options.maxParallel);
    const send: ListSend = (message) => limit(() => this.options.send(message, options), LIST_PRIORITY);
    const lookups = new Map<string, Promise<ItemInformationResponse>>();
    const lookup = (entry: string): Promise<ItemInformationResponse> => {
      let info = lookups.get(entry);
      if (info === undefined) {
        info = limit(() => this.options.itemInformation(entry, options.signal));
        // Looked up before it is awaited: a call that fails first must not leave an unhandled rejection.
        info.catch(() => {});
        lookups.set(entry, info);
      }
      return info;
    };
    const lists =
      this.options.dialect.listCounts === 'reliable'
        ? await this.listsByCount(barcode, send, lookup)
        : await this.allLists(barcode, send, lookup);
    return lists === null ? null : { lists, lookup };
  }

  /** The fine list (AV), its pages under one bound per call: a patron with thousands of fines must not fill the pool's queue. */
  fines(barcode: string, options: CallOptions): Promise<PatronList> {
    const limit = limiter(this.options.maxParallel);
    return this.list(barcode, 'fine', (message) => limit(() => this.options.send(message, options)));
  }

  /**
   * Counts not to be trusted: all five lists at once, whatever the counts say, with a 17 for each entry as
   * soon as its page is in; null for an unknown patron.
   */
  private async allLists(
    barcode: string,
    send: ListSend,
    lookup: (entry: string) => Promise<unknown>,
  ): Promise<ItemLists | null> {
    const onEntries = lookEach(lookup);
    const [charged, overdue, recall, hold, unavailable] = await Promise.all([
      this.list(barcode, 'charged', send, { onEntries }),
      this.list(barcode, 'overdue', send, { onEntries }),
      this.list(barcode, 'recall', send, { onEntries }),
      this.list(barcode, 'hold', send, { onEntries }),
      this.list(barcode, 'unavailableHold', send, { onEntries }),
    ]);
    if (!isKnownPatron(charged.first)) return null;
    return { charged, overdue, recall, hold, unavailable };
  }

  /**
   * Counts to be trusted (dialect listCounts: reliable): the charged list's
   * first page comes first, and its 64 carries all six counts. Then, at
   * once: the other charged pages and only the lists whose count is not 0
   * (a blank count is unknown: that list is read), with a 17 for each entry
   * of any list as soon as its page is in. A list the dialect says is part of the
   * charged list (chargedIncludes) is read only when the charged list came
   * back incomplete.
   *
   * The trade-off: a patron with holds (or overdues the ILS does not list as
   * charged) now waits for the charged answer before those lists go out, one
   * round trip that the five-at-once read did not have; the 17s of the
   * charged entries run during it, so a patron with loans pays little or
   * nothing, and one with nothing but loans saves every other list. A patron
   * with only holds pays the extra round trip in full.
   */
  private async listsByCount(
    barcode: string,
    send: ListSend,
    lookup: (entry: string) => Promise<unknown>,
  ): Promise<ItemLists | null> {
    const range = firstPageRange(this.paging);
    const first = await send(this.options.messages.patronInformation(barcode, { list: 'charged', ...range }));
    if (!isKnownPatron(first)) return null;
    const lookAll = lookEach(lookup);
    // A charged count below the entries on its own first page: this ILS's counts cannot be trusted (one that
    // writes 0000 whatever the lists hold); then every list is read, as for a dialect whose counts are unreliable.
    const chargedCount = listCount(first, 'charged');
    const contradicted = chargedCount !== null && (first.chargedItems?.length ?? 0) > chargedCount;
    if (contradicted) this.countsContradicted(chargedCount, first.chargedItems?.length ?? 0);
    const wanted = (list: SummaryList) => contradicted || listCount(first, list) !== 0;
    const inCharged = (list: SummaryList) => (this.options.dialect.chargedIncludes as readonly string[]).includes(list);
    const none: PatronList = { entries: [], first, requests: 0, truncated: false };
    const read = (list: SummaryList, now: boolean): Promise<PatronList> => {
      if (!(wanted(list) && now)) return Promise.resolve(none);
      const reading = this.list(barcode, list, send, { onEntries: lookAll });
      // Awaited only after the charged list: should that fail first, this one's failure is not unhandled.
      reading.catch(() => {});
      return reading;
    };

    // Every list request before the first page's 17s: lists name more items to ask about, so a 17 that takes a
    // connection first makes the lists wait a round trip (alice: four round trips instead of three).
    const holdList = read('hold', true);
    const unavailableList = read('unavailableHold', true);
    const overdueList = read('overdue', !inCharged('overdue'));
    const recallList = read('recall', !inCharged('recall'));
    const chargedList = this.list(barcode, 'charged', send, { first, onEntries: lookAll });
    const charged = await chargedList;
    // Complete: the ILS announced a count and every entry of it was read.
    const complete = !contradicted && listCount(first, 'charged') !== null && !charged.truncated;
    const [overdue, recall, hold, unavailable] = await Promise.all([
      inCharged('overdue') && !complete ? read('overdue', true) : overdueList,
      inCharged('recall') && !complete ? read('recall', true) : recallList,
      holdList,
      unavailableList,
    ]);
    return { charged, overdue, recall, hold, unavailable };
  }

  /** Once per backend: the warning that the dialect's listCounts: reliable does not fit this ILS. */
  private countsContradicted(count: number, entries: number): void {
    if (this.warnedCounts) return;
    this.warnedCounts = true;
    this.options.logger?.warn(
      { dialect: this.options.dialect.name, chargedItemsCount: count, chargedItems: entries },
      'the ILS announced fewer charged items than it listed: its 64 counts cannot be trusted, so every list is read on each items call; set listCounts: unreliable in the dialect',
    );
  }

  private list(
    barcode: string,
    list: SummaryList,
    send: ListSend,
    more: Pick<PagingOptions, 'first' | 'onEntries'> = {},
  ): Promise<PatronList> {
    return fetchPatronList(
      send,
      (start, end) => this.options.messages.patronInformation(barcode, { list, start, end }),
      list,
      { ...this.paging, ...more },
    );
  }
}

/**
 * Looks up each entry of a list page as it arrives (paging's onEntries): every entry is looked up in the
 * end anyway, once per item whatever its lists (the call's lookup map), so its 17 need not wait for the
 * other lists.
 */
function lookEach(lookup: (entry: string) => Promise<unknown>): (entries: readonly string[]) => void {
  return (entries) => {
    for (const entry of entries) {
      const trimmed = entry.trim();
      if (trimmed !== '') void lookup(trimmed);
    }
  };
}
