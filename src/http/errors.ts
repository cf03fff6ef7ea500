import { type AnyBackendFailure, type BackendFailureReason, isBackendFailure } from '../backend/errors.js';
import { StoreUnavailable } from '../state/errors.js';

/**
 * The PAIA request error codes (spec: Errors), and unsupported_grant_type: the login is an OAuth token
 * endpoint, and OAuth's answer to a grant type the server does not offer is that (RFC 6749, 5.2).
 */
export const PAIA_ERROR_CODES = [
  'not_found',
  'not_implemented',
  'invalid_request',
  'invalid_grant',
  'insufficient_scope',
  'access_denied',
  'internal_error',
  'service_unavailable',
  'bad_gateway',
  'gateway_timeout',
  'unsupported_grant_type',
] as const;

export type PaiaErrorCode = (typeof PAIA_ERROR_CODES)[number];

/** Extra parameters of the WWW-Authenticate challenge (RFC 6750 section 3). */
export interface BearerChallenge {
  error?: 'invalid_request' | 'invalid_token' | 'insufficient_scope';
  scope?: string;
}

/**
 * The one error type of the HTTP layer: a stable PAIA `error` code, the
 * HTTP status, a description meant for client developers, and headers the
 * response must carry (Allow, Retry-After). Thrown anywhere, rendered by the
 * app's single onError.
 */
export class PaiaError extends Error {
  readonly error: PaiaErrorCode;
  readonly status: number;
  readonly description: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly challenge: BearerChallenge;

  constructor(
    error: PaiaErrorCode,
    status: number,
    description: string,
    options: { headers?: Record<string, string>; challenge?: BearerChallenge } = {},
  ) {
    super(`${error} (${status}): ${description}`);
    this.name = 'PaiaError';
    this.error = error;
    this.status = status;
    this.description = description;
    this.headers = options.headers ?? {};
    this.challenge = options.challenge ?? {};
  }
}

/** 400 invalid_request: the request cannot be parsed (JSON, content type, charset, size, parameters). */
export function malformed(description: string): PaiaError {
  return new PaiaError('invalid_request', 400, description, { challenge: { error: 'invalid_request' } });
}

/** 422 invalid_request: parsed, but does not fit the method. */
export function unprocessable(description: string): PaiaError {
  return new PaiaError('invalid_request', 422, description, { challenge: { error: 'invalid_request' } });
}

export function methodNotAllowed(method: string, allow: readonly string[]): PaiaError {
  return new PaiaError(
    'invalid_request',
    405,
    `the HTTP method ${method} is not supported at this URL; use ${allow.join(', ')}`,
    {
      headers: { Allow: allow.join(', ') },
    },
  );
}

export function notFound(description: string): PaiaError {
  return new PaiaError('not_found', 404, description);
}

export function notImplemented(description: string): PaiaError {
  return new PaiaError('not_implemented', 501, description);
}

/** 401 invalid_grant; `presented` says whether a token came with the request (RFC 6750: no error attribute otherwise). */
export function invalidGrant(description: string, presented: boolean): PaiaError {
  return new PaiaError('invalid_grant', 401, description, presented ? { challenge: { error: 'invalid_token' } } : {});
}

/** 400 unsupported_grant_type (RFC 6749, 5.2): a login with a grant type this server does not offer. */
export function unsupportedGrantType(description: string): PaiaError {
  return new PaiaError('unsupported_grant_type', 400, description);
}

export function accessDenied(description: string, headers?: Record<string, string>): PaiaError {
  return new PaiaError('access_denied', 403, description, headers ? { headers } : {});
}

/**
 * 429 service_unavailable: the access token used up its requests for this
 * minute. The HTTP status is RFC 6585's (a 503 would tell load balancers and
 * monitoring that the server is failing); the error code stays within the
 * spec's table, where service_unavailable is "temporary failure", which is
 * what a client should make of it: wait Retry-After seconds and try again.
 */
export function tooManyRequests(limit: number, retryAfterSeconds: number): PaiaError {
  return new PaiaError(
    'service_unavailable',
    429,
    `too many requests with this access token: at most ${limit} per minute are allowed; try again in ${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}`,
    { headers: { 'Retry-After': String(retryAfterSeconds) } },
  );
}

/**
 * 429 service_unavailable for anonymous DAIA: this client address asked for
 * its ids of this minute. The same shape as tooManyRequests.
 */
export function tooManyIds(limit: number, retryAfterSeconds: number): PaiaError {
  return new PaiaError(
    'service_unavailable',
    429,
    `too many document ids from this client address: at most ${limit} per minute are answered; try again in ${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}`,
    { headers: { 'Retry-After': String(retryAfterSeconds) } },
  );
}

/** 503 service_unavailable with Retry-After. */
export function unavailable(description: string, retryAfterSeconds: number): PaiaError {
  return new PaiaError('service_unavailable', 503, description, {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });
}

/** 414 invalid_request: the request target is too long. */
export function uriTooLong(maxBytes: number): PaiaError {
  return new PaiaError(
    'invalid_request',
    414,
    `the URL is too long: at most ${maxBytes} bytes of path and query are accepted`,
    {
      challenge: { error: 'invalid_request' },
    },
  );
}

export function insufficientScope(scope: string): PaiaError {
  return new PaiaError(
    'insufficient_scope',
    403,
    `the access token lacks the scope ${scope}, which this method needs`,
    {
      challenge: { error: 'insufficient_scope', scope },
    },
  );
}

/** How an error thrown while serving a request is answered and logged. */
export interface TranslatedError {
  error: PaiaError;
  /** client: nothing to log beyond the access line; backend: the library system failed (warn); bug: unexpected (error, with stack). */
  kind: 'client' | 'backend' | 'bug';
}

