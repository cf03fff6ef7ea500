/**
 * A bound on how many SIP2 requests one backend call puts into the pool at
 * once. The pool bounds the whole gateway; this keeps one patron with 120
 * loans from filling the pool's waiting queue on their own, without costing
 * latency as long as the bound is at least the pool size.
 */
/** The bound when the caller names none; the gateway uses sip2.pool.max. */
export const DEFAULT_MAX_PARALLEL = 32;

export type Limiter = <T>(task: () => Promise<T>) => Promise<T>;

export function limiter(max: number): Limiter {
  if (!Number.isFinite(max)) return (task) => task();
  if (!Number.isInteger(max) || max < 1) throw new RangeError('the parallelism bound must be an integer >= 1');
  let running = 0;
  const waiting: Array<() => void> = [];
  // A finishing task hands its slot straight to the next waiter, so a caller arriving in between cannot overtake it.
  const release = () => {
    const wake = waiting.shift();
    if (wake) wake();
    else running--;
  };
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running < max) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      release();
    }
  };
}
