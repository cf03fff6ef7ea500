import type { Logger } from 'pino';
import { IlsProtocolError, IlsTimeout, IlsUnavailable, isSip2Failure, PoolRefused } from '../errors.js';
import type { PoolCore } from './core.js';
import { pauseRejection } from './pause.js';
import type { OpenOutcome, PoolCircuit } from './probe.js';
import type { Backoff, ConnectionFactory, PoolConnection, PoolPause } from './types.js';

/** A connection the ILS closes sooner than this after its login, without serving a request, makes the next refill wait longer. */
const DIED_YOUNG_MS = 5000;

export interface RefillOptions {
  connect: ConnectionFactory;
  min: number;
  max: number;
  backoff: Backoff;
  sessionLimitRetryMs: number;
  logger: Logger | undefined;
  pauseNow: () => PoolPause | null;
  /** Told each new connection, before it joins the pool (the pool listens for its close). */
  onOpened: (connection: PoolConnection) => void;
}

/**
 * Opening connections: `min` kept open in the background (fill, with capped,
 * jittered exponential backoff after failures), and more up to `max` for
 * requests that wait (grow), beside the line: a request never waits for one
 * particular login, it takes the first connection that comes free.
 *
 * That matters with pre-forking SIP servers (Koha, SIPServer) that accept a
 * TCP connection but answer its login only when a worker is free: a login
 * that is not answered while other connections work is no failure of the
 * ILS; the pool learns how many sessions the ILS serves, stops growing past
 * that (for sessionLimitRetryMs), says so once in the log with advice, and
 * reports it in stats() (`sessionLimit`).
 */
export class Refill {
  opening = 0;
  created = 0;
  connectFailures = 0;
  /** Why the last attempt to open a session failed, while none has opened since. */
  lastOpenFailure: unknown = null;
  readonly #options: RefillOptions;
  readonly #core: PoolCore;
  readonly #circuit: PoolCircuit;
  /** Connections the ILS closed young without serving anything, since the last one that served: the refill waits longer per one. */
  #deaths = 0;
  #sessionLimit: { value: number; until: number } | null = null;
  #timer: NodeJS.Timeout | null = null;
  #nextId = 0;

  constructor(options: RefillOptions, core: PoolCore, circuit: PoolCircuit) {
    this.#options = options;
    this.#core = core;
    this.#circuit = circuit;
  }

