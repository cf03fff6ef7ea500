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

export class Sip2Error extends Error {
  readonly code: Sip2ErrorCode;

  constructor(code: Sip2ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
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
  constructor(message: string, options?: { cause?: unknown }) {
    super('BACKEND_UNAVAILABLE', message, options);
  }
}

/**
 * No answer within the bound. `requestSent` tells whether the request's bytes
 * left this process: for non-idempotent messages that makes the outcome unknown.
 */
export class BackendTimeout extends Sip2Error {
  readonly requestSent: boolean;
  constructor(message: string, requestSent: boolean) {
    super('BACKEND_TIMEOUT', message);
    this.requestSent = requestSent;
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
  /** Whether the request's bytes had left this process when the failure happened. */
  readonly requestSent: boolean;
  constructor(message: string, requestSent: boolean, options?: { cause?: unknown }) {
    super('BACKEND_PROTOCOL', message, options);
    this.requestSent = requestSent;
  }
}
