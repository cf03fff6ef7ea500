/**
 * Many waits of one same length, timed by one timer: the pool's waiting
 * requests (sip2.pool.acquireTimeoutMs; the line is also the order they are
 * served in) and the calls in flight (http.requestTimeoutMs). All last
 * equally long, so the oldest ends first, and a list in the order they
 * started is the whole schedule. A linked list, not a Map: every call goes in
 * and out, and a Map that every request went in and out of made V8 promote
 * the requests' objects to the old generation, as the server's Set of
 * responses did (live-list.ts; bench/README.md, "CPU per request, fifth
 * round"). An ended wait lets go of its value and its neighbours.
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
/** One wait in the line; `end()` takes it out before its time. */
export interface Wait {
  /** Ends the wait before its time; false when it was not waiting any more (it ended already, or timed out). */
  end(): boolean;
}

interface Entry<V> extends Wait {
  value: V | undefined;
  since: number;
  previous: Entry<V> | null;
  next: Entry<V> | null;
  waiting: boolean;
}

export class TimeoutLine<V> {
  readonly #timeoutMs: number;
  readonly #onTimeout: (value: V) => void;
  /** The oldest wait and the newest. */
  #first: Entry<V> | null = null;
  #last: Entry<V> | null = null;
  #size = 0;
  #timer: NodeJS.Timeout | null = null;

  /** `onTimeout` is told each wait that lasted `timeoutMs`, once, after it has left the line; it must not throw. */
  constructor(timeoutMs: number, onTimeout: (value: V) => void) {
    if (!(timeoutMs > 0)) throw new RangeError(`timeoutMs must be positive, got ${timeoutMs}`);
    this.#timeoutMs = timeoutMs;
    this.#onTimeout = onTimeout;
  }

  /** Starts a wait for `value`, last in line. */
  start(value: V): Wait {
    const entry: Entry<V> = {
      value,
      since: performance.now(),
      previous: this.#last,
      next: null,
      waiting: true,
      end: () => this.#remove(entry),
    };
    if (this.#last !== null) this.#last.next = entry;
    else this.#first = entry;
    this.#last = entry;
    this.#size += 1;
    this.#timer ??= this.#arm(this.#timeoutMs);
    return entry;
  }

  /** How many waits are in the line. */
  get size(): number {
    return this.#size;
  }

  /** Ends the oldest wait before its time and returns its value; undefined when none waits. */
  shift(): V | undefined {
    const entry = this.#first;
    if (entry === null) return undefined;
    const value = entry.value;
    this.#remove(entry);
    return value;
  }

  /** The values of the waits in the line, oldest first. */
  values(): V[] {
    const values: V[] = [];
    for (let entry = this.#first; entry !== null; entry = entry.next) values.push(entry.value as V);
    return values;
  }

  /** Ends every wait at once, without telling onTimeout, and stops the timer. */
  clear(): void {
    while (this.#first !== null) this.#remove(this.#first);
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #remove(entry: Entry<V>): boolean {
    if (!entry.waiting) return false;
    entry.waiting = false;
    if (entry.previous !== null) entry.previous.next = entry.next;
    else this.#first = entry.next;
    if (entry.next !== null) entry.next.previous = entry.previous;
    else this.#last = entry.previous;
    entry.previous = null;
    entry.next = null;
    entry.value = undefined;
    this.#size -= 1;
    return true;
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
    const due: Entry<V>[] = [];
    for (let entry = this.#first; entry !== null; entry = entry.next) {
      if (now - entry.since < this.#timeoutMs) {
        this.#timer = this.#arm(entry.since + this.#timeoutMs - now);
        break;
      }
      due.push(entry);
    }
    for (const entry of due) {
      // onTimeout may have ended or cleared a later one of them: only a wait still in the line is told.
      const value = entry.value as V;
      if (this.#remove(entry)) this.#onTimeout(value);
    }
  }
}
