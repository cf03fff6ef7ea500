import { LRUCache } from 'lru-cache';
import { hashToken, newToken } from './tokens.js';

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
 * hash of each token. An in-process LRU now, a shared store (Redis) when
 * several instances run.
 */
export interface SessionStore {
  /**
   * Stores the session under a new random token and returns the token. When
   * the patron already has the most live sessions allowed, the oldest ends.
   */
  create(session: Session): Promise<string>;
  /** The session of a token; null when unknown, expired or malformed. */
  get(token: string): Promise<Session | null>;
  /** Invalidates one token (no error when unknown). */
  delete(token: string): Promise<void>;
  /** Invalidates every token of a patron (public id); returns how many. */
  deleteAllFor(patron: string): Promise<number>;
  /** Sessions currently held (for metrics). */
  size(): number;
}

export interface LruSessionStoreOptions {
  /**
   * Bound on live sessions. When full, the least recently used session is
   * dropped (its patron must log in again): memory stays bounded whatever
   * the login rate.
   */
  maxSessions: number;
  /**
   * Most live sessions of one patron; when a login would exceed it, the
   * patron's oldest session ends. Default: no bound beyond maxSessions.
   */
  maxSessionsPerPatron?: number;
  /** Clock in epoch milliseconds; for tests. */
  now?: () => number;
}

/** Longest string looked up as a token; anything longer is simply unknown. */
const MAX_TOKEN_CHARS = 512;

/** Sessions in process memory: lru-cache keyed by SHA-256(token), with a TTL per session. */
export class LruSessionStore implements SessionStore {
  readonly #cache: LRUCache<string, Session>;
  readonly #now: () => number;
  readonly #perPatron: number;
  /** Token hashes of each patron, oldest first; kept in step with the cache by its dispose hook. */
  readonly #byPatron = new Map<string, string[]>();

  constructor(options: LruSessionStoreOptions) {
    if (!Number.isInteger(options.maxSessions) || options.maxSessions < 1) {
      throw new Error(`maxSessions must be a positive integer, got ${options.maxSessions}`);
    }
    const perPatron = options.maxSessionsPerPatron ?? Number.POSITIVE_INFINITY;
    if (perPatron !== Number.POSITIVE_INFINITY && (!Number.isInteger(perPatron) || perPatron < 1)) {
      throw new Error(`maxSessionsPerPatron must be a positive integer, got ${perPatron}`);
    }
    this.#perPatron = perPatron;
    const now = options.now ?? Date.now;
    this.#now = now;
    this.#cache = new LRUCache<string, Session>({
      max: options.maxSessions,
      perf: { now },
      // Evicted, expired, deleted: the patron index forgets the key too, so it stays as bounded as the cache.
      dispose: (session, key) => this.#unindex(session.patron, key),
    });
  }

  #unindex(patron: string, key: string): void {
    const keys = this.#byPatron.get(patron);
    if (keys === undefined) return;
    const index = keys.indexOf(key);
    if (index >= 0) keys.splice(index, 1);
    if (keys.length === 0) this.#byPatron.delete(patron);
  }

  /** Ends the patron's oldest sessions until one more fits. */
  #makeRoomFor(patron: string): void {
    const keys = this.#byPatron.get(patron);
    // Below the limit nothing has to go: no walk over the patron's sessions on every login.
    if (keys === undefined || keys.length < this.#perPatron) return;
    // Expired ones first: they go without anyone noticing.
    for (const key of [...keys]) if (!this.#cache.has(key)) this.#cache.delete(key);
    while ((this.#byPatron.get(patron)?.length ?? 0) >= this.#perPatron) {
      const oldest = this.#byPatron.get(patron)?.[0];
      if (oldest === undefined) break;
      this.#cache.delete(oldest);
    }
  }

  async create(session: Session): Promise<string> {
    const stored: Session = { ...session, scopes: [...session.scopes] };
    for (;;) {
      const token = newToken();
      const key = hashToken(token);
      if (this.#cache.has(key)) continue; // 2^-256; cheap to rule out anyway
      const ttl = Math.floor(stored.expiresAt - this.#now());
      // An already expired session is never stored: its token is dead on arrival.
      if (ttl > 0) {
        this.#makeRoomFor(stored.patron);
        this.#cache.set(key, stored, { ttl });
        const keys = this.#byPatron.get(stored.patron);
        if (keys) keys.push(key);
        else this.#byPatron.set(stored.patron, [key]);
      }
      return token;
    }
  }

  async get(token: string): Promise<Session | null> {
    if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_CHARS) return null;
    const key = hashToken(token);
    const session = this.#cache.get(key);
    if (session === undefined) return null;
    if (session.expiresAt <= this.#now()) {
      this.#cache.delete(key);
      return null;
    }
    return { ...session, scopes: [...session.scopes] };
  }

  async delete(token: string): Promise<void> {
    if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_CHARS) return;
    this.#cache.delete(hashToken(token));
  }

  async deleteAllFor(patron: string): Promise<number> {
    const keys = [...(this.#byPatron.get(patron) ?? [])];
    let live = 0;
    for (const key of keys) {
      if (this.#cache.has(key)) live += 1;
      this.#cache.delete(key);
    }
    this.#byPatron.delete(patron);
    return live;
  }

  size(): number {
    this.#cache.purgeStale();
    return this.#cache.size;
  }
}
