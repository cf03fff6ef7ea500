/**
 * The circuit breaker of the SIP2 pool, as a small pure state machine: no
 * sockets, no timers. The pool feeds it outcomes and asks it whether work may
 * go to the ILS; the clock and the random source are injectable for tests.
 *
 *   closed ──N consecutive failures──▶ open ──cool-down over──▶ half-open
 *     ▲                                  ▲                          │
 *     └────────── probe succeeded ───────┼──────────────────────────┤
 *                                        └───── probe failed ───────┘
 *
 * - closed: requests flow; backend failures (timeouts, protocol errors, EOF or
 *   reset, failed connects and logins) are counted, any success resets the
 *   count. At `failureThreshold` consecutive failures the circuit opens.
 * - open: no work goes to the ILS. Callers answer at once ("try again in
 *   `retryAfterSeconds()`"); nothing is queued and nothing connects. The
 *   cool-down grows with every failed probe (exponential from
 *   `coolDownMs.initial`, capped at `coolDownMs.max`, "equal jitter": half
 *   fixed, half random, so several gateways do not probe in step).
 * - half-open: the cool-down is over and exactly one probe (a 99 on an idle
 *   or a newly opened connection) is under way; its outcome alone decides.
 *
 * While open or half-open, outcomes of requests that were sent before the
 * circuit opened (stragglers) are ignored: only the probe decides. A probe
 * that succeeds is a recovery like any other success: the count of trips in a
 * row starts again, so the next trip waits the base cool-down, not a doubled
 * one left over from an outage that is over.
 */

export type CircuitState = 'closed' | 'open' | 'half-open';

export interface CircuitOptions {
  /** Consecutive backend failures that open the circuit (>= 1). */
  failureThreshold: number;
  /** Wait before the probe: `initial` after the first trip, doubling per further trip, at most `max`; jittered. */
  coolDownMs: { initial: number; max: number };
}

export const DEFAULT_CIRCUIT_OPTIONS: Readonly<CircuitOptions> = Object.freeze({
  failureThreshold: 5,
  coolDownMs: Object.freeze({ initial: 1000, max: 30_000 }),
});

export interface CircuitTransition {
  from: CircuitState;
  to: CircuitState;
  /** Why: the last failure, or the probe's outcome. */
  reason: string;
  /** Consecutive failures counted when the transition happened. */
  failures: number;
  /** Trips in a row without a confirmed recovery. */
  trips: number;
  /** When opening: milliseconds until the probe. */
  probeInMs?: number;
}

export interface CircuitHooks {
  /** Milliseconds clock; default Date.now. */
  now?: () => number;
  /** Uniform [0, 1); default Math.random. */
  random?: () => number;
  /** Called synchronously on every state change. */
  onTransition?: (transition: CircuitTransition) => void;
}

export class CircuitBreaker {
  private current: CircuitState = 'closed';
  private failures = 0;
  private trips = 0;
  private probeAt = 0;
  private readonly options: CircuitOptions;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly onTransition: ((transition: CircuitTransition) => void) | undefined;

  constructor(options: CircuitOptions = DEFAULT_CIRCUIT_OPTIONS, hooks: CircuitHooks = {}) {
    const { failureThreshold, coolDownMs } = options;
    if (!Number.isInteger(failureThreshold) || failureThreshold < 1)
      throw new RangeError('circuit failureThreshold must be an integer >= 1');
    if (!(coolDownMs.initial >= 1) || !(coolDownMs.max >= coolDownMs.initial)) {
      throw new RangeError('circuit coolDownMs needs 1 <= initial <= max');
    }
    this.options = { failureThreshold, coolDownMs: { ...coolDownMs } };
    this.now = hooks.now ?? Date.now;
    this.random = hooks.random ?? Math.random;
    this.onTransition = hooks.onTransition;
  }

  get state(): CircuitState {
    return this.current;
  }

  /** Consecutive failures counted while closed (0 after any success). */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /** How many times in a row the circuit opened without a success in between. */
  get consecutiveTrips(): number {
    return this.trips;
  }

  /** Milliseconds until the probe may start: > 0 only while open and cooling down. */
  msUntilProbe(): number {
    return this.current === 'open' ? Math.max(0, this.probeAt - this.now()) : 0;
  }

  /** What a client should be told to wait (Retry-After): the time to the next probe, at least 1 s; 0 while closed. */
  retryAfterSeconds(): number {
    if (this.current === 'closed') return 0;
    return Math.max(1, Math.ceil(this.msUntilProbe() / 1000));
  }

  /** A request, keepalive or new session (login) got its answer. */
  recordSuccess(): void {
    if (this.current !== 'closed') return;
    this.failures = 0;
    this.trips = 0;
  }

  /** A request, connect or login failed in the backend (not: queue full, a value SIP2 cannot carry). */
  recordFailure(reason: string): void {
    if (this.current !== 'closed') return;
    this.failures++;
    if (this.failures >= this.options.failureThreshold) this.open(reason);
  }

  /** Open and the cool-down is over: moves to half-open and returns true; the caller must then run the probe. */
  tryStartProbe(): boolean {
    if (this.current !== 'open' || this.now() < this.probeAt) return false;
    this.transition('half-open', 'cool-down over; probing the ILS');
    return true;
  }

  probeSucceeded(): void {
    if (this.current !== 'half-open') return;
    this.failures = 0;
    this.trips = 0;
    this.transition('closed', 'probe answered');
  }

  probeFailed(reason: string): void {
    if (this.current !== 'half-open') return;
    this.open(`probe failed: ${reason}`);
  }

  /** The jittered cool-down after `trips` trips in a row. */
  coolDownFor(trips: number): number {
    const { initial, max } = this.options.coolDownMs;
    const base = Math.min(max, initial * 2 ** Math.max(0, trips - 1));
    return Math.round(base / 2 + (this.random() * base) / 2);
  }

  private open(reason: string): void {
    this.trips++;
    const coolDown = this.coolDownFor(this.trips);
    this.probeAt = this.now() + coolDown;
    this.transition('open', reason, coolDown);
  }

  private transition(to: CircuitState, reason: string, probeInMs?: number): void {
    const from = this.current;
    this.current = to;
    this.onTransition?.({
      from,
      to,
      reason,
      failures: this.failures,
      trips: this.trips,
      ...(probeInMs === undefined ? {} : { probeInMs }),
    });
  }
}
