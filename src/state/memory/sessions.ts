import { LRUCache } from 'lru-cache';
import { entryBound } from '../../lru-bound.js';
import { isTokenShaped, type Session, type SessionStore } from '../sessions.js';
import { hashToken, newToken } from '../tokens.js';

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
      ...entryBound(options.maxSessions),
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

  async get(token: string, tokenHash?: string): Promise<Session | null> {
    if (!isTokenShaped(token)) return null;
    const key = tokenHash ?? hashToken(token);
    const session = this.#cache.get(key);
    if (session === undefined) return null;
    if (session.expiresAt <= this.#now()) {
      this.#cache.delete(key);
      return null;
    }
    return { ...session, scopes: [...session.scopes] };
  }

  async delete(token: string): Promise<void> {
    if (!isTokenShaped(token)) return;
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
