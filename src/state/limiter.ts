import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import type { RunOperation } from './operations.js';

/**
 * A named counter per key over a fixed window, kept in the state store by
 * rate-limiter-flexible (its memory or Redis limiter, so the same counts
 * hold across instances). It only counts; what a count means (a lockout, a
 * fair share, 429) is decided by its user. Every method rejects with
 * StoreUnavailable when the store cannot answer.
 */
export interface LimiterOptions {
  /** Part of every key (e.g. "login-user"); one name per purpose. */
  name: string;
  /** Points a key may take in one window (its count may go above; `within` says whether it still fits). */
  points: number;
  /** Window length in whole seconds, started by the key's first point (rate-limiter-flexible's fixed window). */
  durationSeconds: number;
}

export interface Count {
  /** Points counted in the current window. */
  consumed: number;
  /** Until the window ends (the count is forgotten), in milliseconds. */
  msBeforeReset: number;
}

export class Limiter {
  readonly #limiter: RateLimiterAbstract;
  readonly #run: RunOperation;
  readonly points: number;

  /** `run`: the store's operation runner (operations.ts), which times, types and may refuse each call. */
  constructor(limiter: RateLimiterAbstract, points: number, run: RunOperation) {
    this.#limiter = limiter;
    this.points = points;
    this.#run = run;
  }

  /** Counts `points` more for `key`; `within` is false once the count is above the window's points. */
  async take(key: string, points = 1): Promise<Count & { within: boolean }> {
    try {
      const res = await this.#run('limit', () => this.#limiter.consume(key, points));
      return { consumed: res.consumedPoints, msBeforeReset: res.msBeforeNext, within: true };
    } catch (thrown) {
      if (thrown instanceof RateLimiterRes) {
        return { consumed: thrown.consumedPoints, msBeforeReset: thrown.msBeforeNext, within: false };
      }
      throw thrown;
    }
  }

  /** The key's count without changing it; null when nothing is counted. */
  async peek(key: string): Promise<Count | null> {
    const res = await this.#run('limit', () => this.#limiter.get(key));
    return res === null ? null : { consumed: res.consumedPoints, msBeforeReset: res.msBeforeNext };
  }

  /** Takes points back (an attempt that turned out not to count). */
  async give(key: string, points = 1): Promise<void> {
    await this.#run('limit', () => this.#limiter.reward(key, points));
  }

  /** Sets the key over its points for `seconds` (a lockout), whatever it counted before. */
  async block(key: string, seconds: number): Promise<void> {
    await this.#run('limit', () => this.#limiter.block(key, Math.max(1, Math.ceil(seconds))));
  }

  /** Forgets the key. */
  async reset(key: string): Promise<void> {
    await this.#run('limit', () => this.#limiter.delete(key));
  }
}
