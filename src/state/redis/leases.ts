import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Lease, Leases } from '../leases.js';
import type { RunOperation } from '../operations.js';

/**
 * Takes one lease atomically. KEYS: the key's sorted set (lease id -> expiry,
 * epoch ms). ARGV: lease id, now (epoch ms), time to live (ms). The expired
 * leases go first, so a dead holder's lease stops counting at its expiry;
 * the set itself expires with its last lease. Returns the live leases.
 */
const TAKE_SCRIPT = `
redis.call('zremrangebyscore', KEYS[1], '-inf', ARGV[2])
redis.call('zadd', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]), ARGV[1])
if redis.call('pttl', KEYS[1]) < tonumber(ARGV[3]) then redis.call('pexpire', KEYS[1], ARGV[3]) end
return redis.call('zcard', KEYS[1])
`;

type ScriptedRedis = Redis & {
  paiaTakeLease(key: string, id: string, now: number, ttlMs: number): Promise<number>;
};

/**
 * Leases in Redis, shared by every instance: `<prefix>lease:<name>:<key>`, a
 * sorted set of lease ids scored by their expiry. Times are the instances'
 * clocks, as for sessions: instances whose clocks disagree by a second make
 * a lease last a second more or less.
 */
export class RedisLeases implements Leases {
  readonly #redis: ScriptedRedis;
  readonly #prefix: string;
  readonly #run: RunOperation;
  readonly #now: () => number;

  constructor(redis: Redis, prefix: string, run: RunOperation, now: () => number = Date.now) {
    if (!('paiaTakeLease' in redis)) redis.defineCommand('paiaTakeLease', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    this.#redis = redis as ScriptedRedis;
    this.#prefix = prefix;
    this.#run = run;
    this.#now = now;
  }

  async take(key: string, ttlMs: number): Promise<Lease> {
    const setKey = `${this.#prefix}${key}`;
    const id = randomBytes(9).toString('base64url');
    const ttl = Math.max(1, Math.ceil(ttlMs));
    const held = await this.#run('lease', () => this.#redis.paiaTakeLease(setKey, id, this.#now(), ttl));
    return {
      held,
      release: async () => {
        await this.#run('lease', () => this.#redis.zrem(setKey, id));
      },
    };
  }
}
