import type { Redis } from 'ioredis';
import type { KeyedHash } from '../keyed-hash.js';
import type { RunOperation } from '../operations.js';
import { openSession, sealSession } from '../session-seal.js';
import { isTokenShaped, patronIndexName, type Session, type SessionStore } from '../sessions.js';
import { hashToken, newToken } from '../tokens.js';

/**
 * Sessions in Redis: `<prefix>session:<SHA-256 of the token>` holds the
 * session sealed with its token (session-seal.ts) and expires with it;
 * `<prefix>patron:<keyed hash of the patron>` is a sorted set of the
 * patron's token hashes scored by their last use (epoch ms), for logout of
 * all sessions and the per-patron bound, which ends the least recently used.
 * Neither a key nor a value holds a patron id or barcode in clear. The index
 * may name sessions that have expired: they are trimmed when the patron is
 * at the bound, never counted as live.
 */

/**
 * Stores one session atomically. Scores above the new session's use are of
 * earlier builds, which scored the index by expiry: each is set to just
 * before this use (once; it sorts by its uses from then on), so that new
 * logins end those unused old sessions first rather than each other. At the
 * bound, the index first forgets sessions whose key has expired, then the
 * least recently used go until one more fits. KEYS: session key, patron
 * index. ARGV: token hash, sealed session, ttl ms, the new session's use
 * (useScore), most sessions per patron, session key prefix. Returns 0 when
 * the key exists (a token collision: pick another). Below the bound nothing
 * is walked: a login costs a few commands whatever the patron's sessions.
 * (string.format %.17g: Lua's own number-to-string keeps 14 digits, less
 * than a score's milliseconds.)
 */
const CREATE_SCRIPT = `
if redis.call('exists', KEYS[1]) == 1 then return 0 end
local before = string.format('%.17g', tonumber(ARGV[4]) - 1)
for _, hash in ipairs(redis.call('zrangebyscore', KEYS[2], '(' .. ARGV[4], '+inf')) do
  redis.call('zadd', KEYS[2], before, hash)
end
local bound = tonumber(ARGV[5])
if redis.call('zcard', KEYS[2]) >= bound then
  for _, hash in ipairs(redis.call('zrange', KEYS[2], 0, -1)) do
    if redis.call('exists', ARGV[6] .. hash) == 0 then redis.call('zrem', KEYS[2], hash) end
  end
  local over = redis.call('zcard', KEYS[2]) - bound + 1
  if over > 0 then
    local leastRecent = redis.call('zpopmin', KEYS[2], over)
    for i = 1, #leastRecent, 2 do redis.call('del', ARGV[6] .. leastRecent[i]) end
  end
end
redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('zadd', KEYS[2], ARGV[4], ARGV[1])
if redis.call('pttl', KEYS[2]) < tonumber(ARGV[3]) then redis.call('pexpire', KEYS[2], ARGV[3]) end
return 1
`;

/** The score of the latest use this process wrote; see useScore(). */
let latestScore = 0;

/**
 * The index score of a use (a login, a call) at `now`: epoch milliseconds,
 * but strictly increasing within this process (by a microsecond at least:
 * doubles of today's epoch milliseconds keep a quarter of one), so that
 * uses within one millisecond keep their order and the bound never ends the
 * later one. Across instances the clocks decide, as they do for expiry.
 */
function useScore(now: number): number {
  latestScore = Math.max(now, latestScore + 0.001);
  return latestScore;
}

type ScriptedRedis = Redis & {
  paiaCreateSession(sessionKey: string, indexKey: string, ...args: Array<string | number>): Promise<number>;
};

export interface RedisSessionStoreOptions {
  /** Prepended to every key (state.redis.keyPrefix). */
  prefix: string;
  maxSessionsPerPatron: number;
  /** The store's operation runner (operations.ts). */
  run: RunOperation;
  /**
   * The runner of the touch, which no call waits for: timed and counted under
   * its own name, but its failure is no sign that the store fails calls
   * (RedisStore: not in /readyz).
   */
  runTouch: RunOperation;
  /** How the patron index is keyed (paia.patronIdSecret). */
  keys: KeyedHash;
  now?: () => number;
}

