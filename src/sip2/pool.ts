import type PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { CancelSignal } from '../cancel-signal.js';
import {
  CircuitBreaker,
  type CircuitOptions,
  type CircuitState,
  type CircuitTransition,
  DEFAULT_CIRCUIT_OPTIONS,
} from './circuit.js';
import type { ConnectionClose } from './connection.js';
import {
  cancelled,
  IlsProtocolError,
  IlsTimeout,
  IlsUnavailable,
  isSip2Failure,
  PoolRefused,
  Sip2Error,
} from './errors.js';
import { SC_STATUS } from './messages.js';
import { type AcsStatus, NON_IDEMPOTENT, type RequestMessage, type ResponseOf } from './spec.js';
import { WaitingQueue, type WaitOptions } from './waiting-queue.js';

export type { CircuitState } from './circuit.js';

/** While every connection is still held by work sent before the circuit opened, look again this soon for one to probe with. */
const PROBE_RECHECK_MS = 100;
/** A connection the ILS closes sooner than this after its login, without serving a request, makes the next refill wait longer. */
const DIED_YOUNG_MS = 5000;

/** How often the pool looks whether a scheduled pause (a maintenance window) has begun or ended. */
const PAUSE_CHECK_MS = 1000;

/** A scheduled pause of the ILS (a maintenance window): nothing is sent and no connection opened until `until`. */
export interface PoolPause {
  readonly until: Date;
  /** For messages: "until 02:30 (Europe/Berlin)". */
  readonly description: string;
}

/** What the pool needs of a logged-in SIP2 session. Sip2Connection is one; the pool's unit tests use fakes. */
export interface PoolConnection {
  readonly id: number;
  /** Milliseconds since the epoch (Date.now()) when the session was logged in. */
  readonly createdAt: number;
  /** Logged in, not closed, nothing in flight. */
  readonly isUsable: boolean;
  /** Whether a request other than the login was ever sent on it. */
  readonly servedRequest: boolean;
  /** The last 98 the ILS sent on it. */
  readonly acsStatus: AcsStatus | null;
  send<M extends RequestMessage>(message: M): Promise<ResponseOf<M['code']>>;
  /** Ends the session politely. */
  close(reason: string): void;
  /** Drops it at once. */
  destroy(reason: string): void;
  /** Called once when the session ends, whoever ended it. */
  once(event: 'close', listener: (close: ConnectionClose) => void): unknown;
}

/**
 * Opens one session: connect, 93 login, 99 status. `id` is for logs. Rejects
 * with a typed backend error; a login the ILS does not answer is a
 * IlsTimeout with reason 'login-timeout'.
 */
type ConnectionFactory = (id: number) => Promise<PoolConnection>;

export interface PoolOptions {
  /** Opens sessions: `(id) => Sip2Connection.open({...options, id})`, or a fake in tests. */
  connect: ConnectionFactory;
  /** Connections kept open even when idle. */
  min: number;
  /** Connections at most; also how many requests run at once. */
  max: number;
  /** How long a request may wait for a free connection before PoolRefused. */
  acquireTimeoutMs: number;
  /** How many requests may wait; one more fails at once with PoolRefused. */
  maxWaiting: number;
  /** Send 99 on a connection idle this long, to stay below the ILS's idle timeout. 0 = never. */
  keepaliveIntervalMs: number;
  /** Retire connections older than this (they are closed when next idle). 0 = never. */
  maxLifetimeMs: number;
  /**
   * Delays of the background refill (keeping `min` open) after failed
   * connects, or after the ILS closed connections that never served a
   * request: exponential from initialMs, capped at maxMs, with jitter.
   */
  backoff: { initialMs: number; maxMs: number };
  /**
   * How long a learned limit on the ILS's sessions holds before the pool tries
   * to grow past it again (the ILS's other clients may have freed workers).
   * Default 10 minutes.
   */
  sessionLimitRetryMs?: number | undefined;
  /**
   * Circuit breaker (see circuit.ts): after `failureThreshold` consecutive
   * backend failures every request fails at once with PoolRefused until
   * a probe (99) succeeds; default 5 failures, cool-down 1 s growing to 30 s.
   */
  circuit?: Partial<CircuitOptions> | undefined;
  /**
   * Scheduled pauses (sip2.maintenance): a pure function of the clock, asked
   * with the current time. While it returns a pause, requests fail at once
   * with PoolRefused (reason maintenance, Retry-After at its end), no
   * connection is opened or probed, and idle sessions are closed; when it
   * ends the pool fills again.
   */
  pause?: ((now: Date) => PoolPause | null) | undefined;
  logger?: Logger | undefined;
}

