import PQueue from 'p-queue';

/**
 * A bound on how many SIP2 requests one backend call puts into the pool at
 * once. The pool bounds the whole gateway; this keeps one patron with 120
 * loans from filling the pool's waiting queue on their own, without costing
 * latency as long as the bound is at least the pool size. One p-queue per
 * call: first come, first served, a finishing task's slot goes to the next.
 */
/** The bound when the caller names none; the gateway uses sip2.pool.max. */
export const DEFAULT_MAX_PARALLEL = 32;

/** `priority`: waiting tasks of a higher priority go first (default 0); equal ones in order. */
export type Limiter = <T>(task: () => Promise<T>, priority?: number) => Promise<T>;

export function limiter(max: number): Limiter {
  if (!Number.isFinite(max)) return (task) => task();
  if (!Number.isInteger(max) || max < 1) throw new RangeError('the parallelism bound must be an integer >= 1');
  const queue = new PQueue({ concurrency: max });
  return <T>(task: () => Promise<T>, priority = 0) => queue.add(task, { priority });
}
