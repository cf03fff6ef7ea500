/**
 * Many waits of one same length, timed by one timer: the pool's waiting
 * requests (sip2.pool.acquireTimeoutMs; the line is also the order they are
 * served in) and the calls in flight (http.requestTimeoutMs). All last
 * equally long, so the oldest ends first, and a Map in insertion order is the
 * whole schedule.
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
export class TimeoutLine<K, V> {
  readonly #timeoutMs: number;
  readonly #onTimeout: (value: V, key: K) => void;
  /** Each wait by its key, in the order they started: since when (performance.now), and its value. */
  readonly #waits = new Map<K, { since: number; value: V }>();
  #timer: NodeJS.Timeout | null = null;

  /** `onTimeout` is told each wait that lasted `timeoutMs`, once, after it has left the line; it must not throw. */
  constructor(timeoutMs: number, onTimeout: (value: V, key: K) => void) {
    if (!(timeoutMs > 0)) throw new RangeError(`timeoutMs must be positive, got ${timeoutMs}`);
    this.#timeoutMs = timeoutMs;
    this.#onTimeout = onTimeout;
  }

  /** Starts the wait of `key`; a key already waiting starts again, last in line. */
  start(key: K, value: V): void {
    this.#waits.delete(key);
    this.#waits.set(key, { since: performance.now(), value });
    this.#timer ??= this.#arm(this.#timeoutMs);
  }

  /** How many waits are in the line. */
  get size(): number {
    return this.#waits.size;
  }

  /** Ends the oldest wait before its time and returns its value; undefined when none waits. */
  shift(): V | undefined {
    for (const [key, wait] of this.#waits) {
      this.#waits.delete(key);
      return wait.value;
    }
    return undefined;
  }

  /** Ends the wait of `key` before its time; false when it was not waiting (it ended already, or timed out). */
  end(key: K): boolean {
    return this.#waits.delete(key);
  }

  /** The values of the waits in the line, oldest first. */
  values(): V[] {
    return [...this.#waits.values()].map((wait) => wait.value);
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

  /** Times out the waits that have lasted timeoutMs, then sleeps until the next one will have. */
  #expire(): void {
    this.#timer = null;
    const now = performance.now();
    const due: Array<[K, { since: number; value: V }]> = [];
    for (const entry of this.#waits) {
      const since = entry[1].since;
      if (now - since < this.#timeoutMs) {
        this.#timer = this.#arm(since + this.#timeoutMs - now);
        break;
      }
      due.push(entry);
    }
    for (const [key, wait] of due) {
      // onTimeout may have ended, cleared or restarted a later one of them: only a wait still in the line is told.
      if (this.#waits.get(key) !== wait) continue;
      this.#waits.delete(key);
      this.#onTimeout(wait.value, key);
    }
  }
}
