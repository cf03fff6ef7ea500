import PQueue from 'p-queue';
import type { CancelSignal } from '../cancel-signal.js';
import { TimeoutLine } from '../timeout-line.js';
import { cancelled } from './errors.js';
import { WaitingLine } from './waiting-line.js';

export interface WaitingQueueOptions {
  /** Tasks running at once (p-queue's concurrency; its owner may change it on `queue`). */
  concurrency: number;
  /** false: nothing starts until queue.start() (the pool starts it once a connection is logged in). */
  autoStart: boolean;
  /** Longest wait of one task for its turn, in milliseconds. */
  waitTimeoutMs: number;
  /** The error a task that waited too long is refused with. */
  onWaitTimeout: () => Error;
}

export interface WaitOptions<T> {
  /**
   * The caller's signal (its deadline, its client going away). Aborted while
   * the task waits: it never runs and the caller gets CallCancelled with
   * requestSent false. Aborted while it runs: the caller gets CallCancelled
   * with requestSent true at once, and the task finishes on its own.
   */
  signal?: CancelSignal | undefined;
  /** Told the outcome of a task that finished after its caller had stopped waiting. */
  onAbandonedOutcome?: ((outcome: PromiseSettledResult<T>) => void) | undefined;
}

/**
 * A p-queue whose waiting tasks can give up: after waitTimeoutMs, when their
 * caller's signal aborts, or all at once (failWaiting). The SIP2 pool queues
 * its requests in one, and so does each share of the pool (DAIA's).
 *
 * Why not p-queue's own `signal` per task: under load most tasks wait, and an
 * AbortController per task with the listeners p-queue adds and removes on it
 * cost more CPU than everything else the queue does (WaitingLine). A task
 * that gives up is taken out of the line instead, and its caller answered
 * here; the promise p-queue made for it never settles. One timer serves every
 * waiting task (TimeoutLine): all wait equally long, so the oldest gives up first.
 */
export class WaitingQueue {
  /** The p-queue itself: concurrency, pause/start, size (waiting), pending (running), onIdle. */
  readonly queue: PQueue;
  /** p-queue makes its line itself (again on clear()): this is the current one. */
  #line!: WaitingLine;
  /** Each waiting task by its id in the line, in arrival order, with how to refuse it; timed out after waitTimeoutMs. */
  readonly #waiting: TimeoutLine<string, (error: Error) => void>;
  #ids = 0;

  constructor(options: WaitingQueueOptions) {
    this.#waiting = new TimeoutLine(options.waitTimeoutMs, (stop) => stop(options.onWaitTimeout()));
    const owner = this;
    this.queue = new PQueue({
      concurrency: options.concurrency,
      autoStart: options.autoStart,
      queueClass: class extends WaitingLine {
        constructor() {
          super();
          owner.#line = this;
        }
      },
    });
  }

  /** Whether a task added now would start at once rather than wait. */
  get startsNow(): boolean {
    const { queue } = this;
    return !queue.isPaused && queue.size === 0 && queue.pending < queue.concurrency;
  }

  /** Runs `task` in its turn; see WaitOptions for a caller that gives up, and the class comment for one that waits too long. */
  run<T>(task: () => Promise<T>, options: WaitOptions<T> = {}): Promise<T> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(cancelled(signal, false));
    const startsNow = this.startsNow;
    return new Promise<T>((resolve, reject) => {
      let started = false;
      let answered = false;
      // Set only while the task waits: its place in the line.
      let queued: string | null = null;
      // Refused while it waited: should p-queue still hand it over, it must not run (its caller was told "not sent").
      let gaveUp = false;
      const answer = (settle: () => void) => {
        if (answered) return;
        answered = true;
        signal?.removeEventListener('abort', onCallerAbort);
        settle();
      };
      const stopWaiting = (error: Error) => {
        if (started || queued === null) return;
        gaveUp = true;
        this.#waiting.end(queued);
        this.#line.cancel(queued);
        queued = null;
        // p-queue says idle only when a task ends or the queue is cleared: with nothing running, say it now.
        if (this.#line.size === 0 && this.queue.pending === 0) this.queue.clear();
        answer(() => reject(error));
      };
      const onCallerAbort = () => {
        if (started) answer(() => reject(cancelled(signal!, true)));
        else stopWaiting(cancelled(signal!, false));
      };
      const start = (): Promise<T | undefined> => {
        // Taken out of the line, so p-queue never hands it over; checked anyway, as the caller was told it was not sent.
        if (gaveUp) return Promise.resolve(undefined);
        started = true;
        if (queued !== null) this.#waiting.end(queued);
        return task();
      };

      signal?.addEventListener('abort', onCallerAbort, { once: true });
      let outcome: Promise<T | undefined>;
      if (startsNow) {
        // p-queue starts the task inside add(): no place in the line to keep (the common case).
        outcome = this.queue.add(start);
      } else {
        queued = `w${++this.#ids}`;
        this.#waiting.start(queued, stopWaiting);
        outcome = this.queue.add(start, { id: queued });
      }
      outcome.then(
        (value) => {
          if (gaveUp) return;
          if (answered) options.onAbandonedOutcome?.({ status: 'fulfilled', value: value as T });
          else answer(() => resolve(value as T));
        },
        (error: unknown) => {
          if (gaveUp) return;
          if (answered) options.onAbandonedOutcome?.({ status: 'rejected', reason: error });
          else answer(() => reject(error));
        },
      );
    });
  }

  /** Refuses every waiting task with `error` (circuit open, shutting down, a maintenance pause). */
  failWaiting(error: Error): void {
    // Out of the line first: a task a caller adds from inside stop() waits anew rather than being dropped.
    const stops = this.#waiting.values();
    this.#waiting.clear();
    for (const stop of stops) stop(error);
  }
}
