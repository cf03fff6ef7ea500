import { LRUCache } from 'lru-cache';

/**
 * Requests per minute per access token (the spec: servers SHOULD limit the
 * number of requests per minute). A fixed one-minute window per key, started
 * by the key's first request; the counters live in a bounded lru-cache, so
 * memory stays bounded however many tokens are used.
 */
export interface TokenRateLimitOptions {
  /** Requests allowed per key per minute. */
  perMinute: number;
  /** Bound on remembered keys (use the session bound). Default 100000. */
  maxKeys?: number;
  /** Clock in epoch milliseconds; for tests. */
  now?: () => number;
}

export type RateVerdict = { allowed: true; remaining: number } | { allowed: false; retryAfterSeconds: number };

const WINDOW_MS = 60_000;

export class TokenRateLimit {
  readonly #windows: LRUCache<string, { start: number; count: number }>;
  /** Requests allowed per key per minute. */
  readonly perMinute: number;
  readonly #now: () => number;
  #limited = 0;

  constructor(options: TokenRateLimitOptions) {
    if (!Number.isInteger(options.perMinute) || options.perMinute < 1)
      throw new Error(`perMinute must be a positive integer, got ${options.perMinute}`);
    this.perMinute = options.perMinute;
    this.#now = options.now ?? Date.now;
    const now = this.#now;
    this.#windows = new LRUCache({ max: options.maxKeys ?? 100_000, ttl: WINDOW_MS, perf: { now } });
  }

  /** Counts one request of `key` (a token hash, never the token) and says whether it may go on. */
  take(key: string): RateVerdict {
    const now = this.#now();
    let window = this.#windows.get(key);
    if (window === undefined || now - window.start >= WINDOW_MS) {
      window = { start: now, count: 0 };
      // The TTL runs from the window's start: the entry goes when the window ends.
      this.#windows.set(key, window);
    }
    if (window.count >= this.perMinute) {
      this.#limited += 1;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((window.start + WINDOW_MS - now) / 1000)) };
    }
    window.count += 1;
    return { allowed: true, remaining: this.perMinute - window.count };
  }

  /** Requests refused so far (for metrics). */
  stats(): { limited: number; tracked: number } {
    return { limited: this.#limited, tracked: this.#windows.size };
  }
}
