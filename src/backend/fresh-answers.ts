import { LRUCache } from 'lru-cache';
import { entryBound } from '../lru-bound.js';

export interface FreshAnswersOptions {
  /** How long an answer is used, counted from when it was asked for. */
  ttlMs: number;
  /** Most answers kept; the least recently used go first. */
  maxEntries: number;
  /** Monotonic milliseconds (tests); default performance.now(). */
  now?: (() => number) | undefined;
}

/** Most keys remembered as quiet (writes of unknown outcome) or as invalidated; the oldest go first beyond it. */
const MAX_TRACKED_KEYS = 10_000;

/**
 * Answers of the ILS kept for a short time by key, never one that a write
 * may have overtaken: the item cache (17s by item) and the account window (a
 * patron's reads) are both this.
 *
 * Invalidation and reads race: a read sent before or during a write may come
 * back with the state before it. invalidate() therefore drops the answer and
 * also makes every read already under way for the key stale, so its answer
 * is passed on but not kept. An answer is kept for the TTL counted from when
 * it was asked for, so nothing is shown longer than the TTL after the ILS
 * gave it (a read that took longer than the TTL is not kept at all).
 *
 * Answers are plain data (what JSON holds), and what is kept is an answer's
 * JSON text, parsed again for each caller it serves: every caller gets an
 * answer of its own, and one string holds a fraction of the memory of the
 * objects it describes. As built, those hold more than they show (a field
 * of 13 characters or more cut from a SIP2 message is a V8 slice that keeps
 * the message's whole text alive, an array grown by push keeps room for 16
 * elements, the same short values are a string each). With 10,000 patrons
 * in the account window and 10,000 items in the cache (bench B4), the heap
 * held 45.8 MB kept as JSON text, 48.2 MB kept as parsed copies, and 8 MB
 * more kept as built. Parsing costs microseconds per hit, and a hit saves an
 * ILS round trip.
 * Properties whose value is undefined are left out, as a JSON answer leaves
 * them out.
 */
export class FreshAnswers<V> {
  /** The answers' JSON texts by key. */
  private readonly entries: LRUCache<string, string>;
  /** invalidate() calls so far: a read notes the count when it starts, to tell whether its key was invalidated since. */
  private invalidations = 0;
  /** Each invalidated key with the count at its last invalidation, oldest first (at most MAX_TRACKED_KEYS). */
  private readonly invalidatedAt = new Map<string, number>();
  /** The count of the newest record dropped from invalidatedAt: a read older than it can no longer be judged. */
  private forgottenUpTo = 0;
  /** Keys whose answers are not kept until the time given: a write of theirs may still be under way at the ILS. */
  private readonly quiet = new Map<string, number>();
  private readonly ttlMs: number;
  private readonly now: () => number;
  /** The one sweep of expired answers to come, while any are kept. */
  private sweep: NodeJS.Timeout | null = null;

  constructor(options: FreshAnswersOptions) {
    if (!Number.isInteger(options.maxEntries) || options.maxEntries < 1)
      throw new RangeError('maxEntries must be an integer >= 1');
    if (!(options.ttlMs > 0)) throw new RangeError('ttlMs must be > 0');
    this.ttlMs = options.ttlMs;
    this.now = options.now ?? (() => performance.now());
    this.entries = new LRUCache<string, string>({
      ...entryBound(options.maxEntries),
      ttl: options.ttlMs,
      // Expired entries are dropped when touched or pushed out by newer ones; no timers.
      ttlAutopurge: false,
      ...(options.now ? { perf: { now: options.now }, ttlResolution: 0 } : {}),
    });
  }

  /** The answer kept for `key`, if any (null and undefined are never kept): a copy of its own. */
  cached(key: string): V | undefined {
    const text = this.entries.get(key);
    return text === undefined ? undefined : (JSON.parse(text) as V);
  }

  /**
   * The answer of `read()`, kept for `key` unless the key was invalidated
   * while it was on its way (or is quiet). Failures, null and undefined are never kept.
   */
  read(key: string, read: () => Promise<V>): Promise<V> {
    const asked = this.invalidations;
    const startedAt = this.now();
    return read().then((answer) => {
      const ttl = this.ttlMs - (this.now() - startedAt);
      if (answer != null && ttl > 0 && !this.invalidatedSince(key, asked) && !this.isQuiet(key)) {
        this.entries.set(key, JSON.stringify(answer), { ttl });
        this.sweepLater();
      }
      return answer;
    });
  }

  /**
   * Forgets `key`: the next read asks the ILS, and an answer already on its
   * way is not kept. `outcomeUnknown`: a write went out but was never
   * confirmed, so the ILS may still apply it; for one TTL answers for the key
   * are passed on but not kept.
   */
  invalidate(key: string, outcomeUnknown = false): void {
    this.entries.delete(key);
    this.invalidations += 1;
    // Both maps stay in order of insertion, which is the order of invalidation and of expiry.
    const dropped = setNewest(this.invalidatedAt, key, this.invalidations);
    if (dropped !== undefined) this.forgottenUpTo = dropped[1];
    if (outcomeUnknown) setNewest(this.quiet, key, this.now() + this.ttlMs);
  }

  get size(): number {
    return this.entries.size;
  }

  get maxEntries(): number {
    return this.entries.maxSize;
  }

  /**
   * Expired answers are dropped within one TTL after they expire, not only
   * when touched or pushed out: after a busy hour the cache would otherwise
   * hold maxEntries answers (a patron's loans each) long after nobody asks.
   * One timer per cache, only while it keeps answers, and unref'd: it never
   * keeps the process alive and needs no closing.
   */
  private sweepLater(): void {
    if (this.sweep !== null) return;
    this.sweep = setTimeout(() => {
      this.sweep = null;
      this.entries.purgeStale();
      if (this.entries.size > 0) this.sweepLater();
    }, this.ttlMs);
    this.sweep.unref();
  }

  /** Whether `key` was invalidated after a read that started when `asked` invalidations had happened. */
  private invalidatedSince(key: string, asked: number): boolean {
    // Records older than the read may have been dropped: then nobody can say, and the answer is not kept.
    if (asked < this.forgottenUpTo) return true;
    return (this.invalidatedAt.get(key) ?? 0) > asked;
  }

  private isQuiet(key: string): boolean {
    const until = this.quiet.get(key);
    if (until === undefined) return false;
    if (this.now() < until) return true;
    this.quiet.delete(key);
    return false;
  }
}

/**
 * Sets `key` as the newest entry of an insertion-ordered map of at most
 * MAX_TRACKED_KEYS entries; returns the oldest entry it dropped to stay
 * within that bound, if any.
 */
function setNewest<T>(map: Map<string, T>, key: string, value: T): [string, T] | undefined {
  map.delete(key);
  map.set(key, value);
  if (map.size <= MAX_TRACKED_KEYS) return undefined;
  const oldest = map.entries().next().value!;
  map.delete(oldest[0]);
  return oldest;
}
