import { RateLimiterRes } from 'rate-limiter-flexible';
import { type StoreUnavailable, storeFailure } from './errors.js';

/** What a store does, as the latency metric's `operation` label names it: a fixed set. */
export type StoreOperation =
  | 'session-create'
  | 'session-get'
  /** Redis: a session's last use in its patron's index (the per-patron bound ends the least recently used). */
  | 'session-touch'
  | 'session-delete'
  | 'limit'
  | 'lease'
  | 'fact-set'
  | 'fact-get'
  | 'invalidate'
  | 'ping';

/** Told of every store operation: what it was, how long it took and whether the store answered. */
export type OperationObserver = (operation: StoreOperation, seconds: number, ok: boolean) => void;

/**
 * Runs one store operation: the one way every part of a store (sessions,
 * limiters, leases, facts) reaches its backend, so that timing, the failure
 * type and a store's refusal to serve are decided in one place.
 */
export type RunOperation = <T>(operation: StoreOperation, call: () => Promise<T>) => Promise<T>;

/**
 * The runner of a store named `store` ("memory", "redis"). `refusal`, when
 * given, is asked before each operation: a store that must not be used (a
 * Redis that may evict keys) rejects every operation with its reason instead
 * of serving from data that can vanish. Any failure becomes StoreUnavailable.
 */
export function operationRunner(
  store: string,
  observe: OperationObserver,
  refusal: () => StoreUnavailable | null = () => null,
): RunOperation {
  return async (operation, call) => {
    // Refused before it reaches the store: not an operation to time or count as the store's failure.
    const refused = refusal();
    if (refused !== null) throw refused;
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
  };
}
