/**
 * What a state store rejects with when it cannot answer: the shared store
 * (Redis) is unreachable, too slow, answered with an error, or is set up so
 * that it may lose what it holds (misconfigured: it may evict keys). Callers never
 * treat this as "no session" or "not limited": a call that needs the store
 * is refused (503 with Retry-After), never served without its check.
 */
export type StoreFailureReason = 'unreachable' | 'timeout' | 'error' | 'misconfigured';

export class StoreUnavailable extends Error {
  /** Stable code for logs and tests. */
  readonly code = 'STATE_STORE_UNAVAILABLE';
  readonly reason: StoreFailureReason;
  /** When it is worth trying again. */
  readonly retryAfterSeconds: number;

  constructor(
    reason: StoreFailureReason,
    message: string,
    options: { cause?: unknown; retryAfterSeconds?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'StoreUnavailable';
    this.reason = reason;
    this.retryAfterSeconds = options.retryAfterSeconds ?? 2;
  }
}

/** Any error of a store operation as a StoreUnavailable; the message names the store, never keys or values. */
export function storeFailure(store: string, error: unknown): StoreUnavailable {
  if (error instanceof StoreUnavailable) return error;
  const text = error instanceof Error ? error.message : String(error);
  const reason: StoreFailureReason = /timed? ?out/i.test(text)
    ? 'timeout'
    : /not ready|connection|ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|closed|offline|Stream isn't writeable/i.test(
          text,
        )
      ? 'unreachable'
      : 'error';
  const what = { timeout: 'did not answer in time', unreachable: 'cannot be reached', error: 'answered with an error' }[
    reason
  ];
  return new StoreUnavailable(reason, `the ${store} state store ${what}`, { cause: error });
}
