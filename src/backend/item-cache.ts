import { LRUCache } from 'lru-cache';
import type { CancelSignal } from '../cancel-signal.js';
import { entryBound } from '../lru-bound.js';
import type { ItemInformation, ItemInformationResponse, Sip2Messages } from '../sip2/index.js';

/** Asks the ILS about one item (one 17 through the pool); `signal` is the asking call's (deadline, client gone). */
export type ItemLookup = (item: string, signal?: CancelSignal) => Promise<ItemInformationResponse>;

export interface ItemCacheOptions {
  /** How long an answer is used. */
  ttlMs: number;
  /** Most items kept; the least recently used go first. */
  maxEntries: number;
  /** Monotonic milliseconds (tests); default performance.now(). */
  now?: () => number;
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

/** Most items remembered as quiet (writes of unknown outcome) or as invalidated; the oldest go first beyond it. */
const MAX_TRACKED_ITEMS = 10_000;

/**
 * A short-lived cache of item information (SIP2 18) by item barcode, shared
 * by `items` and DAIA. Only answers are kept, never failures. A miss asks
 * its own lookup: concurrent lookups of one item share a single 17 beneath
 * the cache (SharedReads, in the lane of the call that asks, so a patron's
 * lookup never waits behind DAIA's share of the pool).
 *
 * Invalidation and writes race: a 17 sent before or during a renew may come
 * back with the state before it. invalidate() therefore drops the entry and
 * also makes every lookup already in flight for the item stale, so its
 * answer is passed on but not stored; the backend calls it once the write's
 * outcome is known (or unknown).
 */
export class ItemInfoCache {
  private readonly entries: LRUCache<string, ItemInformationResponse>;
  /** invalidate() calls so far: a lookup notes the count when it starts, to tell whether its item was invalidated since. */
  private invalidations = 0;
  /** Each invalidated item with the count at its last invalidation, oldest first (at most MAX_TRACKED_ITEMS). */
  private readonly invalidatedAt = new Map<string, number>();
  /** The count of the newest record dropped from invalidatedAt: a lookup older than it can no longer be judged. */
  private forgottenUpTo = 0;
  /** Items whose answers are not stored until the time given: a write of theirs may still be under way at the ILS. */
  private readonly quiet = new Map<string, number>();
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly onInvalidate: ((item: string, outcomeUnknown: boolean) => void) | undefined;
  private hits = 0;
  private misses = 0;

  constructor(options: ItemCacheOptions) {
    if (!Number.isInteger(options.maxEntries) || options.maxEntries < 1)
      throw new RangeError('maxEntries must be an integer >= 1');
    if (!(options.ttlMs > 0)) throw new RangeError('ttlMs must be > 0');
    this.ttlMs = options.ttlMs;
    this.now = options.now ?? (() => performance.now());
    this.onInvalidate = options.onInvalidate;
    this.entries = new LRUCache<string, ItemInformationResponse>({
      ...entryBound(options.maxEntries),
      ttl: options.ttlMs,
      // Expired entries are dropped when touched or pushed out by newer ones; no timers.
      ttlAutopurge: false,
      ...(options.now ? { perf: { now: options.now }, ttlResolution: 0 } : {}),
    });
  }

  /**
   * The cached answer for `item`, else the answer of `lookup(item, signal)`,
   * stored unless the item was invalidated while it was on its way.
   */
  get(item: string, lookup: ItemLookup, signal?: CancelSignal): Promise<ItemInformationResponse> {
    const cached = this.entries.get(item);
    if (cached !== undefined) {
      this.hits += 1;
      return Promise.resolve(cached);
    }
    // A caller that has already given up asks nothing (the lookup rejects it at once): neither a hit nor a miss.
    if (signal?.aborted !== true) this.misses += 1;
    const asked = this.invalidations;
    return lookup(item, signal).then((response) => {
      if (!this.invalidatedSince(item, asked) && !this.isQuiet(item)) this.entries.set(item, response);
      return response;
    });
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
    this.entries.delete(item);
    this.invalidations += 1;
    // Both maps stay in order of insertion, which is the order of invalidation and of expiry.
    const dropped = setNewest(this.invalidatedAt, item, this.invalidations);
    if (dropped !== undefined) this.forgottenUpTo = dropped[1];
    if (options.outcomeUnknown) setNewest(this.quiet, item, this.now() + this.ttlMs);
  }

  /** Whether `item` was invalidated after a lookup that started when `asked` invalidations had happened. */
  private invalidatedSince(item: string, asked: number): boolean {
    // Records older than the lookup may have been dropped: then nobody can say, and the answer is not kept.
    if (asked < this.forgottenUpTo) return true;
    return (this.invalidatedAt.get(item) ?? 0) > asked;
  }

  private isQuiet(item: string): boolean {
    const until = this.quiet.get(item);
    if (until === undefined) return false;
    if (this.now() < until) return true;
    this.quiet.delete(item);
    return false;
  }

  stats(): ItemCacheStats {
    return { hits: this.hits, misses: this.misses, entries: this.entries.size, maxEntries: this.entries.maxSize };
  }
}

/**
 * Sets `key` as the newest entry of an insertion-ordered map of at most
 * MAX_TRACKED_ITEMS entries; returns the oldest entry it dropped to stay
 * within that bound, if any.
 */
function setNewest<V>(map: Map<string, V>, key: string, value: V): [string, V] | undefined {
  map.delete(key);
  map.set(key, value);
  if (map.size <= MAX_TRACKED_ITEMS) return undefined;
  const oldest = map.entries().next().value!;
  map.delete(oldest[0]);
  return oldest;
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
