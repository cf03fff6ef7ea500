import type { Logger } from 'pino';
import type { ConnectionClose } from '../connection.js';
import { IlsUnavailable } from '../errors.js';
import { SC_STATUS } from '../messages.js';
import type { PoolCore } from './core.js';
import type { PoolCircuit } from './probe.js';
import type { PoolConnection } from './types.js';

export interface UpkeepOptions {
  /** Send 99 on a connection idle this long. 0 = never. */
  keepaliveIntervalMs: number;
  /** Retire connections older than this. 0 = never. */
  maxLifetimeMs: number;
  logger: Logger | undefined;
}

/**
 * Keeping sessions alive and young: a keepalive (99) on a connection idle
 * for keepaliveIntervalMs, so the ILS's own idle timeout does not end it,
 * retirement past maxLifetimeMs, and telling a session the ILS ended while
 * idle (normal) from one lost with a request on it. A keepalive takes its connection out
 * of the idle list and gives it back through the pool's release, like any
 * request: a request waiting meanwhile gets it the moment the 99 is
 * answered, and a connection already promised to a request is never idle,
 * so a keepalive cannot take it.
 */
export class Upkeep {
  readonly #options: UpkeepOptions;
  readonly #core: PoolCore;
  readonly #circuit: PoolCircuit;
  readonly #timers = new Map<PoolConnection, NodeJS.Timeout>();
  /** Whether the advice about the ILS closing idle sessions was logged (once per pool). */
  #idleCloseReported = false;

  constructor(options: UpkeepOptions, core: PoolCore, circuit: PoolCircuit) {
    this.#options = options;
    this.#core = core;
    this.#circuit = circuit;
  }

  isPastLifetime(connection: PoolConnection): boolean {
    const { maxLifetimeMs } = this.#options;
    return maxLifetimeMs > 0 && Date.now() - connection.createdAt >= maxLifetimeMs;
  }

  /** One timer per connection, re-armed (refresh) each time it goes idle: no new timer per request. */
  arm(connection: PoolConnection): void {
    const interval = this.#options.keepaliveIntervalMs;
    if (interval <= 0) return;
    const armed = this.#timers.get(connection);
    if (armed) {
      armed.refresh();
      return;
    }
    const timer = setTimeout(() => void this.#keepalive(connection), interval);
    timer.unref();
    this.#timers.set(connection, timer);
  }

  /** The connection ended: its timer goes. */
  forget(connection: PoolConnection): void {
    const timer = this.#timers.get(connection);
    if (timer) clearTimeout(timer);
    this.#timers.delete(connection);
  }

  stop(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }

  /** A connection ended (not while the pool closes, and forgotten): the log says how. */
  closed(connection: PoolConnection, close: ConnectionClose, idle: boolean, lifetimeMs: number): void {
    const log = this.#options.logger;
    const connections = this.#core.live.size;
    if (close.byPeer && idle) {
      // The ILS ends idle sessions after its own timeout: normal, replaced when needed.
      log?.debug({ conn: connection.id, lifetimeMs, connections }, 'the ILS closed an idle SIP2 connection');
      this.#reportIdleClose(lifetimeMs);
    } else if (close.byPeer) {
      // The request it carried failed and is counted by its caller.
      log?.warn({ conn: connection.id, reason: close.reason, connections }, 'SIP2 connection lost');
    }
  }

  /** Once: an ILS that closes idle sessions while keepalives would prevent it, if they came sooner. */
  #reportIdleClose(lifetimeMs: number): void {
    if (this.#idleCloseReported) return;
    this.#idleCloseReported = true;
    const keepalive = this.#options.keepaliveIntervalMs;
    // Advice, not a warning: the close itself is normal.
    this.#options.logger?.info(
      { lifetimeMs, keepaliveMs: keepalive },
      keepalive > 0
        ? `the ILS closes idle SIP2 sessions (one after ${Math.round(lifetimeMs / 1000)} s): set sip2.pool.keepaliveMs below the ILS's own session timeout`
        : 'the ILS closes idle SIP2 sessions and keepalives are off (sip2.pool.keepaliveMs 0): sessions are replaced when needed',
    );
  }

  /** An idle connection proves it is alive with a 99, or is replaced. */
  async #keepalive(connection: PoolConnection): Promise<void> {
    // Held since the timer was armed (by a request, or handed to one): arm() runs again when it is next idle.
    if (!this.#core.take(connection)) return;
    if (this.isPastLifetime(connection) || this.#core.closed) {
      connection.close('connection lifetime reached');
      return;
    }
    await this.#core.housekeep(connection, async () => {
      try {
        await connection.send(SC_STATUS);
        this.#circuit.breaker.recordSuccess();
      } catch (error) {
        connection.destroy('keepalive failed');
        // A keepalive that met the ILS closing the idle session (EOF, reset) is that same normal close;
        // an ILS that does not answer at all is failing.
        const idleClose = error instanceof IlsUnavailable && (error.reason === 'closed' || error.reason === 'reset');
        if (!idleClose) {
          this.#options.logger?.warn(
            { conn: connection.id, reason: error instanceof Error ? error.message : String(error) },
            'SIP2 keepalive failed',
          );
          this.#circuit.count(error);
        }
      }
    });
  }
}
