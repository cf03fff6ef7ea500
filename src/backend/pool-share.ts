import type { CancelSignal } from '../cancel-signal.js';
import { cancelled, follow, Waiters } from '../sip2/index.js';
import { BackendFailure, type BackendFailureReason } from './errors.js';

/**
 * A share of the SIP2 pool for one kind of work (anonymous DAIA): at most
 * `concurrency` of its requests are in the pool at once, queued there or in
 * flight, so the pool's other users (patrons) wait behind at most that many.
 * The rest waits here, in a line of its own like the pool's (the same
 * Waiters, with direct hand-off of a freed slot to the first in line) and
 * bounded like it: at most `maxWaiting` requests, each at most
 * `waitTimeoutMs`, then `busy` (503 with Retry-After); a caller whose signal
 * aborts stops waiting at once.
 *
 * A request that got its share keeps it until the pool has answered it, even
 * when its caller stops waiting (the caller is answered at once): otherwise
 * callers going away could leave more round trips in the pool than the share.
 * The pool bounds that time (acquire timeout, response timeout).
 */
export interface PoolShareOptions {
  /** Fraction of the connections this work may hold at once, 0 < share <= 1. */
  share: number;
  /** How many connections the pool has now (sip2.pool.max, or fewer when the ILS serves fewer); read per request. */
  connections: () => number;
  /** Most requests waiting for the share; one more is refused at once. */
  maxWaiting: number;
  /** Longest wait of one request for the share, in milliseconds. */
  waitTimeoutMs: number;
  /** What the work is, in messages ("DAIA"). */
  name: string;
}

export interface PoolShareStats {
  /** Requests holding the share (in the pool: waiting there or at the ILS). */
  running: number;
  /** Requests waiting for the share. */
  waiting: number;
  /** How many may hold it now. */
  concurrency: number;
  /** Requests refused (waiting bound full, waited too long) since start. */
  refused: number;
}

/** Connections a share of `connections` amounts to: at least one, never more than there are. */
export function shareOf(connections: number, share: number): number {
  return Math.max(1, Math.min(connections, Math.floor(connections * share)));
}

export class PoolShare {
  readonly #options: PoolShareOptions;
  readonly #waiters: Waiters<void>;
  /** Requests holding the share: started, and not yet answered by the pool. */
  #running = 0;
  #refused = 0;

  constructor(options: PoolShareOptions) {
    if (!(options.share > 0 && options.share <= 1)) throw new RangeError('share must be > 0 and <= 1');
    if (!Number.isInteger(options.maxWaiting) || options.maxWaiting < 0)
      throw new RangeError('maxWaiting must be an integer >= 0');
    if (!(options.waitTimeoutMs > 0)) throw new RangeError('waitTimeoutMs must be > 0');
    this.#options = options;
    this.#waiters = new Waiters({
      timeoutMs: options.waitTimeoutMs,
      onTimeout: () =>
        this.#refuse(
          'share-timeout',
          `no ${options.name} share of the ILS connections became free within ${options.waitTimeoutMs} ms`,
        ),
    });
  }

  /** How many requests may hold the share now. */
  get concurrency(): number {
    return shareOf(Math.max(1, this.#options.connections()), this.#options.share);
  }

  /**
   * Runs `request` once the share has room. Rejects with a BackendFailure
   * (busy) when too many wait or the wait is too long, with CallCancelled
   * when `signal` aborts first; `request` then never runs.
   */
  run<T>(request: () => Promise<T>, signal?: CancelSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(cancelled(signal, false));
    // The pool may have learned that the ILS serves fewer sessions (or forgotten it): the share follows.
    this.#handOut();
    if (this.#waiters.size === 0 && this.#running < this.concurrency) return follow(this.#start(request), { signal });
    if (this.#waiters.size >= this.#options.maxWaiting) {
      return Promise.reject(
        this.#refuse('share-full', `too many ${this.#options.name} requests are waiting for the ILS`),
      );
    }
    return this.#waiters.wait(() => this.#start(request), { signal });
  }

  stats(): PoolShareStats {
    return {
      running: this.#running,
      waiting: this.#waiters.size,
      concurrency: this.concurrency,
      refused: this.#refused,
    };
  }

  /** Holds a slot for `request` until the pool has answered it, whether or not its caller still waits. */
  #start<T>(request: () => Promise<T>): Promise<T> {
    this.#running += 1;
    let work: Promise<T>;
    try {
      work = request();
    } catch (error) {
      work = Promise.reject(error);
    }
    return work.finally(() => {
      this.#running -= 1;
      this.#handOut();
    });
  }

  /** Gives each free slot to the first request in line. */
  #handOut(): void {
    // Each hand() starts a request, which takes its slot.
    while (this.#running < this.concurrency && this.#waiters.size > 0) this.#waiters.hand();
  }

  #refuse(reason: BackendFailureReason<'busy'>, message: string): BackendFailure {
    this.#refused += 1;
    return new BackendFailure('busy', reason, message, { retryAfterSeconds: 1 });
  }
}
