import { LiveList, type Place } from './live-list.js';

/** One wait in the line; `leave()` ends it before its time (false when it had ended already, or timed out). */
export type Wait = Place;

interface Timed<V> {
  value: V;
  since: number;
}

/**
 * Many waits of one same length, timed by one timer: the pool's waiting
 * requests (sip2.pool.acquireTimeoutMs; the line is also the order they are
 * served in) and the calls in flight (http.requestTimeoutMs). All last
 * equally long, so the oldest ends first, and a list in the order they
 * started is the whole schedule: a LiveList, not a Map, since every call goes
 * in and out (live-list.ts says why).
 *
 * Why not a timer each: every call would set one for its deadline and clear
 * it again, and each setTimeout/clearTimeout pair allocates a Timeout and
 * goes through Node's timer lists (about 2.5% of the gateway's CPU profile
 * under B1's load, when the deadline middleware did so).
 *
 * Waits are measured on the monotonic clock (performance.now): a wall clock
 * set back must not make anything wait longer. The timer is unref'd: what
 * keeps the process alive for a wait is the call behind it (its socket).
 */
export class TimeoutLine<V> {
  readonly #timeoutMs: number;
  readonly #onTimeout: (value: V) => void;
  readonly #waits = new LiveList<Timed<V>>();
  #timer: NodeJS.Timeout | null = null;

  /** `onTimeout` is told each wait that lasted `timeoutMs`, once, after it has left the line; it must not throw. */
  constructor(timeoutMs: number, onTimeout: (value: V) => void) {
    if (!(timeoutMs > 0)) throw new RangeError(`timeoutMs must be positive, got ${timeoutMs}`);
    this.#timeoutMs = timeoutMs;
    this.#onTimeout = onTimeout;
  }

  /** Starts a wait for `value`, last in line. */
  start(value: V): Wait {
    const wait = this.#waits.add({ value, since: performance.now() });
    this.#timer ??= this.#arm(this.#timeoutMs);
    return wait;
  }

  /** How many waits are in the line. */
  get size(): number {
    return this.#waits.size;
  }

  /** Ends the oldest wait before its time and returns its value; undefined when none waits. */
  shift(): V | undefined {
    return this.#waits.shift()?.value;
  }

  /** The values of the waits in the line, oldest first. */
  values(): V[] {
    return this.#waits.values().map((wait) => wait.value);
  }

  /** Ends every wait at once, without telling onTimeout, and stops the timer. */
  clear(): void {
    this.#waits.clear();
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #arm(ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => this.#expire(), ms);
    timer.unref();
    return timer;
  }

  /**
   * Times out the waits that have lasted timeoutMs, oldest first, then sleeps until the next one will have.
   * onTimeout may end later waits or start new ones: each is looked at only when it is the oldest left.
   */
  #expire(): void {
    this.#timer = null;
    const now = performance.now();
    for (let oldest = this.#waits.first(); oldest !== undefined; oldest = this.#waits.first()) {
      if (now - oldest.since < this.#timeoutMs) {
        this.#timer = this.#arm(oldest.since + this.#timeoutMs - now);
        return;
      }
      this.#waits.shift();
      this.#onTimeout(oldest.value);
    }
  }
}
