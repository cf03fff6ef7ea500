/**
 * One error base for everything the SIP2 layer throws, each with a stable
 * `code` that callers (the HTTP layer, metrics, tests) switch on instead of
 * matching message text. Messages never carry passwords or raw wire bytes:
 * they end up in logs and, translated, in client-facing descriptions.
 */
export type Sip2ErrorCode =
  | 'SIP2_DECODE'
  | 'SIP2_ENCODE'
  | 'BACKEND_UNAVAILABLE'
  | 'BACKEND_TIMEOUT'
  | 'BACKEND_OVERLOADED'
  | 'BACKEND_PROTOCOL';

export interface BackendErrorOptions {
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

  constructor(code: Sip2ErrorCode, message: string, options: BackendErrorOptions = {}) {
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
export class BackendUnavailable extends Sip2Error {
  constructor(message: string, options?: BackendErrorOptions) {
    super('BACKEND_UNAVAILABLE', message, options);
  }
}

/** No answer within the bound (connect, login or response). */
export class BackendTimeout extends Sip2Error {
  constructor(message: string, options?: BackendErrorOptions) {
    super('BACKEND_TIMEOUT', message, options);
  }
}

/** Waiting queue full, pool closing, or acquire timeout: try again later. */
export class BackendOverloaded extends Sip2Error {
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds = 1) {
    super('BACKEND_OVERLOADED', message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The ILS answered, but not with SIP2 we can use (garbage, checksum errors past the retry bound). */
export class BackendProtocolError extends Sip2Error {
  constructor(message: string, options?: BackendErrorOptions) {
    super('BACKEND_PROTOCOL', message, options);
  }
}

/** True for the errors that mean "the ILS side failed" (as opposed to a bug or bad input). */
export function isBackendError(error: unknown): error is BackendUnavailable | BackendTimeout | BackendOverloaded | BackendProtocolError {
  return error instanceof Sip2Error && error.code.startsWith('BACKEND_');
}
