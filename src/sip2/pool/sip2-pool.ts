import type { Logger } from 'pino';
import type { CancelSignal } from '../../cancel-signal.js';
import type { CircuitState } from '../circuit.js';
import type { ConnectionClose } from '../connection.js';
import { cancelled, IlsUnavailable, PoolRefused } from '../errors.js';
import type { AcsStatus, RequestMessage, ResponseOf } from '../spec.js';
import { PoolCore } from './core.js';
import { PauseWatch, pauseRejection } from './pause.js';
import { PoolCircuit } from './probe.js';
import { Refill } from './refill.js';
import { sendOnce } from './send.js';
import type { ExecuteOptions, PoolConnection, PoolOptions, PoolPause, PoolStats } from './types.js';
import { Upkeep } from './upkeep.js';
import { follow } from './waiters.js';

/** The pool's defaults: what it does with an option not given; the configuration schema's defaults are these. */
export const POOL_DEFAULTS = Object.freeze({
  min: 1,
  max: 4,
  acquireTimeoutMs: 5000,
  maxWaiting: 200,
  /** Well below the 60 s session timeout Koha and SIPServer ship with. */
  keepaliveIntervalMs: 20_000,
  maxLifetimeMs: 3_600_000,
  backoff: Object.freeze({ initialMs: 250, maxMs: 30_000 }),
  sessionLimitRetryMs: 600_000,
  /** How long close() lets admitted work finish. */
  drainTimeoutMs: 10_000,
});

/**
 * A bounded pool of logged-in SIP2 connections. Its parts, one job each:
 * PoolCore (the connections, the idle list and the line of waiting requests,
 * with direct hand-off), Refill (opening connections: `min` in the
 * background, more for waiting requests, the ILS's session limit learned),
 * Upkeep (keepalive and lifetime), PauseWatch (maintenance windows) and
 * PoolCircuit (the circuit breaker and its probe). This facade admits
 * requests, runs them on a connection and wires the parts together.
 *
 * A request takes an idle connection when no other request waits before
 * it; otherwise it waits in line (at most maxWaiting, each at most
 * acquireTimeoutMs, a caller's signal takes it out at once) and gets the
 * first connection that comes free, released by another request, given
 * back by a keepalive or newly logged in. Admission fails at once with
 * PoolRefused while the pool closes, during a pause, or while the circuit is
 * not closed. An ILS closing idle sessions (its own `timeout`) is normal:
 * no warning, no circuit count, replaced when needed (Upkeep, Refill).
 */
export class Sip2Pool {
  readonly #core: PoolCore;
  readonly #circuit: PoolCircuit;
  readonly #refill: Refill;
  readonly #upkeep: Upkeep;
  readonly #pause: PauseWatch;
  readonly #maxWaiting: number;
  readonly #log: Logger | undefined;
  #closePromise: Promise<void> | null = null;

