import PQueue from 'p-queue';
import type { Logger } from 'pino';
import { CircuitBreaker, type CircuitOptions, type CircuitState, type CircuitTransition, DEFAULT_CIRCUIT_OPTIONS } from './circuit.js';
import { type ConnectionOptions, Sip2Connection } from './connection.js';
import { BackendOverloaded, BackendProtocolError, BackendTimeout, BackendUnavailable } from './errors.js';
import { SC_STATUS } from './requests.js';
import { NON_IDEMPOTENT, type RequestMessage, type ResponseOf } from './spec.js';

export { type CircuitOptions, type CircuitState, DEFAULT_CIRCUIT_OPTIONS } from './circuit.js';

/** A connection that closes sooner than this after its login, without serving a request, counts as a failed connect. */
const DIED_YOUNG_MS = 5000;
/** While every connection is still held by work sent before the circuit opened, look again this soon for one to probe with. */
const PROBE_RECHECK_MS = 100;

export interface PoolOptions {
  connection: Omit<ConnectionOptions, 'id' | 'logger'>;
  /** Connections kept open even when idle. */
  min: number;
  /** Connections at most; also how many requests run at once. */
  max: number;
  /** How long a request may wait for a free connection before BackendOverloaded. */
  acquireTimeoutMs: number;
  /** How many requests may wait; one more fails at once with BackendOverloaded. */
  maxWaiting: number;
  /** Send 99 on a connection idle this long, to stay below the ILS's idle timeout. 0 = never. */
  keepaliveIntervalMs: number;
  /** Retire connections older than this (they are closed when next idle). 0 = never. */
  maxLifetimeMs: number;
  /**
   * Delays of the background fill (keeping `min` open) after failed connects
   * or connections the ILS dropped right after the login, while the circuit
   * is still closed: exponential from initialMs, capped at maxMs, with jitter.
   */
  backoff: { initialMs: number; maxMs: number };
  /**
   * Circuit breaker (see circuit.ts): after `failureThreshold` consecutive
   * backend failures every request fails at once with BackendOverloaded until
   * a probe (99) succeeds; default 5 failures, cool-down 1 s growing to 30 s.
   */
  circuit?: Partial<CircuitOptions> | undefined;
  logger?: Logger | undefined;
}

export interface PoolStats {
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
  /** closed: requests flow; open: they fail at once (503); half-open: one probe is deciding. */
  circuit: CircuitState;
  /** Consecutive backend failures counted towards opening the circuit. */
  consecutiveFailures: number;
  closing: boolean;
}

export interface ExecuteOptions {
  /** Use a newly opened connection rather than an idle one (a retry after a stale connection failed). */
  fresh?: boolean;
}

/**
 * A bounded pool of logged-in SIP2 connections.
 *
 * Admission goes through a p-queue whose concurrency equals `max`, so a task
 * that starts can always get a connection: an idle one, a new one, or, while
 * a keepalive briefly holds one, the next released one. The queue bounds
 * waiting (`maxWaiting`) and each queued task carries its own acquire timer,
 * cleared the moment it starts: p-queue rejects a task whose signal aborts
 * even while it runs, and a running renew must never be reported as failed.
 *
 * A circuit breaker (circuit.ts) stands in front of the queue: after
 * repeated backend failures it opens, `execute` then rejects at once with
 * BackendOverloaded (Retry-After = time to the next probe), queued work is
 * failed the same way, no connection is opened and the background fill
 * stops. A timer (unref'd) runs one probe after the cool-down: a 99 on an
 * idle connection, or a new connection (93 login + 99). Success closes the
 * circuit and refills the pool; failure opens it again for longer.
 */