export class RedisSessionStore implements SessionStore {
  readonly #redis: ScriptedRedis;
  readonly #options: RedisSessionStoreOptions;
  readonly #now: () => number;

  constructor(redis: Redis, options: RedisSessionStoreOptions) {
    redis.defineCommand('paiaCreateSession', { numberOfKeys: 2, lua: CREATE_SCRIPT });
    this.#redis = redis as ScriptedRedis;
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  #sessionKey(hash: string): string {
    return `${this.#options.prefix}session:${hash}`;
  }

  #indexKey(patron: string): string {
    return `${this.#options.prefix}patron:${patronIndexName(this.#options.keys, patron)}`;
  }

  #run<T>(operation: 'session-create' | 'session-get' | 'session-delete', call: () => Promise<T>): Promise<T> {
    return this.#options.run(operation, call);
  }

  async create(session: Session): Promise<string> {
    const stored: Session = { ...session, scopes: [...session.scopes] };
    for (;;) {
      const token = newToken();
      const ttl = Math.floor(stored.expiresAt - this.#now());
      // An already expired session is never stored: its token is dead on arrival.
      if (ttl <= 0) return token;
      const hash = hashToken(token);
      const created = await this.#run('session-create', () =>
        this.#redis.paiaCreateSession(
          this.#sessionKey(hash),
          this.#indexKey(stored.patron),
          hash,
          sealSession(stored, token),
          ttl,
          useScore(this.#now()),
          this.#options.maxSessionsPerPatron,
          this.#sessionKey(''),
        ),
      );
      if (created === 1) return token;
    }
  }

  async get(token: string, tokenHash?: string): Promise<Session | null> {
    if (!isTokenShaped(token)) return null;
    const hash = tokenHash ?? hashToken(token);
    const key = this.#sessionKey(hash);
    const text = await this.#run('session-get', () => this.#redis.get(key));
    if (text === null) return null;
    const session = openSession(text, token);
    // Redis expires the key itself; the check covers clocks that disagree by a little.
    if (session === null || session.expiresAt <= this.#now()) return null;
    this.#touch(session.patron, hash);
    return session;
  }

  /**
   * Scores the session as just used in its patron's index, so that the
   * per-patron bound never ends it next. Not awaited: the call does not wait
   * for it, and one connection keeps commands in order, so the next login's
   * script sees it. XX: a session already ended is not put back. A failure
   * costs only the order of eviction: no call gets 503 for it, and it is
   * counted apart (runTouch), never as the store not answering.
   */
  #touch(patron: string, hash: string): void {
    this.#options
      .runTouch('session-touch', () => this.#redis.zadd(this.#indexKey(patron), 'XX', useScore(this.#now()), hash))
      .catch(() => {});
  }

  async delete(token: string): Promise<void> {
    if (!isTokenShaped(token)) return;
    const hash = hashToken(token);
    const session = await this.get(token);
    await this.#run('session-delete', async () => {
      const batch = this.#redis.multi().del(this.#sessionKey(hash));
      if (session !== null) batch.zrem(this.#indexKey(session.patron), hash);
      await batch.exec();
    });
  }

  async deleteAllFor(patron: string): Promise<number> {
    return this.#run('session-delete', async () => {
      const index = this.#indexKey(patron);
      const hashes: string[] = await this.#redis.zrange(index, '0', '-1');
      if (hashes.length === 0) return 0;
      // DEL counts only the keys that still existed: sessions that expired meanwhile are not counted as ended.
      const removed = await this.#redis.del(...hashes.map((hash) => this.#sessionKey(hash)));
      // Only the hashes read: a login that lands meanwhile stays in the index, for the next logout to find.
      await this.#redis.zrem(index, ...hashes);
      return removed;
    });
  }

  /** Not counted: it would cost Redis a scan of every key. */
  size(): null {
    return null;
  }
}
