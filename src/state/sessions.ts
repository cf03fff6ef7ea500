import type { KeyedHash } from './keyed-hash.js';

/** What a valid access token stands for. */
export interface Session {
  /** Public patron identifier (see PatronIds). */
  patron: string;
  /** ILS barcode the backend is called with; never leaves the server. */
  barcode: string;
  scopes: string[];
  /** Expiry, epoch milliseconds. */
  expiresAt: number;
}

/**
 * Where sessions live. Tokens go in and out; implementations store only a
 * hash of each token (tokens.ts), with the session's own expiry as its time
 * to live. Every method rejects with StoreUnavailable when the store cannot
 * answer: never "unknown token" for a store that is down.
 */
export interface SessionStore {
  /**
   * Stores the session under a new random token and returns the token. When
   * the patron already has the most live sessions allowed, the one used
   * least recently ends (never the one just used: a client that never logs
   * out keeps the sessions it uses).
   */
  create(session: Session): Promise<string>;
  /**
   * The session of a token; null when unknown, expired or malformed. Counts
   * as a use of the session (the per-patron bound ends the least recently used).
   * `tokenHash`: hashToken(token), when the caller needs it anyway (the
   * token rate limit counts by it): one SHA-256 per request instead of two.
   * It must be that token's hash: the store looks the session up by it
   * alone (after checking the token's form), so a wrong hash finds another
   * session. Pass it only straight from hashToken(token).
   */
  get(token: string, tokenHash?: string): Promise<Session | null>;
  /** Invalidates one token (no error when unknown); once resolved, the token never works again, restarts included. */
  delete(token: string): Promise<void>;
  /** Invalidates every token of a patron (public id), as durably as delete; returns how many. */
  deleteAllFor(patron: string): Promise<number>;
  /** Sessions currently held, for metrics; null where counting would cost the store a scan (Redis). */
  size(): number | null;
}

/** Longest string looked up as a token; anything longer is simply unknown. */
export const MAX_TOKEN_CHARS = 512;

/** Whether a value can be looked up as a token at all. */
export function isTokenShaped(token: unknown): token is string {
  return typeof token === 'string' && token.length > 0 && token.length <= MAX_TOKEN_CHARS;
}

/** A stored session read back; null for anything that is not one (a foreign or damaged value). */
export function sessionFrom(value: unknown): Session | null {
  if (typeof value !== 'object' || value === null) return null;
  const { patron, barcode, scopes, expiresAt } = value as Record<string, unknown>;
  if (typeof patron !== 'string' || typeof barcode !== 'string' || typeof expiresAt !== 'number') return null;
  if (!Array.isArray(scopes) || !scopes.every((scope) => typeof scope === 'string')) return null;
  return { patron, barcode, scopes: [...scopes], expiresAt };
}

/**
 * How a store names a patron's set of sessions (logout of all, the
 * per-patron bound) where others can read it (Redis, the state file): a
 * keyed hash of the public patron id, never the id.
 */
export function patronIndexName(keys: KeyedHash, patron: string): string {
  return keys.digest(`session-patron\0${patron}`).toString('base64url');
}
