import { readFileSync } from 'node:fs';
import type { Logger } from '../log.js';
import { MemoryStore } from './memory/index.js';
import { SessionPersistence } from './memory/persistence.js';
import type { StateStore, StoreKind } from './store.js';

export type { Lease, Leases } from './leases.js';
export type { Limiter } from './limiter.js';
export type { StateStore } from './store.js';

/** What the store is made from: the state section and the session bounds of the configuration. */
export interface StateStoreSettings {
  store: StoreKind;
  /** Where the memory store keeps its sessions across restarts (state.dir); null: nowhere. */
  dir: string | null;
  redis: {
    url: string | null;
    tlsCa: string | null;
    keyPrefix: string;
    connectTimeoutMs: number;
    commandTimeoutMs: number;
  };
  maxSessions: number;
  maxSessionsPerPatron: number;
  /**
   * Keys the hashes of patron ids in the store's key names and the state file (paia.patronIdSecret); null:
   * plain SHA-256 in Redis, a random key kept in state.dir for the state file.
   */
  keySecret: string | null;
}

/**
 * The configured store, not yet connected (see StateStore.ready). The Redis
 * store is loaded only when configured: ioredis and its limiter cost a
 * memory-store gateway about 10 MB of resident memory for nothing.
 */
export async function createStateStore(settings: StateStoreSettings, logger?: Logger): Promise<StateStore> {
  if (settings.store === 'memory') {
    const persistence =
      settings.dir === null
        ? null
        : SessionPersistence.open({ dir: settings.dir, keySecret: settings.keySecret, logger });
    return new MemoryStore({
      maxSessions: settings.maxSessions,
      maxSessionsPerPatron: settings.maxSessionsPerPatron,
      persistence,
    });
  }
  const { redis } = settings;
  if (redis.url === null) throw new Error('state.redis.url is required when state.store is "redis"');
  const { RedisStore } = await import('./redis/index.js');
  return new RedisStore({
    url: redis.url,
    keyPrefix: redis.keyPrefix,
    tlsCa: redis.tlsCa === null ? null : readFileSync(redis.tlsCa, 'utf8'),
    connectTimeoutMs: redis.connectTimeoutMs,
    commandTimeoutMs: redis.commandTimeoutMs,
    maxSessionsPerPatron: settings.maxSessionsPerPatron,
    keySecret: settings.keySecret,
    logger,
  });
}
