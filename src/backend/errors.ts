import type { CancelSignal } from '../cancel-signal.js';
import {
  CallCancelled,
  cancelled,
  IlsProtocolError,
  IlsTimeout,
  IlsUnavailable,
  PoolRefused,
  Sip2DecodeError,
  Sip2EncodeError,
} from '../sip2/index.js';

/**
 * The backend's error contract: what a Backend's methods reject with when the
 * library system fails them. Callers (the HTTP layer, the login service)
 * switch on `kind` and never see how the backend talks to the library system:
 *
 * - unavailable: it cannot be reached or would not talk to us (502; its refusing our terminal login 503)
 * - timeout: it did not answer in time (504)
 * - protocol: it answered with something unusable (502)
 * - busy: not sent now (queue full, circuit open, terminal login refused, shutting down): try again after retryAfterSeconds (503)
 * - cancelled: the call's signal aborted (its deadline, its client gone) before the answer (504)
 * - unencodable: a value of the request cannot be passed on (422)
 *
 * Each kind has its own reasons, listed here once: the SIP2 layer's reasons
 * (sip2/errors.ts) pass through `backendFailureOf` only if they are listed, so
 * a reason added there is a type error until it is added here, and one added
 * here is a type error in the HTTP layer's tables until it is answered there.
 * Anything else a backend throws is a bug.
 */
const BACKEND_FAILURE_REASONS = {
  /** IlsUnavailable's reasons. */
  unavailable: ['refused', 'connect-error', 'tls-untrusted', 'login-rejected', 'closed', 'reset', 'dropped'],
  /** IlsTimeout's reasons. */
  timeout: ['connect-timeout', 'login-timeout', 'response-timeout'],
  /** IlsProtocolError's reasons, then Sip2DecodeError's. */
  protocol: [
    'unreadable',
    'oversized',
    'unexpected-message',
    'resend-refused',
    'status-instead-of-response',
    'frame-too-long',
    'nul-byte',
    'bad-checksum',
    'missing-checksum',
    'bad-message-code',
    'truncated-fixed-fields',
    'bad-field-tag',
    'bad-charset',
  ],
  /** PoolRefused's reasons, then the pool share's (pool-share.ts: too many waiting, waited too long). */
  busy: [
    'queue-full',
    'acquire-timeout',
    'circuit-open',
    'terminal-login-refused',
    'shutting-down',
    'maintenance',
    'share-full',
    'share-timeout',
  ],
  /** CallCancelled's reasons. */
  cancelled: ['deadline', 'client-gone', 'call-over'],
  /** Sip2EncodeError: which field could not be sent is in `field`. */
  unencodable: ['unencodable-value'],
} as const;

export type BackendFailureKind = keyof typeof BACKEND_FAILURE_REASONS;

/** The machine-readable reasons of one kind (of every kind by default). */
export type BackendFailureReason<K extends BackendFailureKind = BackendFailureKind> =
  (typeof BACKEND_FAILURE_REASONS)[K][number];

export class BackendFailure<K extends BackendFailureKind = BackendFailureKind> extends Error {
  readonly kind: K;
  /** Machine-readable detail (refused, login-timeout, queue-full, deadline ...), for logs and advice. */
  readonly reason: BackendFailureReason<K>;
  /** Whether the request had left for the library system: for a write, its outcome is then unknown. */
  readonly requestSent: boolean;
  /** For busy: when to try again. */
  readonly retryAfterSeconds: number;
  /** For unencodable: the request field that could not be sent (its SIP2 name), for advice. */
  readonly field: string | undefined;

  constructor(
    kind: K,
    reason: BackendFailureReason<K>,
    message: string,
    options: { requestSent?: boolean; retryAfterSeconds?: number; field?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'BackendFailure';
    this.kind = kind;
    this.reason = reason;
    this.requestSent = options.requestSent ?? false;
    this.retryAfterSeconds = options.retryAfterSeconds ?? 1;
    this.field = options.field;
  }
}

/** A BackendFailure as the union of its kinds, so that switching on `kind` narrows `reason` to that kind's. */
export type AnyBackendFailure = { [K in BackendFailureKind]: BackendFailure<K> }[BackendFailureKind];

/** Whether `error` is a BackendFailure, seen as the union of its kinds (the constructor ties each reason to its kind). */
export function isBackendFailure(error: unknown): error is AnyBackendFailure {
  return error instanceof BackendFailure;
}

/** The SIP2 layer's errors in the backend's terms; null for anything else (a bug, passed on as it is). */
function backendFailureOf(error: unknown): BackendFailure | null {
  if (error instanceof BackendFailure) return error;
  const options = (requestSent: boolean) => ({ requestSent, cause: error });
  if (error instanceof IlsUnavailable)
    return new BackendFailure('unavailable', error.reason, error.message, options(error.requestSent));
  if (error instanceof IlsTimeout)
    return new BackendFailure('timeout', error.reason, error.message, options(error.requestSent));
  if (error instanceof IlsProtocolError)
    return new BackendFailure('protocol', error.reason, error.message, options(error.requestSent));
  if (error instanceof Sip2DecodeError)
    return new BackendFailure('protocol', error.reason, error.message, options(true));
  if (error instanceof PoolRefused) {
    return new BackendFailure('busy', error.reason, error.message, {
      retryAfterSeconds: error.retryAfterSeconds,
      cause: error,
    });
  }
  if (error instanceof CallCancelled)
    return new BackendFailure('cancelled', error.reason, error.message, options(error.requestSent));
  if (error instanceof Sip2EncodeError)
    return new BackendFailure('unencodable', 'unencodable-value', error.message, { field: error.field, cause: error });
  return null;
}

/**
 * Runs a backend method so that it rejects only with BackendFailure (or a bug). A promise chain rather than
 * an async function: one promise less on every backend call.
 */
export function inBackendTerms<T>(call: () => Promise<T>): Promise<T> {
  let outcome: Promise<T>;
  try {
    outcome = call();
  } catch (error) {
    outcome = Promise.reject(error);
  }
  return outcome.catch(throwInBackendTerms);
}

function throwInBackendTerms(error: unknown): never {
  throw backendFailureOf(error) ?? error;
}

/** The failure of a call whose signal aborted before anything of it was answered. */
export function cancelledCall(signal: CancelSignal): BackendFailure {
  return backendFailureOf(cancelled(signal, false))!;
}