  /** How many sessions the ILS was found to serve, while that finding holds; null when none is known. */
  sessionLimit(): number | null {
    if (this.#sessionLimit === null) return null;
    if (Date.now() < this.#sessionLimit.until) return this.#sessionLimit.value;
    this.#sessionLimit = null;
    return null;
  }

  /** Whether every connection the pool may have now is open or opening. */
  full(): boolean {
    return this.#core.live.size + this.opening >= this.#options.max;
  }

  /** Opens connections for requests that wait: the first connection free serves the first request. */
  grow(): void {
    const core = this.#core;
    if (core.closed || !this.#circuit.closed || this.#options.pauseNow()) return;
    // A connection a keepalive holds is back within one exchange: it counts as on its way.
    const wanted = core.waiters.size - this.opening - core.housekeeping.size;
    const room = this.#sizeLimit() - core.live.size - this.opening;
    for (let i = 0; i < Math.min(wanted, room); i++) void this.open();
  }

  /**
   * Keeps `min` connections open while the circuit is closed, retrying with
   * backoff; while it is open only the probe connects, and its success
   * starts the fill again.
   */
  async fill(): Promise<void> {
    while (this.#wantsMore()) {
      if (!(await this.open()).ok) return; // onOpenFailed scheduled the retry
    }
  }

  schedule(delayMs: number): void {
    if (this.#timer || !this.#wantsMore()) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.fill();
    }, delayMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  /** A connection ended (not while closing): an ILS that drops every session right after its login must not get a login storm. */
  connectionEnded(connection: PoolConnection, lifetimeMs: number): void {
    if (connection.servedRequest) this.#deaths = 0;
    else if (lifetimeMs < DIED_YOUNG_MS) this.#deaths++;
    this.grow();
    this.schedule(this.#backoffDelay(this.#deaths));
  }

  /** Opens one connection into the pool; failures are handled here and returned for the probe. */
  async open(): Promise<OpenOutcome> {
    // No connection attempt during a scheduled pause: the refill starts again when it ends.
    const pause = this.#options.pauseNow();
    if (pause) return { ok: false, error: pauseRejection(pause) };
    this.opening++;
    let connection: PoolConnection;
    try {
      connection = await this.#options.connect(++this.#nextId);
    } catch (error) {
      this.opening--;
      this.#onOpenFailed(error);
      return { ok: false, error };
    }
    this.opening--;
    this.created++;
    if (this.#core.closed) {
      connection.close('pool closing');
      return { ok: false, error: new PoolRefused('shutting-down', 'the gateway is shutting down its ILS connections') };
    }
    // A new session is proof that the ILS works.
    this.#circuit.breaker.recordSuccess();
    this.lastOpenFailure = null;
    this.#core.live.add(connection);
    this.#options.onOpened(connection);
    this.#options.logger?.info({ conn: connection.id, connections: this.#core.live.size }, 'SIP2 connection ready');
    // Straight to the first waiting request, or idle.
    this.#core.release(connection);
    return { ok: true };
  }

  #wantsMore(): boolean {
    const core = this.#core;
    return (
      !core.closing &&
      this.#circuit.closed &&
      !this.#options.pauseNow() &&
      core.live.size + this.opening < Math.min(this.#options.min, this.#sizeLimit())
    );
  }

  /** The most connections to have now: `max`, or fewer while the ILS is known to serve fewer sessions. */
  #sizeLimit(): number {
    return Math.min(this.#options.max, this.sessionLimit() ?? Number.POSITIVE_INFINITY);
  }

  #onOpenFailed(error: unknown): void {
    const core = this.#core;
    if (core.closed) return;
    // A TCP connection the ILS accepted but whose login it does not answer, while other sessions work: a
    // pre-forking server with no free worker. Not a failure; the requests wait for a connection to free up.
    const noWorker =
      error instanceof IlsTimeout &&
      (error.reason === 'login-timeout' || error.reason === 'connect-timeout') &&
      core.live.size > 0;
    if (noWorker) {
      this.#learnSessionLimit(core.live.size);
      return;
    }
    this.connectFailures++;
    this.lastOpenFailure = error;
    if (core.live.size === 0 && this.opening === 0) {
      // Nothing will free up: the waiting requests get the reason now instead of an acquire timeout later
      // (before the circuit may open on this failure: their own failure says more than "try again later").
      core.waiters.failAll(notSent(error));
    }
    this.#circuit.count(error);
    this.#options.logger?.warn(
      {
        reason: error instanceof Error ? error.message : String(error),
        circuit: this.#circuit.breaker.state,
        failures: this.#circuit.breaker.consecutiveFailures,
      },
      'cannot open a SIP2 connection to the ILS',
    );
    if (!core.closing) this.schedule(this.#backoffDelay(this.#circuit.breaker.consecutiveFailures));
  }

  #learnSessionLimit(served: number): void {
    const known = this.#sessionLimit?.value;
    this.#sessionLimit = { value: served, until: Date.now() + this.#options.sessionLimitRetryMs };
    if (known === served) return;
    this.#options.logger?.warn(
      { sessions: served, max: this.#options.max },
      `the ILS serves only ${served} SIP2 session${served === 1 ? '' : 's'} to this gateway at once: a further login got no answer ` +
        `(no free SIP2 worker). Requests share the ${served} open session${served === 1 ? '' : 's'}. ` +
        `Give the ILS more SIP2 workers (Koha, SIPServer: min_servers/min_spare_servers/max_servers in SIPconfig.xml) ` +
        `or set sip2.pool.max to ${served}`,
    );
  }

  /** "Equal jitter": half the exponential delay fixed, half random, so many gateways do not reconnect in step. */
  #backoffDelay(attempts: number): number {
    const { initialMs, maxMs } = this.#options.backoff;
    const exponential = Math.min(maxMs, initialMs * 2 ** Math.max(0, attempts - 1));
    return Math.round(exponential / 2 + (Math.random() * exponential) / 2);
  }
}

/** The failure of a connection attempt as it reaches the requests that waited for it: nothing of theirs was sent. */
function notSent(error: unknown): Error {
  if (error instanceof IlsUnavailable) return new IlsUnavailable(error.reason, error.message, { cause: error });
  if (error instanceof IlsTimeout) return new IlsTimeout(error.reason, error.message, { cause: error });
  if (error instanceof IlsProtocolError) return new IlsProtocolError(error.reason, error.message, { cause: error });
  if (isSip2Failure(error) || error instanceof Error) return error;
  return new IlsUnavailable('connect-error', String(error));
}
