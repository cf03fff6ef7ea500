import { LRUCache } from 'lru-cache';
import { entryBound } from '../../lru-bound.js';
import { openSession, sealSession } from '../session-seal.js';
import { isTokenShaped, type Session, type SessionStore } from '../sessions.js';
import { hashToken, newToken } from '../tokens.js';

/** A session as the memory store holds it, and as its state file keeps it (session-file.ts). */
export interface StoredSession {
  /** The session in clear; null for one read back from the state file, until its token comes and opens it. */
  session: Session | null;
  /** The session sealed with its token (session-seal.ts), for the state file; null when nothing is persisted. */
  sealed: string | null;
  /** The patron's index: the public patron id, or its keyed hash when sessions are persisted. */
  patronKey: string;
  /** Expiry, epoch milliseconds (the session's own, also readable while it is sealed). */
  expiresAt: number;
  /** The last login or call with it, epoch milliseconds: the per-patron bound ends the least recently used. */
  lastUsed: number;
}

/**
 * Where the sessions are persisted (persistence.ts), as the store sees it:
 * told of every change, asked to make an end durable before a logout is
 * answered.
 */
export interface SessionSink {
  /** The patron's index name: a keyed hash, so that the state file names no patron. */
  patronKey(patron: string): string;
  /** Something to write within seconds: a login, an eviction, an end. */
  changed(): void;
  /** A session was used: its last use is worth writing, but not soon (persistence.ts writes uses at most once a minute). */
  used(): void;
  /** Sessions were ended: resolves once that is on disk (they never come back); rejects with StoreUnavailable otherwise. */
  ended(): Promise<void>;
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
   * patron's least recently used session ends. Default: no bound beyond maxSessions.
   */
  maxSessionsPerPatron?: number;
  /** Where sessions are persisted; null or left out: this process only. */
  sink?: SessionSink | null;
  /** Clock in epoch milliseconds; for tests. */
  now?: () => number;
}

/** Most different scope lists shared (a deployment has a handful: patrons', a client's). */
const MAX_SHARED_SCOPES = 64;

/** Sessions in process memory: lru-cache keyed by SHA-256(token), with a TTL per session. */
export class LruSessionStore implements SessionStore {
  readonly #cache: LRUCache<string, StoredSession>;
  readonly #now: () => number;
  readonly #perPatron: number;
  readonly #sink: SessionSink | null;
  /**
   * Token hashes of each patron, least recently used first (a Set keeps the
   * order of insertion; a use moves its hash to the end); kept in step with
   * the cache by its dispose hook. A patron with one session (most of them)
   * has just its hash here: a Set of one costs about 200 bytes more per
   * patron (bench B4, 10,000 patrons).
   */
  readonly #byPatron = new Map<string, string | Set<string>>();
  /** The scope lists sessions share (#sharedScopes), by their names joined. */
  readonly #scopeLists = new Map<string, readonly string[]>();

