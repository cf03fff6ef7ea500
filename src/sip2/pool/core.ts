import type { PoolConnection } from './types.js';
import { Waiters } from './waiters.js';

export interface CoreHooks {
  /** Why a connection coming back must be closed instead of reused (pool closed, a pause, its lifetime over); null to reuse it. */
  retireReason(connection: PoolConnection): string | null;
  /** A connection went idle (its keepalive is armed from here). */
  onIdle(connection: PoolConnection): void;
  /** Housekeeping gave a connection back: more may be wanted now. */
  onHousekept(): void;
}

export interface CoreOptions {
  acquireTimeoutMs: number;
  /** The error a request that waited acquireTimeoutMs is refused with. */
  onAcquireTimeout: () => Error;
}

/**
 * What the pool owns and who holds it: every logged-in connection (`live`)
 * is idle, held by a request, or held by housekeeping (a keepalive, the
 * circuit probe), and requests without a connection wait in `waiters`.
 *
 * A connection coming back or newly logged in (release) goes straight
 * to the first waiting request, else into the idle list: a connection is
 * never idle while a request waits, so housekeeping, which only ever takes
 * an idle connection, cannot take one a request was promised. Nothing is
 * counted beside these sets: how many requests run is what is neither idle
 * nor housekept.
 */
export class PoolCore {
  /** Logged-in connections, idle or held. */
  readonly live = new Set<PoolConnection>();
  /** Connections a keepalive or the probe holds. */
  readonly housekeeping = new Set<PoolConnection>();
  readonly waiters: Waiters<PoolConnection>;
  /** close() called: no new work is admitted, admitted work drains. */
  closing = false;
  /** Drained or destroyed: connections are closed as they come back. */
  closed = false;
  #idle: PoolConnection[] = [];
  readonly #hooks: CoreHooks;
  /** Set while close() waits for the admitted work to end. */
  #onDrained: (() => void) | null = null;

  constructor(options: CoreOptions, hooks: CoreHooks) {
    this.#hooks = hooks;
    this.waiters = new Waiters({
      timeoutMs: options.acquireTimeoutMs,
      onTimeout: options.onAcquireTimeout,
      onLeave: () => this.#checkDrained(),
    });
  }

  get idleCount(): number {
    return this.#idle.length;
  }

  /** Requests holding a connection: the live connections neither idle nor housekept. */
  get running(): number {
    return this.live.size - this.#idle.length - this.housekeeping.size;
  }

  /** The oldest usable idle connection, taken out of the idle list; undefined when none is. */
  takeIdle(): PoolConnection | undefined {
    while (this.#idle.length > 0) {
      const connection = this.#idle.shift()!;
      // Its keepalive timer keeps running: it finds the connection busy, and onIdle re-arms it.
      if (connection.isUsable) return connection;
    }
    return undefined;
  }

  /** Whether this connection is in the idle list (no request or housekeeping holds it). */
  isIdle(connection: PoolConnection): boolean {
    return this.#idle.includes(connection);
  }

  /** Takes this connection out of the idle list; false when it is not idle (a request or housekeeping holds it). */
  take(connection: PoolConnection): boolean {
    const index = this.#idle.indexOf(connection);
    if (index === -1) return false;
    this.#idle.splice(index, 1);
    return true;
  }

  /**
   * A connection comes back from a request or housekeeping, or joins newly
   * logged in (in `live` already): to the first waiting request, or idle; or
   * closed when it must go.
   */
  release(connection: PoolConnection): void {
    // A connection that ended while held was cleaned up by its close handler.
    if (connection.isUsable) {
      const retire = this.#hooks.retireReason(connection);
      if (retire !== null) connection.close(retire);
      else if (!this.waiters.hand(connection)) {
        this.#idle.push(connection);
        this.#hooks.onIdle(connection);
      }
    }
    this.#checkDrained();
  }

  /** Runs `work` on a connection taken from the idle list, and gives the connection back through release afterwards. */
  async housekeep(connection: PoolConnection, work: () => Promise<void>): Promise<void> {
    this.housekeeping.add(connection);
    try {
      await work();
    } finally {
      this.housekeeping.delete(connection);
      this.release(connection);
      this.#hooks.onHousekept();
    }
  }

  /** A connection ended: out of every set. Returns whether housekeeping held it (a keepalive's 99 in flight is no request). */
  remove(connection: PoolConnection): boolean {
    this.live.delete(connection);
    this.take(connection);
    const housekept = this.housekeeping.delete(connection);
    this.#checkDrained();
    return housekept;
  }

  /** Takes every idle connection out and hands it to `end` (closing it). */
  drainIdle(end: (connection: PoolConnection) => void): void {
    for (const connection of this.#idle.splice(0)) end(connection);
  }

  /** Resolves true once nothing waits and no request holds a connection, false after `timeoutMs`. */
  async drained(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const done = await new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
      this.#onDrained = () => resolve(true);
      this.#checkDrained();
    });
    clearTimeout(timer);
    this.#onDrained = null;
    return done;
  }

  #checkDrained(): void {
    if (this.#onDrained === null || this.waiters.size > 0 || this.running > 0) return;
    const done = this.#onDrained;
    this.#onDrained = null;
    done();
  }
}