export interface PoolStats {
  /** Logged-in connections (busy or idle). */
  connections: number;
  idle: number;
  busy: number;
  opening: number;
  /** Requests waiting for a connection. */
  waiting: number;
  /** Requests holding a connection. */
  running: number;
  created: number;
  connectFailures: number;
  /** How many sessions the ILS was found to serve at once, while that finding holds; null when none is known. */
  sessionLimit: number | null;
  /** closed: requests flow; open: they fail at once (503); half-open: one probe is deciding. */
  circuit: CircuitState;
  /** Consecutive backend failures counted towards opening the circuit. */
  consecutiveFailures: number;
  closing: boolean;
  /** Whether a scheduled pause (maintenance window) is on. */
  paused: boolean;
}

/** The caller's signal and what to do with the outcome of work its caller stopped waiting for (WaitOptions). */
export type ExecuteOptions = WaitOptions<unknown>;

/**
 * A bounded pool of logged-in SIP2 connections, with ONE queue of requests.
 *
 * The queue (p-queue) runs as many requests at once as there are logged-in
 * connections free for them: its concurrency follows the live connections
 * (paused at none), so a request that starts always finds an idle connection,
 * and a waiting request takes the first connection that becomes free,
 * whether released by another request or newly logged in. Opening
 * connections happens beside the queue: when requests wait and no connection
 * is idle, the pool opens up to `max`, and a request never waits for one
 * particular login. That matters with pre-forking SIP servers (Koha,
 * SIPServer) that accept a TCP connection but answer its login only when a
 * worker is free: a login that is not answered while other connections work
 * is no failure of the ILS; the pool learns how many sessions the ILS serves,
 * stops growing past that, says so once in the log with advice, and reports
 * it in stats() (`sessionLimit`).
 *
 * Everything that holds a connection outside the queue (keepalive, circuit
 * probe) takes it out of the queue's count for as long, so the count stays
 * exact. Races worth knowing:
 * - p-queue lowers its running count a microtask after a task ends, after
 *   the task put its connection back: the count is briefly one too high,
 *   never too low.
 * - A waiting request that gives up (acquire timeout, caller cancelled) is
 *   taken out of p-queue's line and answered by the WaitingQueue, never
 *   through an AbortSignal given to p-queue, which would also reject a task
 *   that already runs and free its slot early. Once it runs, the caller is
 *   answered separately and the slot is held until the connection is back.
 *
 * A circuit breaker (circuit.ts) stands in front of the queue: after
 * repeated backend failures it opens, `execute` then rejects at once with
 * PoolRefused (Retry-After = time to the next probe), waiting work is
 * failed the same way, no connection is opened and the refill stops. A timer
 * (unref'd) runs one probe after the cool-down: a 99 on an idle connection,
 * or a new connection (93 login + 99). Success closes the circuit and
 * refills the pool; failure opens it again for longer. A successful login
 * counts as a success too.
 *
 * An ILS closing idle sessions (its own `timeout`) is normal: a connection
 * that ends with nothing in flight is dropped without a warning and without
 * counting against the circuit, and replaced when needed.
 */
