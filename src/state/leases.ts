/**
 * Work under way, counted per key, where each piece ends by itself: a lease
 * is taken with a time to live and released when the work is done; one whose
 * holder died (a killed process, a lost connection) is let go at its own
 * expiry instead of holding the count up. The login throttle counts the
 * logins in flight at one account this way: their time to live is the
 * login's own deadline, which no live login outlasts.
 */
export interface Leases {
  /** Takes a lease on `key` that ends after `ttlMs` unless released first. */
  take(key: string, ttlMs: number): Promise<Lease>;
}

export interface Lease {
  /** The key's live leases when this one was taken, this one included. */
  readonly held: number;
  /** Ends the lease now; no error when it has expired. Rejects with StoreUnavailable when the store cannot answer. */
  release(): Promise<void>;
}