export class Sip2Pool {
  private readonly options: PoolOptions;
  private readonly queue: PQueue;
  private readonly all = new Set<Sip2Connection>();
  private idle: Sip2Connection[] = [];
  private readonly keepaliveTimers = new Map<Sip2Connection, NodeJS.Timeout>();
  private readonly queued = new Set<AbortController>();
  private releaseWaiters: Array<() => void> = [];
  private opening = 0;
  private created = 0;
  private connectFailures = 0;
  private readonly circuit: CircuitBreaker;
  private probeTimer: NodeJS.Timeout | null = null;
  private fillTimer: NodeJS.Timeout | null = null;
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
    this.queue = new PQueue({ concurrency: options.max });
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
    await this.fill();
  }

  /** Runs `fn` with a connection of its own; the connection returns to the pool afterwards. */
  execute<T>(fn: (connection: Sip2Connection) => Promise<T>, options: ExecuteOptions = {}): Promise<T> {
    if (this.closing) return Promise.reject(new BackendOverloaded('the gateway is shutting down its ILS connections'));
    if (this.circuit.state !== 'closed') return Promise.reject(this.circuitRejection());
    // Only work that has to wait counts: with a free slot the task starts at once, even with maxWaiting 0.
    if (this.queue.pending >= this.options.max && this.queue.size >= this.options.maxWaiting) {
      return Promise.reject(new BackendOverloaded(`too many requests are waiting for the ILS (${this.queue.size})`));
    }
    const deadline = Date.now() + this.options.acquireTimeoutMs;
    const run = async (): Promise<T> => {
      let connection: Sip2Connection;
      try {
        connection = await this.checkout(deadline, options.fresh ?? false);
      } catch (error) {
        this.recordOutcome(error);
        throw error;
      }
      try {
        const result = await fn(connection);
        this.circuit.recordSuccess();
        return result;
      } catch (error) {
        this.recordOutcome(error);
        throw error;
      } finally {
        this.release(connection);
      }
    };
    // A task p-queue starts at once never waits in the queue: no acquire timer or abort signal to pay for
    // (the common case; checkout still keeps to the deadline).
    if (this.queue.size === 0 && this.queue.pending < this.options.max) return this.queue.add(run);
    const controller = new AbortController();
    const timer = setTimeout(() => {
      this.queued.delete(controller);
      controller.abort(new BackendOverloaded(`no ILS connection became free within ${this.options.acquireTimeoutMs} ms`));
    }, this.options.acquireTimeoutMs);
    this.queued.add(controller);
    return this.queue.add(
      () => {
        clearTimeout(timer);
        this.queued.delete(controller);
        return run();
      },
      { signal: controller.signal },
    );
  }

  /**
   * Sends one message. A read that failed because its connection turned out
   * dead or confused is tried once more on a fresh connection; a renew, hold,
   * renew-all or fee payment never is.
   */
  async request<M extends RequestMessage>(message: M): Promise<ResponseOf<M['code']>> {
    try {
      return await this.execute((connection) => connection.request(message));
    } catch (error) {
      // Only a read that went out on a connection that then proved dead is worth a second try;
      // a failed connect or a rejected terminal login would only fail again.
      const retryable =
        !NON_IDEMPOTENT.has(message.code) &&
        (error instanceof BackendUnavailable || error instanceof BackendProtocolError) &&
        error.requestSent;
      // With the circuit now open, this request's own failure says more than "try again later".
      if (!retryable || this.closing || this.circuit.state !== 'closed') throw error;
      this.options.logger?.info({ code: message.code, reason: (error as Error).message }, 'retrying a SIP2 read on a fresh connection');
      return await this.execute((connection) => connection.request(message), { fresh: true });
    }
  }

  /** closed: requests go to the ILS; open: they fail at once; half-open: one probe is under way. For health and metrics. */
  get circuitState(): CircuitState {
    return this.circuit.state;
  }

  /** True while the circuit is not closed (requests fail fast with BackendOverloaded). */
  get circuitOpen(): boolean {
    return this.circuit.state !== 'closed';
  }

  /** True when at least one logged-in connection is open. */
  get hasReadyConnection(): boolean {
    for (const connection of this.all) if (connection.status === 'ready' || connection.status === 'busy') return true;
    return false;
  }

  /** The ACS status (98) of any open connection, for health and the doctor. */
  get acsStatus() {
    for (const connection of this.all) if (connection.acsStatus) return connection.acsStatus;
    return null;
  }

  stats(): PoolStats {
    return {
      connections: this.all.size,
      idle: this.idle.length,
      busy: this.all.size - this.idle.length,
      opening: this.opening,
      waiting: this.queue.size,
      running: this.queue.pending,
      created: this.created,
      connectFailures: this.connectFailures,
      circuit: this.circuit.state,
      consecutiveFailures: this.circuit.consecutiveFailures,
      closing: this.closing,
    };
  }

  /** Stops taking work, lets running and queued requests finish (within `drainTimeoutMs`), then closes every connection. */
  close(drainTimeoutMs = 10_000): Promise<void> {
    this.closePromise ??= this.drainAndClose(drainTimeoutMs);
    return this.closePromise;
  }

  /** Fails queued work and drops every connection now; running requests fail with BackendUnavailable. */
  destroy(): void {
    this.closing = true;
    this.closed = true;
    this.clearTimers();
    for (const controller of this.queued) controller.abort(new BackendOverloaded('the gateway shut down its ILS connections'));
    this.queued.clear();
    for (const connection of [...this.all]) connection.destroy('pool destroyed');
    this.wakeWaiters();
  }

  // ------------------------------------------------------------ internals

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
      this.options.logger?.warn({ stats: this.stats() }, 'SIP2 pool did not drain in time; dropping the remaining work');
      this.destroy();
      return;
    }
    this.closed = true;
    for (const connection of [...this.all]) connection.close('pool closed');
    this.wakeWaiters();
  }

  private async checkout(deadline: number, fresh: boolean): Promise<Sip2Connection> {
    for (;;) {
      if (this.closed) throw new BackendOverloaded('the gateway is shutting down its ILS connections');
      // The circuit opened while this task waited: it fails at once like any new one.
      if (this.circuit.state !== 'closed') throw this.circuitRejection();
      if (fresh && this.all.size + this.opening >= this.options.max) {
        // Make room for the fresh connection by retiring an idle one: after a stale-connection failure the idle ones are suspect too.
        this.idle.shift()?.close('replaced by a fresh connection');
      }
      if (!fresh) {
        const connection = this.takeIdle();
        if (connection) return connection;
      }
      if (this.all.size + this.opening < this.options.max) return this.open();
      await this.waitForRelease(deadline);
    }
  }

  private takeIdle(): Sip2Connection | undefined {
    while (this.idle.length > 0) {
      const connection = this.idle.shift()!;
      this.clearKeepalive(connection);
      if (connection.isUsable) return connection;
    }
    return undefined;
  }

  private waitForRelease(deadline: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.releaseWaiters = this.releaseWaiters.filter((waiter) => waiter !== wake);
        reject(new BackendOverloaded(`no ILS connection became free within ${this.options.acquireTimeoutMs} ms`));
      }, Math.max(0, deadline - Date.now()));
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      this.releaseWaiters.push(wake);
    });
  }

  private wakeWaiters(): void {
    const waiters = this.releaseWaiters;
    this.releaseWaiters = [];
    for (const wake of waiters) wake();
  }

  private release(connection: Sip2Connection): void {
    if (connection.isUsable && !this.closed) {
      if (this.isPastLifetime(connection)) {
        connection.close('connection lifetime reached');
      } else {
        this.idle.push(connection);
        this.armKeepalive(connection);
      }
    } else if (connection.isUsable) {
      connection.close('pool closing');
    }
    this.wakeWaiters();
  }

  private async open(): Promise<Sip2Connection> {
    this.opening++;
    try {
      const connection = await Sip2Connection.open({ ...this.options.connection, id: ++this.nextId, logger: this.options.logger });
      this.created++;
      if (this.closed) {
        connection.close('pool closing');
        throw new BackendOverloaded('the gateway is shutting down its ILS connections');
      }
      this.all.add(connection);
      connection.once('close', (reason) => this.onConnectionClosed(connection, reason));
      this.options.logger?.info({ conn: connection.id, connections: this.all.size }, 'SIP2 connection ready');
      return connection;
    } catch (error) {
      // The caller reports the failure to the circuit (a request, the fill or the probe).
      if (!(error instanceof BackendOverloaded)) this.connectFailures++;
      throw error;
    } finally {
      this.opening--;
      // A slot is free again: a task waiting for a release may open a connection itself now.
      this.wakeWaiters();
    }
  }

  private onConnectionClosed(connection: Sip2Connection, reason: string): void {
    this.all.delete(connection);
    this.idle = this.idle.filter((c) => c !== connection);
    this.clearKeepalive(connection);
    if (!this.closing) {
      this.options.logger?.warn({ conn: connection.id, reason, connections: this.all.size }, 'SIP2 connection closed');
      // An ILS that accepts the login and then drops idle connections at once must not get a login storm
      // from the refill; requests may still open connections on demand (that is how an ILS restart heals).
      const diedYoung = !connection.servedRequest && Date.now() - connection.createdAt < DIED_YOUNG_MS;
      if (diedYoung) this.circuit.recordFailure('the ILS closed a new connection right after the login');
      this.scheduleFill(diedYoung ? this.backoffDelay() : 0);
    }
    this.wakeWaiters();
  }

  /**
   * Keeps `min` connections open while the circuit is closed, retrying with
   * capped, jittered exponential backoff; while it is open only the probe
   * connects, and its success starts the fill again.
   */
  private async fill(): Promise<void> {
    while (!this.closing && this.circuit.state === 'closed' && this.all.size + this.opening < this.options.min) {
      try {
        const connection = await this.open();
        this.idle.push(connection);
        this.armKeepalive(connection);
        this.wakeWaiters();
      } catch (error) {
        if (this.closing) return;
        this.recordOutcome(error);
        const delay = this.backoffDelay();
        this.options.logger?.warn(
          { reason: (error as Error).message, circuit: this.circuit.state, failures: this.circuit.consecutiveFailures, ...(this.circuit.state === 'closed' ? { retryInMs: delay } : {}) },
          'cannot open a SIP2 connection to the ILS',
        );
        this.scheduleFill(delay);
        return;
      }
    }
  }

  private scheduleFill(delayMs: number): void {
    if (this.fillTimer || this.closing || this.circuit.state !== 'closed') return;
    this.fillTimer = setTimeout(() => {
      this.fillTimer = null;
      void this.fill();
    }, delayMs);
    this.fillTimer.unref();
  }

  private clearTimers(): void {
    if (this.fillTimer) clearTimeout(this.fillTimer);
    this.fillTimer = null;
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = null;
  }

  /** Counts a failure against the circuit when it is one of the ILS (not: queue full, shutting down, a value SIP2 cannot carry, a bug). */
  private recordOutcome(error: unknown): void {
    if (this.closing) return;
    if (error instanceof BackendTimeout || error instanceof BackendUnavailable || error instanceof BackendProtocolError) {
      this.circuit.recordFailure(error.message);
    }
  }

  private circuitRejection(): BackendOverloaded {
    return new BackendOverloaded(
      `the library system is failing; requests are refused until a probe succeeds (circuit ${this.circuit.state})`,
      this.circuit.retryAfterSeconds(),
    );
  }

  private onCircuitTransition(transition: CircuitTransition): void {
    const log = this.options.logger;
    if (transition.to === 'open') {
      log?.warn(transition, 'SIP2 circuit open: failing requests at once until a probe succeeds');
      this.clearTimers();
      // Nothing waits for a dead ILS: queued work and work waiting for a connection fail now with BackendOverloaded.
      for (const controller of this.queued) controller.abort(this.circuitRejection());
      this.queued.clear();
      this.wakeWaiters();
      this.scheduleProbe(this.circuit.msUntilProbe());
    } else if (transition.to === 'half-open') {
      log?.info(transition, 'SIP2 circuit half-open: probing the ILS');
    } else {
      log?.info(transition, 'SIP2 circuit closed: the ILS answers again');
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
    const early = this.circuit.msUntilProbe();
    if (early > 0) {
      // Timers may fire a millisecond before the clock says so.
      this.scheduleProbe(early);
      return;
    }
    let connection = this.takeIdle();
    if (!connection && this.all.size + this.opening >= this.options.max) {
      // Every connection is still held by work sent before the circuit opened (bounded by the response timeout).
      this.scheduleProbe(PROBE_RECHECK_MS);
      return;
    }
    this.circuit.tryStartProbe();
    try {
      if (connection) await connection.request(SC_STATUS);
      else connection = await this.open();
    } catch (error) {
      connection?.destroy('circuit probe failed');
      if (this.closing) return;
      this.circuit.probeFailed((error as Error).message);
      return;
    }
    if (this.closing) {
      this.release(connection);
      return;
    }
    this.circuit.probeSucceeded();
    this.release(connection);
  }

  /** "Equal jitter": half the exponential delay fixed, half random, so many gateways do not reconnect in step. */
  private backoffDelay(): number {
    const { initialMs, maxMs } = this.options.backoff;
    const exponential = Math.min(maxMs, initialMs * 2 ** Math.max(0, this.circuit.consecutiveFailures - 1));
    return Math.round(exponential / 2 + (Math.random() * exponential) / 2);
  }

  private isPastLifetime(connection: Sip2Connection): boolean {
    return this.options.maxLifetimeMs > 0 && Date.now() - connection.createdAt >= this.options.maxLifetimeMs;
  }

  private armKeepalive(connection: Sip2Connection): void {
    if (this.options.keepaliveIntervalMs <= 0) return;
    this.clearKeepalive(connection);
    const timer = setTimeout(() => void this.keepalive(connection), this.options.keepaliveIntervalMs);
    timer.unref();
    this.keepaliveTimers.set(connection, timer);
  }

  private clearKeepalive(connection: Sip2Connection): void {
    const timer = this.keepaliveTimers.get(connection);
    if (timer) clearTimeout(timer);
    this.keepaliveTimers.delete(connection);
  }

  /** An idle connection proves it is alive with a 99, or is replaced. */
  private async keepalive(connection: Sip2Connection): Promise<void> {
    this.keepaliveTimers.delete(connection);
    const index = this.idle.indexOf(connection);
    if (index === -1) return;
    this.idle.splice(index, 1);
    if (this.isPastLifetime(connection) || this.closed) {
      connection.close('connection lifetime reached');
      return;
    }
    try {
      await connection.request(SC_STATUS);
      this.circuit.recordSuccess();
      this.release(connection);
    } catch (error) {
      this.options.logger?.warn({ conn: connection.id, reason: (error as Error).message }, 'SIP2 keepalive failed; replacing the connection');
      connection.destroy('keepalive failed');
      this.recordOutcome(error);
      this.wakeWaiters();
    }
  }
}