  constructor(options: LruSessionStoreOptions) {
    if (!Number.isInteger(options.maxSessions) || options.maxSessions < 1) {
      throw new Error(`maxSessions must be a positive integer, got ${options.maxSessions}`);
    }
    const perPatron = options.maxSessionsPerPatron ?? Number.POSITIVE_INFINITY;
    if (perPatron !== Number.POSITIVE_INFINITY && (!Number.isInteger(perPatron) || perPatron < 1)) {
      throw new Error(`maxSessionsPerPatron must be a positive integer, got ${perPatron}`);
    }
    this.#perPatron = perPatron;
    this.#sink = options.sink ?? null;
    const now = options.now ?? Date.now;
    this.#now = now;
    this.#cache = new LRUCache<string, StoredSession>({
      ...entryBound(options.maxSessions),
      perf: { now },
      // Evicted, expired, deleted: the patron index forgets the key too, so it stays as bounded as the cache.
      dispose: (stored, key) => {
        this.#unindex(stored.patronKey, key);
        this.#sink?.changed();
      },
    });
  }

  /**
   * One frozen array for every session with these scopes (a patron's are
   * the same for all: about 70 bytes a session less than a copy each). The
   * sessions' own, never handed out: get() returns a copy. Bounded: beyond
   * MAX_SHARED_SCOPES different lists, further ones are copied as before.
   */
  #sharedScopes(scopes: readonly string[]): string[] {
    const name = scopes.join('\0');
    let shared = this.#scopeLists.get(name);
    if (shared === undefined) {
      shared = Object.freeze([...scopes]);
      if (this.#scopeLists.size < MAX_SHARED_SCOPES) this.#scopeLists.set(name, shared);
    }
    // Frozen, so nothing can change it through the Session type's string[].
    return shared as string[];
  }

  /** The patron's token hashes, least recently used first. */
  #keysOf(patronKey: string): string[] {
    const keys = this.#byPatron.get(patronKey);
    return keys === undefined ? [] : typeof keys === 'string' ? [keys] : [...keys];
  }

  #unindex(patronKey: string, key: string): void {
    const keys = this.#byPatron.get(patronKey);
    if (keys === undefined) return;
    if (typeof keys === 'string') {
      if (keys === key) this.#byPatron.delete(patronKey);
      return;
    }
    keys.delete(key);
    if (keys.size === 0) this.#byPatron.delete(patronKey);
    else if (keys.size === 1) this.#byPatron.set(patronKey, keys.values().next().value as string);
  }

  #index(patronKey: string, key: string): void {
    const keys = this.#byPatron.get(patronKey);
    if (keys === undefined) this.#byPatron.set(patronKey, key);
    else if (typeof keys === 'string') {
      // The one session used again stays the one; a second one comes after it (the most recently used).
      if (keys !== key) this.#byPatron.set(patronKey, new Set([keys, key]));
    } else {
      // Moved to the end: the most recently used.
      keys.delete(key);
      keys.add(key);
    }
  }

  /** Ends the patron's least recently used sessions until one more fits. */
  #makeRoomFor(patronKey: string): void {
    // Below the limit nothing has to go: no walk over the patron's sessions on every login.
    if (this.#countOf(patronKey) < this.#perPatron) return;
    // Expired ones first: they go without anyone noticing.
    for (const key of this.#keysOf(patronKey)) if (!this.#cache.has(key)) this.#cache.delete(key);
    while (this.#countOf(patronKey) >= this.#perPatron) {
      const keys = this.#byPatron.get(patronKey)!;
      const leastRecent = typeof keys === 'string' ? keys : (keys.values().next().value as string);
      // The dispose hook unindexes what the cache deletes; a key the cache no longer has would stay at the head of
      // the index for ever (and this loop with it): unindexed here instead.
      if (!this.#cache.delete(leastRecent)) this.#unindex(patronKey, leastRecent);
    }
  }

  #countOf(patronKey: string): number {
    const keys = this.#byPatron.get(patronKey);
    return keys === undefined ? 0 : typeof keys === 'string' ? 1 : keys.size;
  }

  #store(key: string, stored: StoredSession, ttl: number): void {
    this.#makeRoomFor(stored.patronKey);
    this.#cache.set(key, stored, { ttl });
    this.#index(stored.patronKey, key);
  }

  async create(session: Session): Promise<string> {
    const copy: Session = { ...session, scopes: this.#sharedScopes(session.scopes) };
    for (;;) {
      const token = newToken();
      const key = hashToken(token);
      if (this.#cache.has(key)) continue; // 2^-256; cheap to rule out anyway
      const now = this.#now();
      const ttl = Math.floor(copy.expiresAt - now);
      // An already expired session is never stored: its token is dead on arrival.
      if (ttl > 0) {
        this.#store(
          key,
          {
            session: copy,
            sealed: this.#sink === null ? null : sealSession(copy, token),
            patronKey: this.#sink === null ? copy.patron : this.#sink.patronKey(copy.patron),
            expiresAt: copy.expiresAt,
            lastUsed: now,
          },
          ttl,
        );
        this.#sink?.changed();
      }
      return token;
    }
  }

  /** The session of a stored entry: in clear, or opened with its token (once; a wrong token or a forged entry opens nothing). */
  #open(stored: StoredSession, token: string): Session | null {
    if (stored.session !== null) return stored.session;
    if (stored.sealed === null || this.#sink === null) return null;
    const opened = openSession(stored.sealed, token);
    // The file names the patron's index apart from the sealed session: both must agree, or the entry was tampered with.
    if (opened === null || this.#sink.patronKey(opened.patron) !== stored.patronKey) return null;
    stored.session = opened;
    return opened;
  }

  async get(token: string, tokenHash?: string): Promise<Session | null> {
    if (!isTokenShaped(token)) return null;
    const key = tokenHash ?? hashToken(token);
    const stored = this.#cache.get(key);
    if (stored === undefined) return null;
    const session = this.#open(stored, token);
    if (session === null) return null;
    const now = this.#now();
    if (session.expiresAt <= now) {
      this.#cache.delete(key);
      return null;
    }
    stored.lastUsed = now;
    this.#index(stored.patronKey, key);
    this.#sink?.used();
    return { ...session, scopes: [...session.scopes] };
  }

  async delete(token: string): Promise<void> {
    if (!isTokenShaped(token)) return;
    this.#cache.delete(hashToken(token));
    await this.#sink?.ended();
  }

  async deleteAllFor(patron: string): Promise<number> {
    const patronKey = this.#sink === null ? patron : this.#sink.patronKey(patron);
    const keys = this.#keysOf(patronKey);
    let live = 0;
    for (const key of keys) {
      if (this.#cache.has(key)) live += 1;
      this.#cache.delete(key);
    }
    this.#byPatron.delete(patronKey);
    await this.#sink?.ended();
    return live;
  }

  size(): number {
    this.#cache.purgeStale();
    return this.#cache.size;
  }

  /**
   * Every live session with its token hash, least recently used first (so
   * that sessions used in the same millisecond keep their order), for the
   * state file.
   */
  *stored(): Generator<[string, StoredSession]> {
    const now = this.#now();
    // lru-cache types rentries() loosely ((K | V)[]); its pairs are [key, value] as entries() gives them.
    for (const [key, stored] of this.#cache.rentries() as Generator<[string, StoredSession]>) {
      if (stored.expiresAt <= now || stored.sealed === null) continue;
      yield [key, stored];
    }
  }

  /**
   * Takes back sessions read from the state file, least recently used first,
   * so that both bounds end the same sessions as before the restart; expired
   * ones are skipped. Returns how many were kept.
   */
  restore(sessions: Iterable<[string, StoredSession]>): number {
    const now = this.#now();
    const sorted = [...sessions].sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    for (const [key, stored] of sorted) {
      const ttl = Math.floor(stored.expiresAt - now);
      if (ttl > 0 && !this.#cache.has(key)) this.#store(key, stored, ttl);
    }
    return this.#cache.size;
  }
}
