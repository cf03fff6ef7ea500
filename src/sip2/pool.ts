import PQueue from 'p-queue';
import type { Logger } from 'pino';
import { type ConnectionOptions, Sip2Connection } from './connection.js';
import { BackendOverloaded, BackendProtocolError, BackendUnavailable } from './errors.js';
import { SC_STATUS } from './requests.js';
import { NON_IDEMPOTENT, type RequestMessage, type ResponseOf } from './spec.js';

/** A connection that closes sooner than this after its login, without serving a request, counts as a failed connect. */
const DIED_YOUNG_MS = 5000;

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
  /** Reconnect delays: exponential from initialMs, capped at maxMs, with jitter. */
  backoff: { initialMs: number; maxMs: number };
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
  private consecutiveFailures = 0;
  /**
   * While the ILS keeps failing, no connection is opened before this time:
   * requests fail fast (the circuit is open) and only the background fill
   * probes, so a dead or refusing ILS is not hammered with logins.
   */
  private nextAttemptAt = 0;
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
  }

  /** Opens `min` connections; resolves after the first attempt whatever its outcome (failures retry in the background). */
  async start(): Promise<void> {
    await this.fill();
  }

  /** Runs `fn` with a connection of its own; the connection returns to the pool afterwards. */
  execute<T>(fn: (connection: Sip2Connection) => Promise<T>, options: ExecuteOptions = {}): Promise<T> {
    if (this.closing) return Promise.reject(new BackendOverloaded('the gateway is shutting down its ILS connections'));
    // Only work that has to wait counts: with a free slot the task starts at once, even with maxWaiting 0.
    if (this.queue.pending >= this.options.max && this.queue.size >= this.options.maxWaiting) {
      return Promise.reject(new BackendOverloaded(`too many requests are waiting for the ILS (${this.queue.size})`));
    }
    const controller = new AbortController();
    const deadline = Date.now() + this.options.acquireTimeoutMs;
    const timer = setTimeout(() => {
      this.queued.delete(controller);
      controller.abort(new BackendOverloaded(`no ILS connection became free within ${this.options.acquireTimeoutMs} ms`));
    }, this.options.acquireTimeoutMs);
    this.queued.add(controller);
    return this.queue.add(
      async () => {
        clearTimeout(timer);
        this.queued.delete(controller);
        const connection = await this.checkout(deadline, options.fresh ?? false);
        try {
          return await fn(connection);
        } finally {
          this.release(connection);
        }
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
      const response = await this.execute((connection) => connection.request(message));
      this.markHealthy();
      return response;
    } catch (error) {
      // Only a read that went out on a connection that then proved dead is worth a second try;
      // a failed connect or a rejected terminal login would only fail again.
      const retryable =
        !NON_IDEMPOTENT.has(message.code) &&
        (error instanceof BackendUnavailable || error instanceof BackendProtocolError) &&
        error.requestSent;
      if (!retryable || this.closing) throw error;
      this.options.logger?.info({ code: message.code, reason: (error as Error).message }, 'retrying a SIP2 read on a fresh connection');
      const response = await this.execute((connection) => connection.request(message), { fresh: true });
      this.markHealthy();
      return response;
    }
  }

  /** True while connecting is suspended after failures (requests fail fast, the background fill probes). */
  get circuitOpen(): boolean {
    return Date.now() < this.nextAttemptAt;
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
    this.clearFillTimer();
    for (const controller of this.queued) controller.abort(new BackendOverloaded('the gateway shut down its ILS connections'));
    this.queued.clear();
    for (const connection of [...this.all]) connection.destroy('pool destroyed');
    this.wakeWaiters();
  }

  // ------------------------------------------------------------ internals

  private async drainAndClose(drainTimeoutMs: number): Promise<void> {
    this.closing = true;
    this.clearFillTimer();
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
      if (fresh && this.all.size + this.opening >= this.options.max) {
        // Make room for the fresh connection by retiring an idle one: after a stale-connection failure the idle ones are suspect too.
        this.idle.shift()?.close('replaced by a fresh connection');
      }
      if (!fresh) {
        const connection = this.takeIdle();
        if (connection) return connection;
      }
      if (this.all.size + this.opening < this.options.max) {
        const wait = this.nextAttemptAt - Date.now();
        if (wait > 0 && this.all.size === 0) {
          throw new BackendOverloaded('the library system is not reachable at the moment', Math.max(1, Math.ceil(wait / 1000)));
        }
        if (wait <= 0) return this.open();
      }
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
      if (!(error instanceof BackendOverloaded)) {
        this.connectFailures++;
        this.recordFailure();
      }
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
      if (diedYoung) this.consecutiveFailures++;
      this.scheduleFill(diedYoung ? this.backoffDelay() : 0);
    }
    this.wakeWaiters();
  }

  /** Keeps `min` connections open, reconnecting with capped, jittered exponential backoff. */
  private async fill(): Promise<void> {
    while (!this.closing && this.all.size + this.opening < this.options.min) {
      try {
        const connection = await this.open();
        this.idle.push(connection);
        this.armKeepalive(connection);
        this.wakeWaiters();
      } catch (error) {
        if (this.closing) return;
        const delay = Math.max(0, this.nextAttemptAt - Date.now());
        this.options.logger?.warn(
          { reason: (error as Error).message, retryInMs: delay, failures: this.consecutiveFailures },
          'cannot open a SIP2 connection to the ILS',
        );
        this.scheduleFill(delay);
        return;
      }
    }
  }

  private scheduleFill(delayMs: number): void {
    if (this.fillTimer || this.closing) return;
    this.fillTimer = setTimeout(() => {
      this.fillTimer = null;
      void this.fill();
    }, delayMs);
    this.fillTimer.unref();
  }

  private clearFillTimer(): void {
    if (this.fillTimer) clearTimeout(this.fillTimer);
    this.fillTimer = null;
  }

  private recordFailure(): void {
    this.consecutiveFailures++;
    this.nextAttemptAt = Date.now() + this.backoffDelay();
  }

  private markHealthy(): void {
    this.consecutiveFailures = 0;
    this.nextAttemptAt = 0;
  }

  /** "Equal jitter": half the exponential delay fixed, half random, so many gateways do not reconnect in step. */
  private backoffDelay(): number {
    const { initialMs, maxMs } = this.options.backoff;
    const exponential = Math.min(maxMs, initialMs * 2 ** Math.max(0, this.consecutiveFailures - 1));
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
      this.markHealthy();
      this.release(connection);
    } catch (error) {
      this.options.logger?.warn({ conn: connection.id, reason: (error as Error).message }, 'SIP2 keepalive failed; replacing the connection');
      connection.destroy('keepalive failed');
      this.wakeWaiters();
    }
  }
}
