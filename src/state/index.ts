import { readFileSync } from 'node:fs';
import type { Logger } from '../log.js';
import { MemoryStore } from './memory/index.js';
import { SessionPersistence } from './memory/persistence.js';
import { redisPlace, type SentinelTarget } from './redis/target.js';
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
    /** One Redis; null with sentinel (or with the memory store). */
    url: string | null;
    /** Redis Sentinel instead of url; null: not used. */
    sentinel: SentinelTarget | null;
    /** The password of Redis itself; null: none, or the URL's. */
    password: string | null;
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
  if ((redis.url === null) === (redis.sentinel === null))
    throw new Error('the redis store needs state.redis.url or state.redis.sentinels, one of them');
  const { RedisStore } = await import('./redis/index.js');
  return new RedisStore({
    ...(redis.sentinel === null ? { url: redis.url ?? '' } : { sentinel: redis.sentinel }),
    password: redis.password,
    keyPrefix: redis.keyPrefix,
    tlsCa: redis.tlsCa === null ? null : readFileSync(redis.tlsCa, 'utf8'),
    connectTimeoutMs: redis.connectTimeoutMs,
    commandTimeoutMs: redis.commandTimeoutMs,
    maxSessionsPerPatron: settings.maxSessionsPerPatron,
    keySecret: settings.keySecret,
    logger,
  });
}

/** The store as the doctor and the gateway's messages name it (never with a password): "memory", "redis://host:port", "Redis via Sentinel master NAME at host:port,...". */
export function describeStore(settings: Pick<StateStoreSettings, 'store' | 'redis'>): string {
  if (settings.store === 'memory') return 'memory';
  const { url, sentinel } = settings.redis;
  return redisPlace(sentinel === null ? { url: url ?? '' } : { sentinel }).name;
}