  constructor(options: PoolOptions) {
    const min = options.min ?? POOL_DEFAULTS.min;
    const max = options.max ?? POOL_DEFAULTS.max;
    if (min < 0 || max < 1 || min > max) throw new RangeError('pool needs 0 <= min <= max and max >= 1');
    const acquireTimeoutMs = options.acquireTimeoutMs ?? POOL_DEFAULTS.acquireTimeoutMs;
    const logger = options.logger;
    const pauseNow = () => this.#pause.now();
    this.#maxWaiting = options.maxWaiting ?? POOL_DEFAULTS.maxWaiting;
    this.#log = logger;
    // The parts call each other through these closures, so that none imports another's module beyond its types.
    this.#core = new PoolCore(
      {
        acquireTimeoutMs,
        onAcquireTimeout: () =>
          new PoolRefused('acquire-timeout', `no ILS connection became free within ${acquireTimeoutMs} ms`),
      },
      {
        retireReason: (connection) => this.#retireReason(connection),
        onIdle: (connection) => this.#upkeep.arm(connection),
        onHousekept: () => this.#refill.grow(),
      },
    );
    this.#pause = new PauseWatch(
      { pause: options.pause, logger, onBegin: () => this.#refill.stop(), onEnd: () => this.#refill.schedule(0) },
      this.#core,
    );
    this.#circuit = new PoolCircuit(
      {
        circuit: options.circuit,
        logger,
        pauseNow,
        full: () => this.#refill.full(),
        open: () => this.#refill.open(),
        onOpen: () => this.#refill.stop(),
        onClose: () => this.#refill.schedule(0),
      },
      this.#core,
    );
    this.#refill = new Refill(
      {
        connect: options.connect,
        min,
        max,
        backoff: options.backoff ?? POOL_DEFAULTS.backoff,
        sessionLimitRetryMs: options.sessionLimitRetryMs ?? POOL_DEFAULTS.sessionLimitRetryMs,
        logger,
        pauseNow,
        onOpened: (connection) => connection.once('close', (close) => this.#onConnectionClosed(connection, close)),
      },
      this.#core,
      this.#circuit,
    );
    this.#upkeep = new Upkeep(
      {
        keepaliveIntervalMs: options.keepaliveIntervalMs ?? POOL_DEFAULTS.keepaliveIntervalMs,
        maxLifetimeMs: options.maxLifetimeMs ?? POOL_DEFAULTS.maxLifetimeMs,
        logger,
      },
      this.#core,
      this.#circuit,
    );
  }

  /** Opens `min` connections; resolves after the first attempt whatever its outcome (failures retry in the background). */
  async start(): Promise<void> {
    this.#pause.start();
    await this.#refill.fill();
  }

  /** Runs `fn` with a connection of its own; the connection returns to the pool afterwards. */
  execute<T>(fn: (connection: PoolConnection) => Promise<T>, options: ExecuteOptions = {}): Promise<T> {
    const { signal } = options;
    const core = this.#core;
    if (signal?.aborted) return Promise.reject(cancelled(signal, false));
    if (core.closing)
      return Promise.reject(new PoolRefused('shutting-down', 'the gateway is shutting down its ILS connections'));
    const pause = this.#pause.now();
    if (pause) return Promise.reject(pauseRejection(pause));
    if (!this.#circuit.closed) return Promise.reject(this.#circuit.rejection());
    // First come, first served: an idle connection is free for this request only when none waits before it.
    const connection = core.waiters.size === 0 ? core.takeIdle() : undefined;
    if (connection) return follow<T>(this.#use(connection, fn), options);
    // Only work that has to wait counts: with a free connection it starts at once, even with maxWaiting 0.
    if (core.waiters.size >= this.#maxWaiting) {
      return Promise.reject(
        new PoolRefused('queue-full', `too many requests are waiting for the ILS (${core.waiters.size})`),
      );
    }
    const outcome = core.waiters.wait<T>((given) => this.#use(given, fn), options);
    this.#refill.grow();
    return outcome;
  }

  /**
   * Sends one message: a read that failed on a connection that proved dead
   * is tried once more, a write never (send.ts).
   */
  send<M extends RequestMessage>(
    message: M,
    options: { signal?: CancelSignal | undefined } = {},
  ): Promise<ResponseOf<M['code']>> {
    return sendOnce(message, options.signal, {
      execute: (fn, execution) => this.execute(fn, execution),
      mayRetry: () => !this.#core.closing && this.#circuit.closed,
      logger: this.#log,
    });
  }

  /** closed: requests go to the ILS; open: they fail at once; half-open: one probe is under way. For health and metrics. */
  get circuitState(): CircuitState {
    return this.#circuit.breaker.state;
  }

  /** True while the circuit is not closed (requests fail fast with PoolRefused). */
  get circuitOpen(): boolean {
    return !this.#circuit.closed;
  }

  /** The scheduled pause (maintenance window) on now; null outside one. */
  get currentPause(): PoolPause | null {
    return this.#pause.now();
  }

  /** True when at least one logged-in connection is open. */
  get hasReadyConnection(): boolean {
    return this.#core.live.size > 0;
  }

  /** The ACS status (98) of any open connection, for health and the doctor. */
  get acsStatus(): AcsStatus | null {
    for (const connection of this.#core.live) if (connection.acsStatus) return connection.acsStatus;
    return null;
  }

  /**
   * Why the last attempt to open a session failed, while none has opened
   * since (the start-up error line and /readyz say why); null once one opens.
   */
  get openFailure(): unknown {
    return this.#refill.lastOpenFailure;
  }

  stats(): PoolStats {
    const core = this.#core;
    const refill = this.#refill;
    return {
      connections: core.live.size,
      idle: core.idleCount,
      busy: core.live.size - core.idleCount,
      opening: refill.opening,
      waiting: core.waiters.size,
      running: core.running,
      created: refill.created,
      connectFailures: refill.connectFailures,
      sessionLimit: refill.sessionLimit(),
      keepaliveIntervalMs: this.#upkeep.intervalMs,
      circuit: this.#circuit.breaker.state,
      consecutiveFailures: this.#circuit.breaker.consecutiveFailures,
      closing: core.closing,
      paused: this.#pause.now() !== null,
    };
  }

  /** Stops taking work, lets running and waiting requests finish (within `drainTimeoutMs`), then closes every connection. */
  close(drainTimeoutMs: number = POOL_DEFAULTS.drainTimeoutMs): Promise<void> {
    this.#closePromise ??= this.#drainAndClose(drainTimeoutMs);
    return this.#closePromise;
  }

  /** Fails waiting work and drops every connection now; running requests fail with IlsUnavailable. */
  destroy(): void {
    const core = this.#core;
    core.closing = true;
    core.closed = true;
    this.#stopTimers();
    core.waiters.failAll(new PoolRefused('shutting-down', 'the gateway shut down its ILS connections'));
    for (const connection of [...core.live]) connection.destroy('pool destroyed');
  }

  /** Runs `fn` on a connection the request holds, counts its outcome for the circuit, and gives the connection back. */
  async #use<T>(connection: PoolConnection, fn: (connection: PoolConnection) => Promise<T>): Promise<T> {
    try {
      const result = await fn(connection);
      this.#circuit.breaker.recordSuccess();
      return result;
    } catch (error) {
      this.#circuit.count(error);
      if (
        error instanceof IlsUnavailable &&
        error.requestSent &&
        (error.reason === 'closed' || error.reason === 'reset')
      ) {
        // A session found dead mid-request (an ILS restart drops them all at once, before their closes
        // reach us): the idle ones are suspect too. They are replaced as needed, so a retry gets a live one.
        this.#core.drainIdle((idle) => idle.close('another session was found dead mid-request'));
      }
      throw error;
    } finally {
      this.#core.release(connection);
    }
  }

  /** Why a connection coming back is closed rather than reused; null to reuse it. */
  #retireReason(connection: PoolConnection): string | null {
    if (this.#core.closed) return 'pool closing';
    if (this.#pause.now()) return 'scheduled maintenance of the ILS';
    if (this.#upkeep.isPastLifetime(connection)) return 'connection lifetime reached';
    return null;
  }

  #onConnectionClosed(connection: PoolConnection, close: ConnectionClose): void {
    // A keepalive's 99 in flight does not make the connection busy: the ILS's idle timeout and the keepalive crossed.
    const idle = this.#core.remove(connection) || close.idle;
    this.#upkeep.forget(connection);
    if (this.#core.closing) return;
    const lifetimeMs = Date.now() - connection.createdAt;
    this.#upkeep.closed(connection, close, idle, lifetimeMs);
    this.#refill.connectionEnded(connection, lifetimeMs);
  }

  async #drainAndClose(drainTimeoutMs: number): Promise<void> {
    const core = this.#core;
    core.closing = true;
    this.#stopTimers();
    if (!(await core.drained(drainTimeoutMs))) {
      this.#log?.warn({ stats: this.stats() }, 'SIP2 pool did not drain in time; dropping the remaining work');
      this.destroy();
      return;
    }
    core.closed = true;
    for (const connection of [...core.live]) connection.close('pool closed');
  }

  #stopTimers(): void {
    this.#refill.stop();
    this.#circuit.stop();
    this.#pause.stop();
    this.#upkeep.stop();
  }
}
