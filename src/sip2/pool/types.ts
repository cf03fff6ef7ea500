import type { Logger } from 'pino';
import type { CircuitOptions, CircuitState } from '../circuit.js';
import type { ConnectionClose } from '../connection.js';
import type { AcsStatus, RequestMessage, ResponseOf } from '../spec.js';
import type { WaitOptions } from './waiters.js';

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
export type ConnectionFactory = (id: number) => Promise<PoolConnection>;

/** The refill's delays: exponential from initialMs, capped at maxMs, with jitter. */
export interface Backoff {
  initialMs: number;
  maxMs: number;
}

/** Options without a default here take theirs from POOL_DEFAULTS (sip2-pool.ts). */
export interface PoolOptions {
  /** Opens sessions: `(id) => Sip2Connection.open({...options, id})`, or a fake in tests. */
  connect: ConnectionFactory;
  /** Connections kept open even when idle. */
  min?: number | undefined;
  /** Connections at most; also how many requests run at once. */
  max?: number | undefined;
  /** How long a request may wait for a free connection before PoolRefused. */
  acquireTimeoutMs?: number | undefined;
  /** How many requests may wait; one more fails at once with PoolRefused. */
  maxWaiting?: number | undefined;
  /** Send 99 on a connection idle this long, to stay below the ILS's idle timeout. 0 = never. */
  keepaliveIntervalMs?: number | undefined;
  /** Retire connections older than this (they are closed when next idle). 0 = never. */
  maxLifetimeMs?: number | undefined;
  /**
   * Delays of the background refill (keeping `min` open) after failed
   * connects, or after the ILS closed connections that never served a
   * request: exponential from initialMs, capped at maxMs, with jitter.
   */
  backoff?: Backoff | undefined;
  /**
   * How long a learned limit on the ILS's sessions holds before the pool tries
   * to grow past it again (the ILS's other clients may have freed workers).
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
  /** The keepalive interval in effect: keepaliveIntervalMs, or lower once the ILS was found to close idle sessions sooner; 0 = off. */
  keepaliveIntervalMs: number;
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
