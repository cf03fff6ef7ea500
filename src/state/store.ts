import type { Leases } from './leases.js';
import type { Limiter, LimiterOptions } from './limiter.js';
import type { OperationObserver } from './operations.js';
import type { SessionStore } from './sessions.js';

/** Where the gateway keeps what must outlive a request: `state.store`. */
export type StoreKind = 'memory' | 'redis';

/**
 * What some instance changed, so every instance must forget what it keeps
 * of it: an item (the item cache) or a patron's account (the account
 * window). `patron` is the account window's key, a keyed digest: barcodes
 * never travel through the store.
 */
export type Invalidation = ({ item: string; patron?: never } | { patron: string; item?: never }) & {
  /** A write went out but was never confirmed: answers about it are passed on, not kept, for one TTL. */
  outcomeUnknown: boolean;
};

/** How the store is doing, for /readyz and /metrics. */
export interface StoreHealth {
  /** null: answering; otherwise why not, in words for a sysadmin. */
  problem: string | null;
  /** Something a sysadmin should check though the store serves (Redis's eviction policy cannot be read); null: none. */
  warning: string | null;
  /** Operations that failed (unreachable, timed out, error) since start. */
  errors: number;
}

/**
 * One interface over the gateway's shared state: sessions, counters for
 * limits and lockouts, short-lived facts (a username's patron) and the
 * invalidation of the item cache and the account window. `memory` keeps all of it in this process; `redis` keeps it in
 * Redis or Valkey, so that every instance and worker sees the same sessions
 * and counts and sessions survive restarts. Operations reject with
 * StoreUnavailable when the store cannot answer in time.
 */
export interface StateStore {
  readonly kind: StoreKind;
  readonly sessions: SessionStore;
  /** A counter kept in this store; create each once, at start. */
  limiter(options: LimiterOptions): Limiter;
  /** Work under way per key, each piece ending by itself (leases.ts); one name per purpose, each made once, at start. */
  leases(name: string): Leases;
  /** Keeps a short text under `key` for `ttlSeconds`. */
  remember(key: string, value: string, ttlSeconds: number): Promise<void>;
  /** What was remembered under `key`; null when nothing (or it expired). */
  recall(key: string): Promise<string | null>;
  /** Tells the other instances to drop an item or an account from what they keep (this instance has already). */
  publishInvalidation(invalidation: Invalidation): Promise<void>;
  /** Calls `listener` for each item or account another instance invalidated. */
  onInvalidation(listener: (invalidation: Invalidation) => void): void;
  health(): StoreHealth;
  /** Told of each store operation (sessions, limits, facts) with its duration, for the latency metric; one observer. */
  observe(observer: OperationObserver): void;
  /** Waits until the store answers (redis: connected), at most `timeoutMs`; rejects with StoreUnavailable otherwise. */
  ready(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}
