/**
 * Every reason of the backend's error contract (backend/errors.ts), answered by translateError: the reasons
 * are a typed union per kind, so the tables below must name each one (a reason added to the contract fails
 * to compile here until it is given its answer), and a reason of another kind does not compile at all.
 */
import { describe, expect, it } from 'vitest';
import { BackendFailure, type BackendFailureKind, type BackendFailureReason } from '../../../src/backend/errors.js';
import { translateError } from '../../../src/http/errors.js';

interface Answer {
  status: number;
  error: string;
  kind: 'client' | 'backend';
  description: RegExp;
}

const UNREACHABLE: Answer = { status: 502, error: 'bad_gateway', kind: 'backend', description: /cannot be reached/ };
const UNREADABLE: Answer = {
  status: 502,
  error: 'bad_gateway',
  kind: 'backend',
  description: /could not be understood/,
};
const TIMEOUT: Answer = {
  status: 504,
  error: 'gateway_timeout',
  kind: 'backend',
  description: /did not answer in time/,
};
const CANCELLED = (kind: Answer['kind']): Answer => ({
  status: 504,
  error: 'gateway_timeout',
  kind,
  description: /did not finish this call in time/,
});
/** A refused terminal login, directly or through the circuit it opened: 503, the gateway's own account named, never "unreachable". */
const LOGIN_REFUSED: Answer = {
  status: 503,
  error: 'service_unavailable',
  kind: 'backend',
  description:
    /^this service cannot log in to the library system right now: the library system refuses the service's own account \(not yours\); please try again in 3 seconds$/,
};
const BUSY: Answer = { status: 503, error: 'service_unavailable', kind: 'backend', description: /service is busy/ };

/** What each reason of each kind answers (before the reasons were typed, http/errors.ts compared strings). */
const ANSWERS: { [K in BackendFailureKind]: Record<BackendFailureReason<K>, Answer> } = {
  unavailable: {
    refused: UNREACHABLE,
    'connect-error': UNREACHABLE,
    'tls-untrusted': UNREACHABLE,
    'login-rejected': LOGIN_REFUSED,
    closed: UNREACHABLE,
    reset: UNREACHABLE,
    dropped: UNREACHABLE,
  },
  timeout: { 'connect-timeout': TIMEOUT, 'login-timeout': TIMEOUT, 'response-timeout': TIMEOUT },
  protocol: {
    unreadable: UNREADABLE,
    oversized: UNREADABLE,
    'unexpected-message': UNREADABLE,
    'resend-refused': UNREADABLE,
    'status-instead-of-response': UNREADABLE,
    'frame-too-long': UNREADABLE,
    'nul-byte': UNREADABLE,
    'bad-checksum': UNREADABLE,
    'missing-checksum': UNREADABLE,
    'bad-message-code': UNREADABLE,
    'truncated-fixed-fields': UNREADABLE,
    'bad-field-tag': UNREADABLE,
    'bad-charset': UNREADABLE,
  },
  busy: {
    maintenance: {
      status: 503,
      error: 'service_unavailable',
      kind: 'client',
      description: /^in maintenance until 02:30; please try again then$/,
    },
    'circuit-open': {
      ...BUSY,
      description: /library system cannot be reached right now; please try again in 3 seconds/,
    },
    'terminal-login-refused': LOGIN_REFUSED,
    'queue-full': BUSY,
    'acquire-timeout': BUSY,
    'shutting-down': BUSY,
    'share-full': BUSY,
    'share-timeout': BUSY,
  },
  cancelled: { deadline: CANCELLED('backend'), 'client-gone': CANCELLED('client'), 'call-over': CANCELLED('client') },
  unencodable: {
    'unencodable-value': {
      status: 422,
      error: 'invalid_request',
      kind: 'client',
      description: /cannot be passed on to the library system/,
    },
  },
};

describe('every reason of a backend failure has its answer', () => {
  for (const [kind, reasons] of Object.entries(ANSWERS)) {
    for (const [reason, answer] of Object.entries(reasons as Record<string, Answer>)) {
      it(`${kind} ${reason} -> ${answer.status} ${answer.error} (${answer.kind})`, () => {
        const failure = new BackendFailure(
          kind as BackendFailureKind,
          reason as BackendFailureReason,
          'in maintenance until 02:30',
          {
            retryAfterSeconds: 3,
          },
        );
        const { error, kind: loggedAs } = translateError(failure, 'req-1');
        expect(error.status).toBe(answer.status);
        expect(error.error).toBe(answer.error);
        expect(error.description).toMatch(answer.description);
        expect(loggedAs).toBe(answer.kind);
        if (answer.status === 503) expect(error.headers['Retry-After']).toBe('3');
      });
    }
  }

  it("a reason belongs to its kind: another kind's reason, or an unknown one, does not compile", () => {
    // @ts-expect-error deadline is a reason of cancelled, not of busy
    const wrongKind = new BackendFailure('busy', 'deadline', 'x');
    // @ts-expect-error not a reason at all: http/errors.ts could not answer it by its tables
    const unknown = new BackendFailure('cancelled', 'because', 'x');
    // Still answered at run time by kind (a cast from untyped code): the switch covers every kind.
    expect(translateError(wrongKind, 'r').error.status).toBe(503);
    expect(translateError(unknown, 'r').error.status).toBe(504);
  });

  it('an unencodable value keeps the field it came from, for the doctor', () => {
    expect(new BackendFailure('unencodable', 'unencodable-value', 'x', { field: 'AB' }).field).toBe('AB');
  });
});
