import { LRUCache } from 'lru-cache';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { entryBound } from '../../lru-bound.js';
import type { Leases } from '../leases.js';
import { Limiter, type LimiterOptions } from '../limiter.js';
import { type OperationObserver, operationRunner, type RunOperation } from '../operations.js';
import type { Invalidation, StateStore, StoreHealth } from '../store.js';
import { MemoryLeases } from './leases.js';
import { SessionPersistence } from './persistence.js';
import { LruSessionStore } from './sessions.js';
import type { StateDirRefusal } from './state-dir.js';

export interface MemoryStoreOptions {
  /** Bound on live sessions (auth.maxSessions). */
  maxSessions: number;
  /** Most live sessions of one patron (auth.maxSessionsPerPatron). */
  maxSessionsPerPatron: number;
  /** Bound on remembered facts. */
  maxFacts?: number;
  /**
   * Keeps the sessions across restarts (state.dir); null or left out: a
   * restart forgets them; a refusal (the directory cannot be used): the same,
   * and its reason stays in health().warning, so /readyz shows it.
   */
  persistence?: SessionPersistence | StateDirRefusal | null;
}

/**
 * All state in this process: sessions in lru-cache, counters in
 * rate-limiter-flexible's memory limiter. Right for one process: another
 * instance sees none of it. With persistence, sessions outlive a restart
 * (persistence.ts); counters, lockouts and facts never do.
 */
export class MemoryStore implements StateStore {
  readonly kind = 'memory' as const;
  readonly sessions: LruSessionStore;
  readonly #facts: LRUCache<string, string>;
  readonly #maxFacts: number;
  readonly #persistence: SessionPersistence | null;
  /** Why state.dir is not used, when it was configured and refused. */
  readonly #refused: string | null;
  #observe: OperationObserver = () => {};
  // The observer is read at call time: observe() may come after the limiters are made.
  readonly #run: RunOperation = operationRunner('memory', (...args) => this.#observe(...args));

  constructor(options: MemoryStoreOptions) {
    const persistence = options.persistence ?? null;
    this.#persistence = persistence instanceof SessionPersistence ? persistence : null;
    this.#refused = persistence === null || persistence instanceof SessionPersistence ? null : persistence.refused;
    this.sessions = new LruSessionStore({
      maxSessions: options.maxSessions,
      maxSessionsPerPatron: options.maxSessionsPerPatron,
      sink: this.#persistence,
    });
    this.#persistence?.attach(this.sessions);
    this.#maxFacts = options.maxFacts ?? 100_000;
    this.#facts = new LRUCache({ ...entryBound(this.#maxFacts), ttlAutopurge: false });
  }

  limiter(options: LimiterOptions): Limiter {
    const limiter = new RateLimiterMemory({
      keyPrefix: options.name,
      points: options.points,
      duration: options.durationSeconds,
    });
    return new Limiter(limiter, options.points, this.#run);
  }

  leases(_name: string): Leases {
    // Each purpose gets its own leases; as many keys at most as facts.
    return new MemoryLeases(this.#run, this.#maxFacts);
  }

  async remember(key: string, value: string, ttlSeconds: number): Promise<void> {
    this.#facts.set(key, value, { ttl: ttlSeconds * 1000 });
  }

  async recall(key: string): Promise<string | null> {
    return this.#facts.get(key) ?? null;
  }

  /** One process: its own cache has already dropped the item, and there is no one else to tell. */
  async publishInvalidation(_invalidation: Invalidation): Promise<void> {}

  onInvalidation(_listener: (invalidation: Invalidation) => void): void {}

  health(): StoreHealth {
    return { problem: null, warning: this.#refused ?? this.#persistence?.warning() ?? null, errors: 0 };
  }

  observe(observer: OperationObserver): void {
    this.#observe = observer;
  }

  async ready(_timeoutMs: number): Promise<void> {}

  /** Writes the sessions a last time (persistence); nothing else outlives the process. */
  async close(): Promise<void> {
    await this.#persistence?.close();
  }
}
