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
 * - unavailable: it cannot be reached or would not talk to us (502)
 * - timeout: it did not answer in time (504)
 * - protocol: it answered with something unusable (502)
 * - busy: not sent now (queue full, circuit open, shutting down): try again after retryAfterSeconds (503)
 * - cancelled: the call's signal aborted (its deadline, its client gone) before the answer (504)
 * - unencodable: a value of the request cannot be passed on (422)
 *
 * Anything else a backend throws is a bug.
 */
export type BackendFailureKind = 'unavailable' | 'timeout' | 'protocol' | 'busy' | 'cancelled' | 'unencodable';

export class BackendFailure extends Error {
  readonly kind: BackendFailureKind;
  /** Machine-readable detail (refused, login-timeout, queue-full, deadline ...), for logs and advice. */
  readonly reason: string;
  /** Whether the request had left for the library system: for a write, its outcome is then unknown. */
  readonly requestSent: boolean;
  /** For busy: when to try again. */
  readonly retryAfterSeconds: number;

  constructor(
    kind: BackendFailureKind,
    reason: string,
    message: string,
    options: { requestSent?: boolean; retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'BackendFailure';
    this.kind = kind;
    this.reason = reason;
    this.requestSent = options.requestSent ?? false;
    this.retryAfterSeconds = options.retryAfterSeconds ?? 1;
  }
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
    return new BackendFailure('unencodable', error.field, error.message, { cause: error });
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