export class Sip2Pool {
  private readonly options: PoolOptions;
  /** The one queue of requests (WaitingQueue: p-queue whose waiting requests can give up) and its p-queue. */
  private readonly waits: WaitingQueue;
  private readonly queue: PQueue;
  private readonly log: Logger | undefined;
  /** Logged-in connections, busy or idle. */
  private readonly live = new Set<PoolConnection>();
  private idle: PoolConnection[] = [];
  /** Connections a keepalive or probe holds, outside the queue's count. */
  private readonly housekeeping = new Set<PoolConnection>();
  private readonly keepaliveTimers = new Map<PoolConnection, NodeJS.Timeout>();
  private opening = 0;
  private created = 0;
  private connectFailures = 0;
  private lastOpenFailure: unknown = null;
  /** Connections the ILS closed young without serving anything, since the last one that served: the refill waits longer per one. */
  private deaths = 0;
  private sessionLimit: { value: number; until: number } | null = null;
  /** Whether the advice about the ILS closing idle sessions was logged (once per pool). */
  private idleCloseReported = false;
  private readonly circuit: CircuitBreaker;
  private probeTimer: NodeJS.Timeout | null = null;
  private fillTimer: NodeJS.Timeout | null = null;
  private pauseTimer: NodeJS.Timeout | null = null;
  /** The pause the last check found on (its start logged, idle sessions closed); null outside one. */
  private pausedUntil: PoolPause | null = null;
  /** close() called: no new work is admitted, admitted work drains. */
  private closing = false;
  /** Drained or destroyed: connections are closed as they come back. */
  private closed = false;
  private closePromise: Promise<void> | null = null;
  private nextId = 0;

  constructor(options: PoolOptions) {
    if (options.min < 0 || options.max < 1 || options.min > options.max) {
      throw new RangeError('pool needs 0 <= min <= max and max >= 1');
    }
    this.options = options;
    this.log = options.logger;
    this.waits = new WaitingQueue({
      concurrency: 1,
      autoStart: false,
      waitTimeoutMs: options.acquireTimeoutMs,
      onWaitTimeout: () =>
        new PoolRefused('acquire-timeout', `no ILS connection became free within ${options.acquireTimeoutMs} ms`),
    });
    this.queue = this.waits.queue;
    this.circuit = new CircuitBreaker(
      {
        failureThreshold: options.circuit?.failureThreshold ?? DEFAULT_CIRCUIT_OPTIONS.failureThreshold,
        coolDownMs: options.circuit?.coolDownMs ?? DEFAULT_CIRCUIT_OPTIONS.coolDownMs,
      },
      { onTransition: (transition) => this.onCircuitTransition(transition) },
    );
  }

  /** Opens `min` connections; resolves after the first attempt whatever its outcome (failures retry in the background). */
  async start(): Promise<void> {
    if (this.options.pause) {
      this.pauseTimer = setInterval(() => this.checkPause(), PAUSE_CHECK_MS);
      this.pauseTimer.unref();
      this.checkPause();
    }
    await this.fill();
  }

  /** Runs `fn` with a connection of its own; the connection returns to the pool afterwards. */
  execute<T>(fn: (connection: PoolConnection) => Promise<T>, options: ExecuteOptions = {}): Promise<T> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(cancelled(signal, false));
    if (this.closing)
      return Promise.reject(new PoolRefused('shutting-down', 'the gateway is shutting down its ILS connections'));
    const pause = this.pauseNow();
    if (pause) return Promise.reject(pauseRejection(pause));
    if (this.circuit.state !== 'closed') return Promise.reject(this.circuitRejection());
    const startsNow = this.waits.startsNow;
    // Only work that has to wait counts: with a free connection it starts at once, even with maxWaiting 0.
    if (!startsNow && this.queue.size >= this.options.maxWaiting) {
      return Promise.reject(
        new PoolRefused('queue-full', `too many requests are waiting for the ILS (${this.queue.size})`),
      );
    }

