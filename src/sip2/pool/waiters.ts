import type { CancelSignal } from '../../cancel-signal.js';
import { TimeoutLine, type Wait } from '../../timeout-line.js';
import { cancelled } from '../errors.js';

export interface WaitOptions<T> {
  /**
   * The caller's signal (its deadline, its client going away). Aborted while
   * the caller waits: it leaves the line, its work never runs and it gets
   * CallCancelled with requestSent false. Aborted while its work runs: it
   * gets CallCancelled with requestSent true at once, and the work finishes
   * on its own, still holding what it was given.
   */
  signal?: CancelSignal | undefined;
  /** Told the outcome of work that finished after its caller had stopped waiting. */
  onAbandonedOutcome?: ((outcome: PromiseSettledResult<T>) => void) | undefined;
}

/** One caller in the line: how to start its work with what it is handed, or refuse it. */
interface Waiter<R> {
  grant(resource: R): void;
  refuse(error: Error): void;
}

export interface WaitersOptions {
  /** Longest wait of one caller, in milliseconds. */
  timeoutMs: number;
  /** The error a caller that waited too long is refused with. */
  onTimeout: () => Error;
  /** Told after a caller left the line empty-handed on its own (timed out, cancelled): a drain may be over. */
  onLeave?: (() => void) | undefined;
}

/**
 * The callers waiting for a resource (the pool's: a connection; a pool
 * share's: a slot), in arrival order, with direct hand-off: whoever frees a
 * resource gives it to the first caller in the line (`hand`), whose work then
 * starts in the same synchronous step. A resource handed over never passes
 * through an idle list, so nothing else (a keepalive, a probe) can take it
 * in between, and no count of free resources has to be kept in step with the
 * line.
 *
 * The line is one TimeoutLine (a list in arrival order, one timer for
 * every wait: all wait equally long, so the oldest gives up first). A caller
 * that gives up (timed out, signal aborted) is taken out of the line at
 * once, so `hand` can never reach it: a resource freed at the same moment
 * goes to the next caller, or back to its owner when `hand` says nobody took
 * it. JavaScript runs one of the two first, never both halfway.
 */
export class Waiters<R> {
  readonly #line: TimeoutLine<Waiter<R>>;
  readonly #onLeave: (() => void) | undefined;

  constructor(options: WaitersOptions) {
    this.#onLeave = options.onLeave;
    this.#line = new TimeoutLine<Waiter<R>>(options.timeoutMs, (waiter) => {
      waiter.refuse(options.onTimeout());
      this.#onLeave?.();
    });
  }

  /** Callers waiting. */
  get size(): number {
    return this.#line.size;
  }

  /**
   * Waits in line for a resource, then runs `start` with it (synchronously,
   * inside `hand`); see WaitOptions for a caller that gives up, and
   * WaitersOptions for one that waits too long.
   */
  wait<T>(start: (resource: R) => Promise<T>, options: WaitOptions<T> = {}): Promise<T> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(cancelled(signal, false));
    return new Promise<T>((resolve, reject) => {
      let place: Wait | undefined;
      const waiter: Waiter<R> = {
        grant: (resource) => {
          signal?.removeEventListener('abort', onAbort);
          follow(start(resource), options).then(resolve, reject);
        },
        refuse: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      // Still in the line: leave it (a listener may run after its removal, see Cancellation; leave() says whether it waited).
      const onAbort = () => {
        if (place === undefined || !place.leave()) return;
        reject(cancelled(signal!, false));
        this.#onLeave?.();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      place = this.#line.start(waiter);
    });
  }

  /** Gives `resource` to the first caller in the line and starts its work; false when nobody waits (the resource stays the giver's). */
  hand(resource: R): boolean {
    const waiter = this.#line.shift();
    if (waiter === undefined) return false;
    waiter.grant(resource);
    return true;
  }

  /** Refuses every waiting caller with `error` (circuit open, shutting down, a maintenance pause). */
  failAll(error: Error): void {
    // Out of the line first: a caller who waits anew from inside refuse() is not refused with the others.
    const waiters = this.#line.values();
    this.#line.clear();
    for (const waiter of waiters) waiter.refuse(error);
    // As when one leaves: a close() waiting for the line to empty must hear of it, or it waits out its drain timeout.
    if (waiters.length > 0) this.#onLeave?.();
  }
}

/**
 * The outcome of `work` for its caller, or CallCancelled (requestSent true)
 * at once when the caller's signal aborts first: the work goes on, and its
 * outcome goes to onAbandonedOutcome.
 */
export function follow<T>(work: Promise<T>, options: WaitOptions<T>): Promise<T> {
  const { signal, onAbandonedOutcome } = options;
  // Without a signal (the doctor, the benchmarks' relay) the caller waits for the work itself: no promise more.
  if (!signal) return work;
  if (signal.aborted) {
    void work.then(
      (value) => onAbandonedOutcome?.({ status: 'fulfilled', value }),
      (reason: unknown) => onAbandonedOutcome?.({ status: 'rejected', reason }),
    );
    return Promise.reject(cancelled(signal, true));
  }
  return new Promise<T>((resolve, reject) => {
    let answered = false;
    const onAbort = () => {
      if (answered) return;
      answered = true;
      reject(cancelled(signal, true));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        if (answered) return onAbandonedOutcome?.({ status: 'fulfilled', value });
        answered = true;
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (reason: unknown) => {
        if (answered) return onAbandonedOutcome?.({ status: 'rejected', reason });
        answered = true;
        signal.removeEventListener('abort', onAbort);
        reject(reason);
      },
    );
  });
}
