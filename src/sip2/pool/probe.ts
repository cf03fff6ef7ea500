import type { Logger } from 'pino';
import { CircuitBreaker, type CircuitOptions, type CircuitTransition, DEFAULT_CIRCUIT_OPTIONS } from '../circuit.js';
import { IlsProtocolError, IlsTimeout, IlsUnavailable, PoolRefused } from '../errors.js';
import { SC_STATUS } from '../messages.js';
import type { PoolCore } from './core.js';
import type { PoolPause } from './types.js';

/** While every connection is still held by work sent before the circuit opened, look again this soon for one to probe with. */
const PROBE_RECHECK_MS = 100;

/** The outcome of opening one connection, for the probe (a new session answers it as well). */
export type OpenOutcome = { ok: true } | { ok: false; error: unknown };

export interface CircuitGlue {
  circuit?: Partial<CircuitOptions> | undefined;
  logger: Logger | undefined;
  pauseNow: () => PoolPause | null;
  /** Whether every connection the pool may have is open or opening (none can be opened for the probe). */
  full: () => boolean;
  /** Opens one connection into the pool (the refill's open). */
  open: () => Promise<OpenOutcome>;
  /** The circuit opened: the refill stops. */
  onOpen: () => void;
  /** The circuit closed: the pool fills again. */
  onClose: () => void;
}

/**
 * The pool's side of the circuit breaker (circuit.ts, a pure state
 * machine): it counts the ILS's failures, refuses work while open, and runs
 * the one probe after each cool-down, on a timer (unref'd): a 99 on an idle
 * connection, or a new connection (93 login + 99). Success closes the circuit
 * and refills the pool; failure opens it again for longer. A successful
 * login counts as a success too.
 */
export class PoolCircuit {
  readonly breaker: CircuitBreaker;
  readonly #glue: CircuitGlue;
  readonly #core: PoolCore;
  #probeTimer: NodeJS.Timeout | null = null;
  /** Whether the last failure counted was the ILS refusing the terminal login: what the circuit's rejection names. */
  #loginRefused = false;

  constructor(glue: CircuitGlue, core: PoolCore) {
    this.#glue = glue;
    this.#core = core;
    this.breaker = new CircuitBreaker(
      {
        failureThreshold: glue.circuit?.failureThreshold ?? DEFAULT_CIRCUIT_OPTIONS.failureThreshold,
        coolDownMs: glue.circuit?.coolDownMs ?? DEFAULT_CIRCUIT_OPTIONS.coolDownMs,
      },
      { onTransition: (transition) => this.#onTransition(transition) },
    );
  }

  get closed(): boolean {
    return this.breaker.state === 'closed';
  }

  /** Counts a failure against the circuit when it is one of the ILS (not: queue full, a cancelled call, a value SIP2 cannot carry, a bug). */
  count(error: unknown): void {
    if (this.#core.closing) return;
    if (error instanceof IlsTimeout || error instanceof IlsUnavailable || error instanceof IlsProtocolError) {
      this.#loginRefused = isLoginRefusal(error);
      this.breaker.recordFailure(error.message);
    }
  }

  /**
   * What a request is refused with while the circuit is not closed: 503 with Retry-After at the next probe,
   * saying so when the ILS refuses the terminal login (a sysadmin's fix, not an ILS that is down).
   */
  rejection(): PoolRefused {
    const seconds = this.breaker.retryAfterSeconds();
    if (this.#loginRefused) {
      return new PoolRefused(
        'terminal-login-refused',
        `the ILS refuses the gateway's terminal login; requests are refused until a probe logs in (circuit ${this.breaker.state})`,
        seconds,
      );
    }
    return new PoolRefused(
      'circuit-open',
      `the library system is failing; requests are refused until a probe succeeds (circuit ${this.breaker.state})`,
      seconds,
    );
  }

  stop(): void {
    if (this.#probeTimer) clearTimeout(this.#probeTimer);
    this.#probeTimer = null;
  }

  #onTransition(transition: CircuitTransition): void {
    const log = this.#glue.logger;
    if (transition.to === 'open') {
      log?.warn(transition, 'SIP2 circuit open: failing requests at once until a probe succeeds');
      this.#glue.onOpen();
      // Nothing waits for a dead ILS: waiting work fails now with PoolRefused.
      this.#core.waiters.failAll(this.rejection());
      this.#schedule(this.breaker.msUntilProbe());
    } else if (transition.to === 'half-open') {
      log?.info(transition, 'SIP2 circuit half-open: probing the ILS');
    } else {
      log?.info(transition, 'SIP2 circuit closed: the ILS answers again');
      this.#glue.onClose();
    }
  }

  #schedule(delayMs: number): void {
    if (this.#probeTimer) clearTimeout(this.#probeTimer);
    this.#probeTimer = setTimeout(() => {
      this.#probeTimer = null;
      void this.#probe();
    }, delayMs);
    this.#probeTimer.unref();
  }

  /** The one probe of a half-open circuit: a 99 on an idle connection, or a new connection (93 + 99). */
  async #probe(): Promise<void> {
    const core = this.#core;
    if (core.closing || this.breaker.state !== 'open') return;
    const pause = this.#glue.pauseNow();
    if (pause) {
      // The ILS is down on purpose: probe once the pause is over.
      this.#schedule(Math.max(1, pause.until.getTime() - Date.now()));
      return;
    }
    const early = this.breaker.msUntilProbe();
    if (early > 0) {
      // Timers may fire a millisecond before the clock says so.
      this.#schedule(early);
      return;
    }
    const connection = core.takeIdle();
    if (!connection && this.#glue.full()) {
      // Every connection is still held by work sent before the circuit opened (bounded by the response timeout).
      this.#schedule(PROBE_RECHECK_MS);
      return;
    }
    this.breaker.tryStartProbe();
    let failure: unknown = null;
    if (connection) {
      await core.housekeep(connection, async () => {
        try {
          await connection.send(SC_STATUS);
        } catch (error) {
          connection.destroy('circuit probe failed');
          failure = error;
        }
      });
    } else {
      // A new session answers the probe as well (its failure counts nothing more while half-open).
      const opened = await this.#glue.open();
      if (!opened.ok) failure = opened.error;
    }
    if (core.closing) return;
    if (failure === null) {
      this.#loginRefused = false;
      this.breaker.probeSucceeded();
    } else {
      this.#loginRefused = isLoginRefusal(failure);
      this.breaker.probeFailed(failure instanceof Error ? failure.message : String(failure));
    }
  }
}

function isLoginRefusal(error: unknown): boolean {
  return error instanceof IlsUnavailable && error.reason === 'login-rejected';
}
