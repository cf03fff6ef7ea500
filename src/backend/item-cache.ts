import type { CancelSignal } from '../cancel-signal.js';
import type { ItemInformation, ItemInformationResponse, Sip2Messages } from '../sip2/index.js';
import { FreshAnswers, type FreshAnswersOptions } from './fresh-answers.js';

/** Asks the ILS about one item (one 17 through the pool); `signal` is the asking call's (deadline, client gone). */
export type ItemLookup = (item: string, signal?: CancelSignal) => Promise<ItemInformationResponse>;

export interface ItemCacheOptions extends FreshAnswersOptions {
  /** Told of each item this gateway invalidates, so other instances can drop it too (the state store's channel). */
  onInvalidate?: (item: string, outcomeUnknown: boolean) => void;
}

export interface ItemCacheStats {
  /** Answers served from the cache. */
  hits: number;
  /** Lookups that went on to the ILS (identical ones at the same time share one 17 there: SharedReads). */
  misses: number;
  entries: number;
  maxEntries: number;
}

/**
 * A short-lived cache of item information (SIP2 18) by item barcode, shared
 * by `items` and DAIA: FreshAnswers by item. Only answers are kept, never
 * failures. A miss asks its own lookup: concurrent lookups of one item share
 * a single 17 beneath the cache (SharedReads, in the lane of the call that
 * asks, so a patron's lookup never waits behind DAIA's share of the pool).
 * The backend invalidates an item once a write's outcome is known (or
 * unknown), and tells other instances (onInvalidate).
 */
export class ItemInfoCache {
  private readonly answers: FreshAnswers<ItemInformationResponse>;
  private readonly onInvalidate: ((item: string, outcomeUnknown: boolean) => void) | undefined;
  private hits = 0;
  private misses = 0;

  constructor(options: ItemCacheOptions) {
    this.answers = new FreshAnswers(options);
    this.onInvalidate = options.onInvalidate;
  }

  /**
   * The cached answer for `item`, else the answer of `lookup(item, signal)`,
   * stored unless the item was invalidated while it was on its way.
   */
  get(item: string, lookup: ItemLookup, signal?: CancelSignal): Promise<ItemInformationResponse> {
    const cached = this.answers.cached(item);
    if (cached !== undefined) {
      this.hits += 1;
      return Promise.resolve(cached);
    }
    // A caller that has already given up asks nothing (the lookup rejects it at once): neither a hit nor a miss.
    if (signal?.aborted !== true) this.misses += 1;
    return this.answers.read(item, () => lookup(item, signal));
  }

  /**
   * Forgets `item`: the next get() asks the ILS, and an answer already on its
   * way is not kept. `outcomeUnknown`: a write of the item went out but was
   * never confirmed, so the ILS may still apply it; for one TTL its answers
   * are passed on but not kept.
   */
  invalidate(item: string, options: { outcomeUnknown?: boolean; fromPeer?: boolean } = {}): void {
    // An invalidation heard from another instance is not passed on again.
    if (!options.fromPeer) this.onInvalidate?.(item, options.outcomeUnknown ?? false);
    this.answers.invalidate(item, options.outcomeUnknown ?? false);
  }

  stats(): ItemCacheStats {
    return { hits: this.hits, misses: this.misses, entries: this.answers.size, maxEntries: this.answers.maxEntries };
  }
}

/**
 * The one way items and DAIA ask about an item: through the cache when there
 * is one, else straight to the ILS.
 */
export function itemLookup(
  send: (message: ItemInformation, options?: { signal?: CancelSignal | undefined }) => Promise<ItemInformationResponse>,
  messages: Pick<Sip2Messages, 'itemInformation'>,
  cache: ItemInfoCache | null | undefined,
): ItemLookup {
  // async: a message that cannot be built rejects instead of throwing synchronously.
  const ask: ItemLookup = async (item, signal) => send(messages.itemInformation(item), { signal });
  return cache ? (item, signal) => cache.get(item, ask, signal) : ask;
}
