import type { Logger } from 'pino';
import type { ConnectionClose } from '../connection.js';
import { IlsUnavailable } from '../errors.js';
import { SC_STATUS } from '../messages.js';
import type { PoolCore } from './core.js';
import type { PoolCircuit } from './probe.js';
import type { PoolConnection } from './types.js';

/** The lowest keepalive the pool adapts to: a 99 a second per idle session is the most it sends unasked. */
const KEEPALIVE_FLOOR_MS = 1000;
/** An adapted keepalive comes at half the ILS's idle timeout (a late timer, a slow 99 still come first) ... */
const KEEPALIVE_SHARE = 0.5;
/** ... and never later than this share of it (the floor may not fit below a short one: then no adaptation). */
const KEEPALIVE_MAX_SHARE = 0.75;
/**
 * An adapted keepalive is rounded down to this grain: a close measured a few milliseconds late (a busy event
 * loop) still gives the interval the advice can name as a setting (1000, not 1001).
 */
const KEEPALIVE_GRAIN_MS = 100;
/** Two idle closes measure the same timeout when they differ by at most this share ... */
const SAME_TIMEOUT_SHARE = 0.2;
/** ... and came at moments at least this far apart (an ILS restart ends every session at once). */
const SEPARATE_CLOSES_MS = 1000;

export interface UpkeepOptions {
  /** Send 99 on a connection idle this long (lowered when the ILS closes idle sessions sooner). 0 = never. */
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
 *
 * An ILS that closes idle sessions before the keepalive is due would have
 * the pool log in again after every quiet spell (a new worker process each
 * time on Koha). The pool measures how long such a session was idle and,
 * once a second close at another moment measured the same, takes that as
 * the ILS's idle timeout and sends keepalives at half of it (not below
 * KEEPALIVE_FLOOR_MS, never above the configured interval), says so once in
 * the log and reports it in stats() (`keepaliveIntervalMs`). It is kept
 * while the pool lives: a keepalive more than needed costs one 99. What
 * must not teach it: an ILS restart, which ends sessions each idle for
 * another while. Closes at one moment are not paired; and a keepalive
 * answered after X ms idle shows that the ILS's timeout is longer than X,
 * so a close after at most X ms idle is not the timeout (against an ILS
 * whose timeout is shorter than the keepalive, no keepalive is ever
 * answered). Otherwise restarts days apart would pair up now and then and
 * push the keepalive down, never up again.
 */
export class Upkeep {
  readonly #options: UpkeepOptions;
  readonly #core: PoolCore;
  readonly #circuit: PoolCircuit;
  /** Each connection's keepalive timer, with the delay it was set for (refresh() keeps that delay). */
  readonly #timers = new Map<PoolConnection, { timer: NodeJS.Timeout; delayMs: number }>();
  /** When each connection last went idle: how long the ILS let it be when it closes it. */
  readonly #idleSince = new WeakMap<PoolConnection, number>();
  /** The keepalive in effect: the configured one, or lower once the ILS's idle timeout is learned. */
  #intervalMs: number;
  /** An idle close sooner than the keepalive, not yet confirmed by a second one. */
  #lastEarlyClose: { at: number; idleMs: number } | null = null;
  /** The longest idle time after which a keepalive was answered: the ILS's timeout is longer. */
  #longestSurvivedIdleMs = 0;
  /** Whether the advice about the ILS closing idle sessions was logged (once per pool). */
  #idleCloseReported = false;

  constructor(options: UpkeepOptions, core: PoolCore, circuit: PoolCircuit) {
    this.#options = options;
    this.#core = core;
    this.#circuit = circuit;
    this.#intervalMs = options.keepaliveIntervalMs;
  }

  /** The keepalive interval in effect (0: keepalives are off). */
  get intervalMs(): number {
    return this.#intervalMs;
  }

  isPastLifetime(connection: PoolConnection): boolean {
    const { maxLifetimeMs } = this.#options;
    return maxLifetimeMs > 0 && Date.now() - connection.createdAt >= maxLifetimeMs;
  }

  /** One timer per connection, re-armed (refresh) each time it goes idle: no new timer per request. */
  arm(connection: PoolConnection): void {
    this.#idleSince.set(connection, Date.now());
    const interval = this.#intervalMs;
    if (interval <= 0) return;
    const armed = this.#timers.get(connection);
    if (armed?.delayMs === interval) {
      armed.timer.refresh();
      return;
    }
    // A timer set for another delay (before an adaptation) must not fire as well.
    if (armed) clearTimeout(armed.timer);
    this.#setTimer(connection, interval);
  }

  /** The connection ended: its timer goes. */
  forget(connection: PoolConnection): void {
    const armed = this.#timers.get(connection);
    if (armed) clearTimeout(armed.timer);
    this.#timers.delete(connection);
  }