const UNREACHABLE = 'the library system cannot be reached right now; please try again later';
const UNREADABLE = 'the library system sent an answer that could not be understood; please try again later';

/**
 * Turns anything thrown into a PaiaError: request errors as they are, the
 * backend's failures (its error contract, backend/errors.ts) by their kind,
 * anything else as a bug. Descriptions are for client developers; nothing
 * internal (messages, stacks, hosts) ever reaches the client.
 */
export function translateError(thrown: unknown, requestId: string): TranslatedError {
  if (thrown instanceof PaiaError) return { error: thrown, kind: 'client' };
  if (isBackendFailure(thrown)) return translateBackendFailure(thrown);
  if (thrown instanceof StoreUnavailable) {
    // Never a hole: without the store no session can be checked, so the call is refused, not served.
    const seconds = Math.max(1, Math.ceil(thrown.retryAfterSeconds));
    return {
      kind: 'backend',
      error: new PaiaError(
        'service_unavailable',
        503,
        `the service cannot check sessions and limits right now (its state store cannot be used); please try again in ${seconds} second${seconds === 1 ? '' : 's'}`,
        { headers: { 'Retry-After': String(seconds) } },
      ),
    };
  }
  return {
    kind: 'bug',
    error: new PaiaError(
      'internal_error',
      500,
      `an unexpected error occurred in the server; it has been logged with request id ${requestId}`,
    ),
  };
}

/**
 * Who a cancelled call is put down to: the deadline is the library system being too slow for this call
 * (logged as its failure); a client that went away, or a part of a call already answered, reads no answer.
 */
const CANCELLED_BY: Readonly<Record<BackendFailureReason<'cancelled'>, TranslatedError['kind']>> = {
  deadline: 'backend',
  'client-gone': 'client',
  'call-over': 'client',
};

/**
 * What a busy answer says: maintenance in the pool's own words; an open circuit that the library system
 * kept failing (unreachable), not a gateway under load; one opened by the library system refusing the
 * gateway's own terminal login, which no patron's retry mends; the rest that the service is busy.
 */
const BUSY_BECAUSE: Readonly<
  Record<BackendFailureReason<'busy'>, 'maintenance' | 'unreachable' | 'login-refused' | 'busy'>
> = {
  maintenance: 'maintenance',
  'circuit-open': 'unreachable',
  'terminal-login-refused': 'login-refused',
  'queue-full': 'busy',
  'acquire-timeout': 'busy',
  'shutting-down': 'busy',
  'share-full': 'busy',
  'share-timeout': 'busy',
};

/** What a 503 of the library system's side says, before "please try again in N seconds". */
const BUSY_SAYS: Readonly<Record<'unreachable' | 'login-refused' | 'busy', string>> = {
  unreachable: 'the library system cannot be reached right now',
  // Never the account's name or password: the patron learns only that it is not their own login that failed.
  'login-refused':
    "this service cannot log in to the library system right now: the library system refuses the service's own account (not yours)",
  busy: 'the service is busy right now',
};

function retryAfterOf(failure: AnyBackendFailure): number {
  return Math.max(1, Math.ceil(failure.retryAfterSeconds || 1));
}

/** 503 service_unavailable with Retry-After, saying when to try again. */
function retryLater(what: string, seconds: number): PaiaError {
  return unavailable(`${what}; please try again in ${seconds} second${seconds === 1 ? '' : 's'}`, seconds);
}

/**
 * Timeouts, protocol errors, an unreachable library system and unencodable values are answered by kind
 * alone (their reasons are for logs; one exception, a refused terminal login); cancelled and busy calls by
 * reason, through the tables above, so a reason added to the backend's contract is a type error there
 * until it is answered.
 */
function translateBackendFailure(failure: AnyBackendFailure): TranslatedError {
  switch (failure.kind) {
    case 'timeout':
      // Writes whose outcome is unknown never get here: the backend reports them per document.
      return {
        kind: 'backend',
        error: new PaiaError(
          'gateway_timeout',
          504,
          'the library system did not answer in time; please try again later',
        ),
      };
    case 'cancelled':
      return {
        kind: CANCELLED_BY[failure.reason],
        error: new PaiaError(
          'gateway_timeout',
          504,
          'the library system did not finish this call in time; please try again later',
        ),
      };
    case 'busy': {
      const seconds = retryAfterOf(failure);
      const because = BUSY_BECAUSE[failure.reason];
      if (because === 'maintenance') {
        // The pool's own words ("the library system is in scheduled maintenance until 02:30 (Europe/Berlin)"): no host, no internals.
        return {
          kind: 'client',
          error: new PaiaError('service_unavailable', 503, `${failure.message}; please try again then`, {
            headers: { 'Retry-After': String(seconds) },
          }),
        };
      }
      return { kind: 'backend', error: retryLater(BUSY_SAYS[because], seconds) };
    }
    case 'protocol':
      return { kind: 'backend', error: new PaiaError('bad_gateway', 502, UNREADABLE) };
    case 'unavailable':
      // The library system answered, but not the gateway's own login: not unreachable, and a 503 like the open circuit it leads to.
      if (failure.reason === 'login-rejected')
        return { kind: 'backend', error: retryLater(BUSY_SAYS['login-refused'], retryAfterOf(failure)) };
      return { kind: 'backend', error: new PaiaError('bad_gateway', 502, UNREACHABLE) };
    case 'unencodable':
      return {
        kind: 'client',
        error: unprocessable(
          'a value in the request cannot be passed on to the library system: it is too long or contains a character the library system does not accept',
        ),
      };
  }
}
