import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { storeFailure } from './errors.js';

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

/** What a store does, as the latency metric's `operation` label names it: a fixed set. */
export type StoreOperation =
  | 'session-create'
  | 'session-get'
  | 'session-delete'
  | 'limit'
  | 'fact-set'
  | 'fact-get'
  | 'invalidate'
  | 'ping';

/** Told of every store operation: what it was, how long it took and whether the store answered. */
export type OperationObserver = (operation: StoreOperation, seconds: number, ok: boolean) => void;

/** Runs one store operation, timed for the observer; any failure becomes StoreUnavailable. */
export async function storeOperation<T>(
  store: string,
  operation: StoreOperation,
  observe: OperationObserver,
  call: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  try {
    const result = await call();
    observe(operation, (performance.now() - started) / 1000, true);
    return result;
  } catch (thrown) {
    // rate-limiter-flexible rejects with its result when a key is over its points: an answer, not a failure.
    if (thrown instanceof RateLimiterRes) {
      observe(operation, (performance.now() - started) / 1000, true);
      throw thrown;
    }
    observe(operation, (performance.now() - started) / 1000, false);
    throw storeFailure(store, thrown);
  }
}

export class Limiter {
  readonly #limiter: RateLimiterAbstract;
  readonly #store: string;
  readonly #observe: OperationObserver;
  readonly points: number;

  constructor(limiter: RateLimiterAbstract, points: number, store: string, observe: OperationObserver) {
    this.#limiter = limiter;
    this.points = points;
    this.#store = store;
    this.#observe = observe;
  }

  /** Counts `points` more for `key`; `within` is false once the count is above the window's points. */
  async take(key: string, points = 1): Promise<Count & { within: boolean }> {
    try {
      const res = await this.#call('limit', () => this.#limiter.consume(key, points));
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
    const res = await this.#call('limit', () => this.#limiter.get(key));
    return res === null ? null : { consumed: res.consumedPoints, msBeforeReset: res.msBeforeNext };
  }

  /** Takes points back (an attempt that turned out not to count). */
  async give(key: string, points = 1): Promise<void> {
    await this.#call('limit', () => this.#limiter.reward(key, points));
  }

  /** Sets the key over its points for `seconds` (a lockout), whatever it counted before. */
  async block(key: string, seconds: number): Promise<void> {
    await this.#call('limit', () => this.#limiter.block(key, Math.max(1, Math.ceil(seconds))));
  }

  /** Forgets the key. */
  async reset(key: string): Promise<void> {
    await this.#call('limit', () => this.#limiter.delete(key));
  }

  #call<T>(operation: StoreOperation, call: () => Promise<T>): Promise<T> {
    return storeOperation(this.#store, operation, this.#observe, call);
  }
}