    const run = async (): Promise<T> => {
      const connection = this.takeIdle();
      if (!connection) {
        // Cannot happen while the queue's count follows the free connections; fail loudly rather than hang.
        this.log?.error({ stats: this.stats() }, 'SIP2 pool found no idle connection for a started request');
        throw new PoolRefused('acquire-timeout', 'no ILS connection was free');
      }
      try {
        const result = await fn(connection);
        this.circuit.recordSuccess();
        return result;
      } catch (error) {
        this.recordOutcome(error);
        if (
          error instanceof IlsUnavailable &&
          error.requestSent &&
          (error.reason === 'closed' || error.reason === 'reset')
        ) {
          // A session found dead mid-request (an ILS restart drops them all at once, before their closes
          // reach us): the idle ones are suspect too. They are replaced as needed, so a retry gets a live one.
          this.retireIdle();
        }
        throw error;
      } finally {
        this.release(connection);
      }
    };
    const outcome = this.waits.run(run, options);
    if (!startsNow) this.grow();
    return outcome;
  }

  /**
   * Sends one message. A read that failed because its connection turned out
   * dead or confused is tried once more on another connection; a renew,
   * hold, renew-all or fee payment never is. A write whose caller stopped
   * waiting while it was at the ILS still finishes, and its outcome is logged.
   */
  send<M extends RequestMessage>(
    message: M,
    options: { signal?: CancelSignal | undefined } = {},
  ): Promise<ResponseOf<M['code']>> {
    const write = NON_IDEMPOTENT.has(message.code);
    const execution: ExecuteOptions = write
      ? { signal: options.signal, onAbandonedOutcome: (outcome) => this.logAbandonedWrite(message.code, outcome) }
      : { signal: options.signal };
    const exchange = (connection: PoolConnection) => connection.send(message);
    // A promise chain rather than an async function: one promise less per request, on every request.
    return this.execute(exchange, execution).catch((error: unknown) => {
      // Only a read that went out on a connection that then proved dead is worth a second try;
      // a failed connect or a rejected terminal login would only fail again.
      const retryable =
        !write && (error instanceof IlsUnavailable || error instanceof IlsProtocolError) && error.requestSent;
      // With the circuit now open, this request's own failure says more than "try again later".
      if (!retryable || this.closing || this.circuit.state !== 'closed') throw error;
      this.log?.info({ code: message.code, reason: error.reason }, 'retrying a SIP2 read on another connection');
      return this.execute(exchange, execution);
    });
  }

  /** closed: requests go to the ILS; open: they fail at once; half-open: one probe is under way. For health and metrics. */
  get circuitState(): CircuitState {
    return this.circuit.state;
  }

  /** True while the circuit is not closed (requests fail fast with PoolRefused). */
  get circuitOpen(): boolean {
    return this.circuit.state !== 'closed';
  }

  /** The scheduled pause (maintenance window) on now; null outside one. */
  get currentPause(): PoolPause | null {
    return this.pauseNow();
  }

  /** True when at least one logged-in connection is open. */
  get hasReadyConnection(): boolean {
    return this.live.size > 0;
  }

  /** The ACS status (98) of any open connection, for health and the doctor. */
  get acsStatus(): AcsStatus | null {
    for (const connection of this.live) if (connection.acsStatus) return connection.acsStatus;
    return null;
  }

  stats(): PoolStats {
    return {
      connections: this.live.size,
      idle: this.idle.length,
      busy: this.live.size - this.idle.length,
      opening: this.opening,
      waiting: this.queue.size,
      running: this.queue.pending,
      created: this.created,
      connectFailures: this.connectFailures,
      sessionLimit: this.currentSessionLimit(),
      circuit: this.circuit.state,
      consecutiveFailures: this.circuit.consecutiveFailures,
      closing: this.closing,
      paused: this.pauseNow() !== null,
    };
  }

  /** Stops taking work, lets running and waiting requests finish (within `drainTimeoutMs`), then closes every connection. */
  close(drainTimeoutMs = 10_000): Promise<void> {
    this.closePromise ??= this.drainAndClose(drainTimeoutMs);
    return this.closePromise;
  }

  /** Fails waiting work and drops every connection now; running requests fail with IlsUnavailable. */
  destroy(): void {
    this.closing = true;
    this.closed = true;
    this.clearTimers();
    this.failWaiting(new PoolRefused('shutting-down', 'the gateway shut down its ILS connections'));
    for (const connection of [...this.live]) connection.destroy('pool destroyed');
  }

  // ------------------------------------------------------------ the queue's count

  /** The queue may run as many requests as there are live connections not held by housekeeping. */
  private syncQueue(): void {
    const free = this.live.size - this.housekeeping.size;
    if (free <= 0) {
      this.queue.pause();
      return;
    }
    this.queue.concurrency = free;
    this.queue.start();
  }

  private takeIdle(): PoolConnection | undefined {
    while (this.idle.length > 0) {
      const connection = this.idle.shift()!;
      // Its keepalive timer keeps running: it finds the connection busy, and putIdle re-arms it.
      if (connection.isUsable) return connection;
    }
    return undefined;
  }

  private release(connection: PoolConnection): void {
    // A connection that ended while in use was cleaned up by its close handler.
    if (!connection.isUsable) return;
    if (this.closed) connection.close('pool closing');
    else if (this.pauseNow()) connection.close('scheduled maintenance of the ILS');
    else if (this.isPastLifetime(connection)) connection.close('connection lifetime reached');
    else this.putIdle(connection);
  }

  private putIdle(connection: PoolConnection): void {
    this.idle.push(connection);
    this.armKeepalive(connection);
  }

  private retireIdle(): void {
    for (const connection of this.idle.splice(0)) {
      this.clearKeepalive(connection);
      connection.close('another session was found dead mid-request');
    }
  }

  private failWaiting(error: Error): void {
    this.waits.failWaiting(error);
  }

  // ------------------------------------------------------------ opening connections

  /** The most connections to have now: `max`, or fewer while the ILS is known to serve fewer sessions. */
  private sizeLimit(): number {
    return Math.min(this.options.max, this.currentSessionLimit() ?? Number.POSITIVE_INFINITY);
  }

  private currentSessionLimit(): number | null {
    if (this.sessionLimit === null) return null;
    if (Date.now() < this.sessionLimit.until) return this.sessionLimit.value;
    this.sessionLimit = null;
    return null;
  }

  /** Opens connections for requests that wait, beside the queue: the first connection free serves the first request. */
  private grow(): void {
    if (this.closed || this.circuit.state !== 'closed' || this.pauseNow()) return;
    // A connection a keepalive holds is back within one exchange: it counts as on its way.
    const wanted = this.queue.size - this.opening - this.housekeeping.size;
    const room = this.sizeLimit() - this.live.size - this.opening;
    for (let i = 0; i < Math.min(wanted, room); i++) void this.open();
  }

  /** Opens one connection into the idle set; failures are handled here and returned for the probe. */
  private async open(): Promise<{ ok: true } | { ok: false; error: unknown }> {
    // No connection attempt during a scheduled pause: the refill starts again when it ends (checkPause).
    const pause = this.pauseNow();
    if (pause) return { ok: false, error: pauseRejection(pause) };
    this.opening++;
    let connection: PoolConnection;
    try {
      connection = await this.options.connect(++this.nextId);
    } catch (error) {
      this.opening--;
      this.onOpenFailed(error);
      return { ok: false, error };
    }
    this.opening--;
    this.created++;
    if (this.closed) {
      connection.close('pool closing');
      return { ok: false, error: new PoolRefused('shutting-down', 'the gateway is shutting down its ILS connections') };
    }
    // A new session is proof that the ILS works.
    this.circuit.recordSuccess();
    this.lastOpenFailure = null;
    this.live.add(connection);
    connection.once('close', (close) => this.onConnectionClosed(connection, close));
    this.log?.info({ conn: connection.id, connections: this.live.size }, 'SIP2 connection ready');
    this.putIdle(connection);
    this.syncQueue();
    return { ok: true };
  }

  /**
   * Why the last attempt to open a session failed, while none has opened
   * since (the start-up error line and /readyz say why); null once one opens.
   */
  get openFailure(): unknown {
    return this.lastOpenFailure;
  }

  private onOpenFailed(error: unknown): void {
    if (this.closed) return;
    // A TCP connection the ILS accepted but whose login it does not answer, while other sessions work: a
    // pre-forking server with no free worker. Not a failure; the requests wait for a connection to free up.
    const noWorker =
      error instanceof IlsTimeout &&
      (error.reason === 'login-timeout' || error.reason === 'connect-timeout') &&
      this.live.size > 0;
    if (noWorker) {
      this.learnSessionLimit(this.live.size);
      return;
    }
    this.connectFailures++;
    this.lastOpenFailure = error;
    if (this.live.size === 0 && this.opening === 0) {
      // Nothing will free up: the waiting requests get the reason now instead of an acquire timeout later
      // (before the circuit may open on this failure: their own failure says more than "try again later").
      this.failWaiting(notSent(error));
    }
    this.recordOutcome(error);
    this.log?.warn(
      {
        reason: error instanceof Error ? error.message : String(error),
        circuit: this.circuit.state,
        failures: this.circuit.consecutiveFailures,
      },
      'cannot open a SIP2 connection to the ILS',
    );
    if (!this.closing) this.scheduleFill(this.backoffDelay(this.circuit.consecutiveFailures));
  }

  private learnSessionLimit(served: number): void {
    const known = this.sessionLimit?.value;
    this.sessionLimit = { value: served, until: Date.now() + (this.options.sessionLimitRetryMs ?? 600_000) };
    if (known === served) return;
    this.log?.warn(
      { sessions: served, max: this.options.max },
      `the ILS serves only ${served} SIP2 session${served === 1 ? '' : 's'} to this gateway at once: a further login got no answer ` +
        `(no free SIP2 worker). Requests share the ${served} open session${served === 1 ? '' : 's'}. ` +
        `Give the ILS more SIP2 workers (Koha, SIPServer: min_servers/min_spare_servers/max_servers in SIPconfig.xml) ` +
        `or set sip2.pool.max to ${served}`,
    );
  }

  private onConnectionClosed(connection: PoolConnection, close: ConnectionClose): void {
    this.live.delete(connection);
    this.idle = this.idle.filter((c) => c !== connection);
    // A keepalive's 99 in flight does not make the connection busy: the ILS's idle timeout and the keepalive crossed.
    const idle = this.housekeeping.delete(connection) || close.idle;
    this.clearKeepalive(connection);
    this.syncQueue();
    if (this.closing) return;
    const lifetimeMs = Date.now() - connection.createdAt;
    if (close.byPeer && idle) {
      // The ILS ends idle sessions after its own timeout: normal, replaced when needed.
      this.log?.debug(
        { conn: connection.id, lifetimeMs, connections: this.live.size },
        'the ILS closed an idle SIP2 connection',
      );
      this.reportIdleClose(lifetimeMs);
    } else if (close.byPeer) {
      // The request it carried failed and is counted by its caller.
      this.log?.warn(
        { conn: connection.id, reason: close.reason, connections: this.live.size },
        'SIP2 connection lost',
      );
    }
    if (connection.servedRequest) this.deaths = 0;
    else if (lifetimeMs < DIED_YOUNG_MS) this.deaths++;
    this.grow();
    // An ILS that drops every session right after its login must not get a login storm from the refill.
    this.scheduleFill(this.backoffDelay(this.deaths));
  }

  /** Once: an ILS that closes idle sessions while keepalives would prevent it, if they came sooner. */
  private reportIdleClose(lifetimeMs: number): void {
    if (this.idleCloseReported) return;
    this.idleCloseReported = true;
    const keepalive = this.options.keepaliveIntervalMs;
    // Advice, not a warning: the close itself is normal.
    this.log?.info(
      { lifetimeMs, keepaliveMs: keepalive },
      keepalive > 0
        ? `the ILS closes idle SIP2 sessions (one after ${Math.round(lifetimeMs / 1000)} s): set sip2.pool.keepaliveMs below the ILS's own session timeout`
        : 'the ILS closes idle SIP2 sessions and keepalives are off (sip2.pool.keepaliveMs 0): sessions are replaced when needed',
    );
  }

  /**
   * Keeps `min` connections open while the circuit is closed, retrying with
   * capped, jittered exponential backoff; while it is open only the probe
   * connects, and its success starts the fill again.
   */
  private async fill(): Promise<void> {
    while (
      !this.closing &&
      !this.pauseNow() &&
      this.circuit.state === 'closed' &&
      this.live.size + this.opening < Math.min(this.options.min, this.sizeLimit())
    ) {
      if (!(await this.open()).ok) return; // onOpenFailed scheduled the retry
    }
  }

  private scheduleFill(delayMs: number): void {
    if (this.fillTimer || this.closing || this.circuit.state !== 'closed' || this.pauseNow()) return;
    if (this.live.size + this.opening >= Math.min(this.options.min, this.sizeLimit())) return;
    this.fillTimer = setTimeout(() => {
      this.fillTimer = null;
      void this.fill();
    }, delayMs);
    this.fillTimer.unref();
  }

  private async drainAndClose(drainTimeoutMs: number): Promise<void> {
    this.closing = true;
    this.clearTimers();
    let timer: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      this.queue.onIdle().then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), drainTimeoutMs))),
    ]);
    clearTimeout(timer);
    if (!drained) {
      this.log?.warn({ stats: this.stats() }, 'SIP2 pool did not drain in time; dropping the remaining work');
      this.destroy();
      return;
    }
    this.closed = true;
    for (const connection of [...this.live]) connection.close('pool closed');
  }

  private clearTimers(): void {
    if (this.fillTimer) clearTimeout(this.fillTimer);
    this.fillTimer = null;
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = null;
    if (this.pauseTimer) clearInterval(this.pauseTimer);
    this.pauseTimer = null;
    for (const timer of this.keepaliveTimers.values()) clearTimeout(timer);
    this.keepaliveTimers.clear();
  }

  // ------------------------------------------------------------ scheduled pauses

  private pauseNow(): PoolPause | null {
    return this.options.pause?.(new Date(Date.now())) ?? null;
  }

  /** Notices a pause beginning (waiting work fails, idle sessions close) or ending (the pool fills again). */
  private checkPause(): void {
    if (this.closing) return;
    const pause = this.pauseNow();
    if (pause && !this.pausedUntil) {
      this.pausedUntil = pause;
      this.log?.info(
        { until: pause.until.toISOString() },
        `scheduled maintenance of the ILS ${pause.description}: no SIP2 connections until then; calls get 503`,
      );
      if (this.fillTimer) clearTimeout(this.fillTimer);
      this.fillTimer = null;
      this.failWaiting(pauseRejection(pause));
      for (const connection of this.idle.splice(0)) {
        this.clearKeepalive(connection);
        connection.close('scheduled maintenance of the ILS');
      }
    } else if (!pause && this.pausedUntil) {
      this.pausedUntil = null;
      this.log?.info('scheduled maintenance of the ILS is over: opening SIP2 connections again');
      this.scheduleFill(0);
    }
  }

  // ------------------------------------------------------------ the circuit

  /** Counts a failure against the circuit when it is one of the ILS (not: queue full, a cancelled call, a value SIP2 cannot carry, a bug). */
  private recordOutcome(error: unknown): void {
    if (this.closing) return;
    if (error instanceof IlsTimeout || error instanceof IlsUnavailable || error instanceof IlsProtocolError) {
      this.circuit.recordFailure(error.message);
    }
  }

  private circuitRejection(): PoolRefused {
    return new PoolRefused(
      'circuit-open',
      `the library system is failing; requests are refused until a probe succeeds (circuit ${this.circuit.state})`,
      this.circuit.retryAfterSeconds(),
    );
  }

  private onCircuitTransition(transition: CircuitTransition): void {
    if (transition.to === 'open') {
      this.log?.warn(transition, 'SIP2 circuit open: failing requests at once until a probe succeeds');
      if (this.fillTimer) clearTimeout(this.fillTimer);
      this.fillTimer = null;
      // Nothing waits for a dead ILS: waiting work fails now with PoolRefused.
      this.failWaiting(this.circuitRejection());
      this.scheduleProbe(this.circuit.msUntilProbe());
    } else if (transition.to === 'half-open') {
      this.log?.info(transition, 'SIP2 circuit half-open: probing the ILS');
    } else {
      this.log?.info(transition, 'SIP2 circuit closed: the ILS answers again');
      this.scheduleFill(0);
    }
  }

  private scheduleProbe(delayMs: number): void {
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = setTimeout(() => {
      this.probeTimer = null;
      void this.probe();
    }, delayMs);
    this.probeTimer.unref();
  }

  /** The one probe of a half-open circuit: a 99 on an idle connection, or a new connection (93 + 99). */
  private async probe(): Promise<void> {
    if (this.closing || this.circuit.state !== 'open') return;
    const pause = this.pauseNow();
    if (pause) {
      // The ILS is down on purpose: probe once the pause is over.
      this.scheduleProbe(Math.max(1, pause.until.getTime() - Date.now()));
      return;
    }
    const early = this.circuit.msUntilProbe();
    if (early > 0) {
      // Timers may fire a millisecond before the clock says so.
      this.scheduleProbe(early);
      return;
    }
    const connection = this.takeIdle();
    if (!connection && this.live.size + this.opening >= this.options.max) {
      // Every connection is still held by work sent before the circuit opened (bounded by the response timeout).
      this.scheduleProbe(PROBE_RECHECK_MS);
      return;
    }
    this.circuit.tryStartProbe();
    let failure: unknown = null;
    if (connection) {
      await this.housekeep(connection, async () => {
        try {
          await connection.send(SC_STATUS);
        } catch (error) {
          connection.destroy('circuit probe failed');
          failure = error;
        }
      });
    } else {
      // A new session answers the probe as well (its failure counts nothing more while half-open).
      const opened = await this.open();
      if (!opened.ok) failure = opened.error;
    }
    if (this.closing) return;
    if (failure === null) this.circuit.probeSucceeded();
    else this.circuit.probeFailed(failure instanceof Error ? failure.message : String(failure));
  }

  // ------------------------------------------------------------ keepalive and lifetime

  /** Runs `work` on a connection taken out of the queue's count, and gives the connection back afterwards. */
  private async housekeep(connection: PoolConnection, work: () => Promise<void>): Promise<void> {
    this.housekeeping.add(connection);
    this.syncQueue();
    try {
      await work();
    } finally {
      this.housekeeping.delete(connection);
      this.release(connection);
      this.syncQueue();
      this.grow();
    }
  }

  /** One timer per connection, re-armed (refresh) each time it goes idle: no new timer per request. */
  private armKeepalive(connection: PoolConnection): void {
    if (this.options.keepaliveIntervalMs <= 0) return;
    const armed = this.keepaliveTimers.get(connection);
    if (armed) {
      armed.refresh();
      return;
    }
    const timer = setTimeout(() => void this.keepalive(connection), this.options.keepaliveIntervalMs);
    timer.unref();
    this.keepaliveTimers.set(connection, timer);
  }

  private clearKeepalive(connection: PoolConnection): void {
    const timer = this.keepaliveTimers.get(connection);
    if (timer) clearTimeout(timer);
    this.keepaliveTimers.delete(connection);
  }

  /** An idle connection proves it is alive with a 99, or is replaced. */
  private async keepalive(connection: PoolConnection): Promise<void> {
    // Busy (or housekept) since the timer was armed: putIdle re-arms it when the connection is back.
    const index = this.idle.indexOf(connection);
    if (index === -1) return;
    this.idle.splice(index, 1);
    if (this.isPastLifetime(connection) || this.closed) {
      connection.close('connection lifetime reached');
      return;
    }
    await this.housekeep(connection, async () => {
      try {
        await connection.send(SC_STATUS);
        this.circuit.recordSuccess();
      } catch (error) {
        connection.destroy('keepalive failed');
        // A keepalive that met the ILS closing the idle session (EOF, reset) is that same normal close;
        // an ILS that does not answer at all is failing.
        const idleClose = error instanceof IlsUnavailable && (error.reason === 'closed' || error.reason === 'reset');
        if (!idleClose) {
          this.log?.warn(
            { conn: connection.id, reason: error instanceof Error ? error.message : String(error) },
            'SIP2 keepalive failed',
          );
          this.recordOutcome(error);
        }
      }
    });
  }

  private isPastLifetime(connection: PoolConnection): boolean {
    return this.options.maxLifetimeMs > 0 && Date.now() - connection.createdAt >= this.options.maxLifetimeMs;
  }

  /** "Equal jitter": half the exponential delay fixed, half random, so many gateways do not reconnect in step. */
  private backoffDelay(attempts: number): number {
    const { initialMs, maxMs } = this.options.backoff;
    const exponential = Math.min(maxMs, initialMs * 2 ** Math.max(0, attempts - 1));
    return Math.round(exponential / 2 + (Math.random() * exponential) / 2);
  }

  private logAbandonedWrite(code: string, outcome: PromiseSettledResult<unknown>): void {
    if (outcome.status === 'fulfilled') {
      const response = outcome.value as { code?: string; ok?: unknown };
      this.log?.warn(
        { code, response: response.code, ok: response.ok },
        `a SIP2 ${code} finished after its caller had stopped waiting`,
      );
    } else {
      const error = outcome.reason;
      this.log?.warn(
        {
          code,
          reason: error instanceof Sip2Error ? error.code : undefined,
          message: error instanceof Error ? error.message : String(error),
        },
        `a SIP2 ${code} failed after its caller had stopped waiting`,
      );
    }
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

function pauseRejection(pause: PoolPause): PoolRefused {
  const seconds = Math.max(1, Math.ceil((pause.until.getTime() - Date.now()) / 1000));
  return new PoolRefused('maintenance', `the library system is in scheduled maintenance ${pause.description}`, seconds);
}
