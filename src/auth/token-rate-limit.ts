import type { StateStore } from '../state/index.js';
import type { Limiter } from '../state/limiter.js';

/**
 * Requests per minute per access token (the spec: servers SHOULD limit the
 * number of requests per minute). A fixed one-minute window per token,
 * started by its first request, counted in the state store: with Redis the
 * limit holds across every instance, not once per instance.
 */
export type RateVerdict = { allowed: true; remaining: number } | { allowed: false; retryAfterSeconds: number };

export class TokenRateLimit {
  /** Requests allowed per token per minute. */
  readonly perMinute: number;
  readonly #limiter: Limiter;
  #limited = 0;

  constructor(store: Pick<StateStore, 'limiter'>, perMinute: number) {
    if (!Number.isInteger(perMinute) || perMinute < 1)
      throw new Error(`perMinute must be a positive integer, got ${perMinute}`);
    this.perMinute = perMinute;
    this.#limiter = store.limiter({ name: 'token', points: perMinute, durationSeconds: 60 });
  }

  /**
   * Counts one request of `key` (a token hash, never the token) and says
   * whether it may go on. Rejects with StoreUnavailable when the store
   * cannot count: the request is then refused, not let through.
   */
  async take(key: string): Promise<RateVerdict> {
    const count = await this.#limiter.take(key);
    if (count.within) return { allowed: true, remaining: this.perMinute - count.consumed };
    this.#limited += 1;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(count.msBeforeReset / 1000)) };
  }

  /** Requests refused so far (for metrics). */
  stats(): { limited: number } {
    return { limited: this.#limited };
  }
}
