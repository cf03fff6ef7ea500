import type { Config } from '../config/index.js';
import { createStateStore, describeStore } from '../state/index.js';
import { stateStoreSettings } from './parts/state.js';

/** What the doctor reports of the state store: what the gateway would find at start. */
export interface StateStoreCheck {
  kind: 'memory' | 'redis';
  /** Which store, never with a password: "redis://host:port" or "Redis via Sentinel master NAME at host:port,...". */
  name: string;
  /** Why the gateway could not use it (Redis does not answer, or may evict keys); null: it may. */
  problem: string | null;
  /** What to check though it may be used (the eviction policy cannot be read); null: nothing. */
  warning: string | null;
}

/**
 * Opens the configured state store as the gateway does at start, waits for
 * it (state.redis.connectTimeoutMs at most), reads its health and closes it.
 * The memory store has nothing to check.
 */
export async function checkStateStore(config: Config): Promise<StateStoreCheck> {
  const settings = stateStoreSettings(config);
  const name = describeStore(settings);
  if (settings.store === 'memory') return { kind: 'memory', name, problem: null, warning: null };
  const store = await createStateStore(settings);
  try {
    let problem: string | null = null;
    try {
      await store.ready(settings.redis.connectTimeoutMs);
    } catch (error) {
      problem = (error as Error).message;
    }
    const health = store.health();
    return { kind: 'redis', name, problem: problem ?? health.problem, warning: health.warning };
  } finally {
    await store.close();
  }
}
