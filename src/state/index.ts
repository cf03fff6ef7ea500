import { readFileSync } from 'node:fs';
import type { Logger } from '../log.js';
import { MemoryStore } from './memory/index.js';
import type { StateStore, StoreKind } from './store.js';

export type { Lease, Leases } from './leases.js';
export type { Limiter } from './limiter.js';
export type { StateStore } from './store.js';

/** What the store is made from: the state section and the session bounds of the configuration. */
export interface StateStoreSettings {
  store: StoreKind;
  redis: {
    url: string | null;
    tlsCa: string | null;
    keyPrefix: string;
    connectTimeoutMs: number;
    commandTimeoutMs: number;
  };
  maxSessions: number;
  maxSessionsPerPatron: number;
  /** Keys the hashes of patron ids in the store's key names (paia.patronIdSecret); null: plain SHA-256. */
  keySecret: string | null;
}

/**
 * The configured store, not yet connected (see StateStore.ready). The Redis
 * store is loaded only when configured: ioredis and its limiter cost a
 * memory-store gateway about 10 MB of resident memory for nothing.
 */
export async function createStateStore(settings: StateStoreSettings, logger?: Logger): Promise<StateStore> {
  if (settings.store === 'memory') {
    return new MemoryStore({ maxSessions: settings.maxSessions, maxSessionsPerPatron: settings.maxSessionsPerPatron });
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