  stop(): void {
    for (const { timer } of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }

  /** A connection ended (not while the pool closes, and forgotten): the log says how. */
  closed(connection: PoolConnection, close: ConnectionClose, idle: boolean, lifetimeMs: number): void {
    const log = this.#options.logger;
    const connections = this.#core.live.size;
    if (close.byPeer && idle) {
      // The ILS ends idle sessions after its own timeout: normal, replaced when needed.
      const idleMs = Date.now() - (this.#idleSince.get(connection) ?? connection.createdAt);
      log?.debug({ conn: connection.id, lifetimeMs, idleMs, connections }, 'the ILS closed an idle SIP2 connection');
      // A close the keepalive can learn from says so itself once learned; the others get the advice.
      if (!this.#learnFrom(idleMs)) this.#reportIdleClose(lifetimeMs);
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

  /**
   * An idle close before the keepalive was due: whether a keepalive that fits below it (learnable) would
   * keep such sessions open; once a second close at another moment measured the same idle time, the
   * keepalive comes at half of it from now on. One close alone could be anything (an ILS restart ends
   * every session at once, each idle for another while).
   */
  #learnFrom(idleMs: number): boolean {
    const current = this.#intervalMs;
    // Keepalives off (the sysadmin's choice), or the keepalive was due: the two crossed.
    if (current <= 0 || idleMs >= current) return false;
    const adapted = adaptedInterval(idleMs);
    if (adapted > idleMs * KEEPALIVE_MAX_SHARE || adapted >= current) return false;
    // Not the ILS's idle timeout: a session idle longer was kept open before.
    if (idleMs <= this.#longestSurvivedIdleMs) return true;
    const now = Date.now();
    const seen = this.#lastEarlyClose;
    this.#lastEarlyClose = { at: now, idleMs };
    if (seen === null || now - seen.at < SEPARATE_CLOSES_MS) return true;
    if (Math.abs(seen.idleMs - idleMs) > SAME_TIMEOUT_SHARE * Math.max(seen.idleMs, idleMs)) return true;
    this.#lastEarlyClose = null;
    this.#adapt(Math.min(seen.idleMs, idleMs));
    return true;
  }

  #adapt(idleTimeoutMs: number): void {
    const adapted = adaptedInterval(idleTimeoutMs);
    this.#intervalMs = adapted;
    this.#idleCloseReported = true;
    const configured = this.#options.keepaliveIntervalMs;
    this.#options.logger?.info(
      { idleTimeoutMs, keepaliveMs: adapted, configuredKeepaliveMs: configured },
      `the ILS closes idle SIP2 sessions after about ${seconds(idleTimeoutMs)} s, sooner than sip2.pool.keepaliveMs ` +
        `(${configured}): keepalives now go every ${seconds(adapted)} s, so that idle sessions stay open. ` +
        `Set sip2.pool.keepaliveMs to ${adapted} (PAIA_SIP2_POOL_KEEPALIVE_MS) to start with that, or raise the ILS's idle timeout`,
    );
    // The idle connections' timers were set for the old interval: each fires the new one after it went idle.
    const now = Date.now();
    for (const connection of [...this.#timers.keys()]) {
      this.forget(connection);
      if (!this.#core.isIdle(connection)) continue;
      const idleFor = now - (this.#idleSince.get(connection) ?? now);
      this.#setTimer(connection, Math.max(0, adapted - idleFor));
    }
  }

  #setTimer(connection: PoolConnection, delayMs: number): void {
    const timer = setTimeout(() => void this.#keepalive(connection), delayMs);
    timer.unref();
    this.#timers.set(connection, { timer, delayMs });
  }

  /** An idle connection proves it is alive with a 99, or is replaced. */
  async #keepalive(connection: PoolConnection): Promise<void> {
    // Held since the timer was armed (by a request, or handed to one): arm() runs again when it is next idle.
    if (!this.#core.take(connection)) return;
    if (this.isPastLifetime(connection) || this.#core.closed) {
      connection.close('connection lifetime reached');
      return;
    }
    const idleMs = Date.now() - (this.#idleSince.get(connection) ?? connection.createdAt);
    await this.#core.housekeep(connection, async () => {
      try {
        await connection.send(SC_STATUS);
        this.#circuit.breaker.recordSuccess();
        this.#longestSurvivedIdleMs = Math.max(this.#longestSurvivedIdleMs, idleMs);
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

/** The keepalive interval for an ILS that closes sessions idle for `idleTimeoutMs`. */
function adaptedInterval(idleTimeoutMs: number): number {
  const share = Math.floor((idleTimeoutMs * KEEPALIVE_SHARE) / KEEPALIVE_GRAIN_MS) * KEEPALIVE_GRAIN_MS;
  return Math.max(KEEPALIVE_FLOOR_MS, share);
}

/** Milliseconds as seconds for a log line: 2 for 2000, 1.5 for 1500. */
function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}
