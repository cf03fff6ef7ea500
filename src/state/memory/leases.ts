import { LRUCache } from 'lru-cache';
import { entryBound } from '../../lru-bound.js';
import type { Lease, Leases } from '../leases.js';
import type { RunOperation } from '../operations.js';

/** Leases in this process: per key, each lease's expiry (epoch ms) by its number. */
export class MemoryLeases implements Leases {
  readonly #byKey: LRUCache<string, Map<number, number>>;
  readonly #run: RunOperation;
  readonly #now: () => number;
  #next = 0;

  constructor(run: RunOperation, maxKeys: number, now: () => number = Date.now) {
    this.#run = run;
    this.#now = now;
    // Bounded like every memory structure: a key whose leases all expired goes when room is needed.
    this.#byKey = new LRUCache({ ...entryBound(maxKeys) });
  }

  take(key: string, ttlMs: number): Promise<Lease> {
    return this.#run('lease', async () => {
      const now = this.#now();
      let leases = this.#byKey.get(key);
      if (leases === undefined) {
        leases = new Map();
        this.#byKey.set(key, leases);
      }
      for (const [id, expiry] of leases) if (expiry <= now) leases.delete(id);
      const id = this.#next++;
      leases.set(id, now + ttlMs);
      const held = leases.size;
      const owner = leases;
      return {
        held,
        release: () =>
          this.#run('lease', async () => {
            owner.delete(id);
            if (owner.size === 0 && this.#byKey.peek(key) === owner) this.#byKey.delete(key);
          }),
      };
    });
  }
}
