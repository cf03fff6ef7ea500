import type { CancelSignal } from '../cancel-signal.js';

/**
 * One error base for everything the SIP2 layer throws, each with a stable
 * `code` that callers (the HTTP layer, metrics, tests) switch on, and for
 * failures of the ILS a machine-readable `reason`, so nothing ever matches
 * message text. Messages never carry passwords or raw wire bytes: they end up
 * in logs and, translated, in client-facing descriptions.
 */
export type Sip2ErrorCode =
  | 'SIP2_DECODE'
  | 'SIP2_ENCODE'
  | 'ILS_UNAVAILABLE'
  | 'ILS_TIMEOUT'
  | 'POOL_REFUSED'
  | 'ILS_PROTOCOL'
  | 'CALL_CANCELLED';

/** Why the ILS could not be reached or would not talk to us (IlsUnavailable). */
export type UnavailableReason =
  /** Nothing listens at the address (ECONNREFUSED). */
  | 'refused'
  /** Name resolution, routing or another socket error before the session was up. */
  | 'connect-error'
  /** The ILS's TLS certificate was not trusted (sip2.tls.ca, .servername). */
  | 'tls-untrusted'
  /** The ILS refused the terminal login (94 with ok 0). */
  | 'login-rejected'
  /** The ILS closed the connection (EOF). */
  | 'closed'
  /** The connection was reset or failed with a socket error. */
  | 'reset'
  /** The pool dropped the connection (shutdown, a failed keepalive). */
  | 'dropped';

/** Which bound passed without an answer (IlsTimeout). */
export type TimeoutReason = 'connect-timeout' | 'login-timeout' | 'response-timeout';

/**
 * Why the pool did not send a request at all (PoolRefused): try again later.
 * terminal-login-refused is an open circuit whose last failure was the ILS
 * refusing the gateway's own terminal login (sip2.terminal): not an ILS that
 * cannot be reached, and nothing a patron's retry mends.
 */
export type RefusalReason =
  | 'queue-full'
  | 'acquire-timeout'
  | 'circuit-open'
  | 'terminal-login-refused'
  | 'shutting-down'
  | 'maintenance';

/** What the ILS sent that could not be used (IlsProtocolError). */
export type ProtocolReason =
  | 'unreadable'
  | 'oversized'
  | 'unexpected-message'
  | 'resend-refused'
  | 'status-instead-of-response';

/** Why the caller stopped waiting (CallCancelled): its time ran out, its client went away, or it was already answered. */
export type CancelReason = 'deadline' | 'client-gone' | 'call-over';

export interface Sip2ErrorOptions {
  cause?: unknown;
  /**
   * Whether the request's bytes had left this process when it failed. For a
   * renew, hold or fee payment that makes the outcome unknown: the ILS may
   * have done it. Callers must then report "unknown", never retry.
   */
  requestSent?: boolean;
}

export class Sip2Error extends Error {
  readonly code: Sip2ErrorCode;
  readonly requestSent: boolean;

  constructor(code: Sip2ErrorCode, message: string, options: Sip2ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.requestSent = options.requestSent ?? false;
    this.name = new.target.name;
  }
}

/** Why a frame could not be decoded; stable, so tests and metrics can rely on it. */
export type DecodeFailure =
  | 'frame-too-long'
  | 'nul-byte'
  | 'bad-checksum'
  | 'missing-checksum'
  | 'bad-message-code'
  | 'truncated-fixed-fields'
  | 'bad-field-tag'
  | 'bad-charset';

/** Bytes that are not a SIP2 message. Thrown only by the pure codec. */
export class Sip2DecodeError extends Sip2Error {
  readonly reason: DecodeFailure;
  constructor(reason: DecodeFailure, message: string) {
    super('SIP2_DECODE', message);
    this.reason = reason;
  }
}

/** A value that cannot be put on the wire (delimiter, CR, NUL, too long, wrong fixed length). */
export class Sip2EncodeError extends Sip2Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super('SIP2_ENCODE', message);
    this.field = field;
  }
}

/** Refused, reset, EOF, login rejected: the ILS cannot be reached or would not talk to us. */
export class IlsUnavailable extends Sip2Error {
  readonly reason: UnavailableReason;
  constructor(reason: UnavailableReason, message: string, options?: Sip2ErrorOptions) {
    super('ILS_UNAVAILABLE', message, options);
    this.reason = reason;
  }
}

/** No answer within the bound (connect, login or response). */
export class IlsTimeout extends Sip2Error {
  readonly reason: TimeoutReason;
  constructor(reason: TimeoutReason, message: string, options?: Sip2ErrorOptions) {
    super('ILS_TIMEOUT', message, options);
    this.reason = reason;
  }
}

/** Waiting queue full, pool closing, acquire timeout or circuit open: nothing was sent; try again later. */
export class PoolRefused extends Sip2Error {
  readonly reason: RefusalReason;
  readonly retryAfterSeconds: number;
  constructor(reason: RefusalReason, message: string, retryAfterSeconds = 1) {
    super('POOL_REFUSED', message);
    this.reason = reason;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The ILS answered, but not with SIP2 we can use (garbage, checksum errors past the retry bound). */
export class IlsProtocolError extends Sip2Error {
  readonly reason: ProtocolReason;
  constructor(reason: ProtocolReason, message: string, options?: Sip2ErrorOptions) {
    super('ILS_PROTOCOL', message, options);
    this.reason = reason;
  }
}

/**
 * The caller stopped waiting: its deadline passed or its client went away.
 * With `requestSent` false nothing of the request reached the ILS; with true
 * the exchange goes on without it (a write's outcome is then unknown).
 */
export class CallCancelled extends Sip2Error {
  readonly reason: CancelReason;
  constructor(reason: CancelReason, message: string, options?: Sip2ErrorOptions) {
    super('CALL_CANCELLED', message, options);
    this.reason = reason;
  }
}

export type Sip2Failure = IlsUnavailable | IlsTimeout | PoolRefused | IlsProtocolError;

/** True for the errors that mean "the ILS side failed, or the pool would not send" (not a bug, bad input or a cancelled call). */
export function isSip2Failure(error: unknown): error is Sip2Failure {
  return (
    error instanceof IlsUnavailable ||
    error instanceof IlsTimeout ||
    error instanceof PoolRefused ||
    error instanceof IlsProtocolError
  );
}

const CANCEL_MESSAGES: Record<CancelReason, string> = {
  deadline: 'the call ran out of time before the ILS answered',
  'client-gone': 'the client went away before the ILS answered',
  'call-over': 'the call was answered before this part of it reached the ILS',
};

/** The reason a caller cancels with: what its CancelSignal carries, when it is one of ours. */
function cancelReasonOf(signal: CancelSignal): CancelReason {
  const reason: unknown = signal.reason;
  return reason === 'deadline' || reason === 'call-over' ? reason : 'client-gone';
}

/** The error for a call its signal cancelled; `requestSent` says whether its message had left. */
export function cancelled(signal: CancelSignal, requestSent: boolean): CallCancelled {
  const reason = cancelReasonOf(signal);
  return new CallCancelled(reason, CANCEL_MESSAGES[reason], { requestSent });
}
