import { type Redis, ReplyError } from 'ioredis';
import type { Logger } from '../../log.js';
import { StoreUnavailable } from '../errors.js';
import type { RedisPlace } from './target.js';

/**
 * Whether Redis may drop the gateway's keys. Under any maxmemory-policy but
 * `noeviction` (`allkeys-*` and `volatile-*` alike: every key the gateway
 * writes has a time to live), a Redis that reaches its maxmemory deletes
 * keys to make room: a lockout vanishes and the next guess reaches the ILS,
 * a session vanishes and its token gets 401, and nothing says so. Managed
 * Redis services often default to `volatile-lru` or `allkeys-lru`. With
 * `noeviction` a full Redis refuses writes instead, which the gateway turns
 * into 503: closed, never open.
 *
 * The policy is read with CONFIG GET; where CONFIG is renamed or not allowed
 * (managed services, ACLs), from INFO memory (`maxmemory_policy`, Redis 4+
 * and Valkey); where neither answers, the gateway cannot know: it serves and
 * says so once in the log and in the doctor.
 */

/** The one policy under which Redis never drops a key on its own. */
const SAFE_POLICY = 'noeviction';
/** A refused store looks again this often: a sysadmin's CONFIG SET takes effect without a restart. */
const RECHECK_REFUSED_MS = 2_000;
/** A store found safe (or unreadable) looks again this often, in case someone changes the policy while it runs. */
const RECHECK_MS = 60_000;

/** What the policy was found to be. */
type EvictionCheck =
  | { state: 'unchecked' }
  | { state: 'safe' }
  | { state: 'evicting'; policy: string }
  | { state: 'unreadable'; why: string };

/**
 * Reads maxmemory-policy: CONFIG GET, else INFO memory; the reason when
 * Redis refuses both (an error reply: renamed, NOPERM). Rejects when Redis
 * cannot be reached: that says nothing about the policy.
 */
async function readEvictionPolicy(
  redis: Pick<Redis, 'config' | 'info'>,
): Promise<{ policy: string } | { unreadable: string }> {
  // ioredis types ReplyError as any: the reply's text is read from the Error it is.
  const refused = (error: unknown): string => {
    if (error instanceof ReplyError) return (error as Error).message;
    throw error;
  };
  let configProblem: string;
  try {
    const answer = (await redis.config('GET', 'maxmemory-policy')) as unknown;
    const policy = Array.isArray(answer) ? answer[1] : undefined;
    if (typeof policy === 'string' && policy !== '') return { policy };
    configProblem = 'gave no value';
  } catch (error) {
    configProblem = refused(error);
  }
  let infoProblem: string;
  try {
    const policy = /^maxmemory_policy:(\S+)/m.exec(await redis.info('memory'))?.[1];
    if (policy !== undefined) return { policy };
    infoProblem = 'has no maxmemory_policy';
  } catch (error) {
    infoProblem = refused(error);
  }
  return { unreadable: `CONFIG GET maxmemory-policy: ${configProblem}; INFO memory: ${infoProblem}` };
}

/** The sysadmin's fix, in every message about the policy. */
const FIX = `set maxmemory-policy to ${SAFE_POLICY} (redis.conf or valkey.conf: \`maxmemory-policy ${SAFE_POLICY}\`; at run time: \`CONFIG SET maxmemory-policy ${SAFE_POLICY}\`; on a managed service, in its parameter group)`;

function evictingProblem(where: string, policy: string): string {
  return `the Redis state store ${where} may evict keys (maxmemory-policy ${policy}): lockouts and sessions would vanish without a trace, so it is not used; ${FIX}`;
}

function unreadableWarning(where: string, why: string): string {
  return `cannot read the eviction policy of the Redis state store ${where} (${why}); the gateway uses it, but unless its maxmemory-policy is ${SAFE_POLICY}, Redis may drop lockouts and sessions silently: make sure it is`;
}

/**
 * The policy of one Redis as the store last found it, checked at every
 * (re)connection and then now and again; `refusal()` is what every store
 * operation is refused with while Redis may evict, or before the first
 * check. A reconnection keeps the last verdict until the new check is done.
 */
export class EvictionPolicy {
  readonly #redis: Pick<Redis, 'config' | 'info'>;
  readonly #place: RedisPlace;
  readonly #logger: Logger | undefined;
  #check: EvictionCheck = { state: 'unchecked' };
  #refusal: StoreUnavailable | null;
  #timer: NodeJS.Timeout | undefined;
  #checking: Promise<void> | null = null;
  #stopped = false;

  constructor(redis: Pick<Redis, 'config' | 'info'>, place: RedisPlace, logger?: Logger) {
    this.#redis = redis;
    this.#place = place;
    this.#logger = logger;
    this.#refusal = new StoreUnavailable(
      'unreachable',
      `the Redis state store ${place.where} has not been checked yet (its eviction policy is read once it is connected)`,
    );
  }

  /** Why every operation is refused now, or null. */
  refusal(): StoreUnavailable | null {
    return this.#refusal;
  }

  /** Said once in the log and by the doctor, while the policy cannot be read. */
  warning(): string | null {
    return this.#check.state === 'unreadable' ? unreadableWarning(this.#place.where, this.#check.why) : null;
  }

  /** Reads the policy now (one check at a time) and plans the next. Never rejects. */
  check(): Promise<void> {
    this.#checking ??= this.#read().finally(() => {
      this.#checking = null;
      this.#schedule();
    });
    return this.#checking;
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  async #read(): Promise<void> {
    let read: Awaited<ReturnType<typeof readEvictionPolicy>>;
    try {
      read = await readEvictionPolicy(this.#redis);
    } catch {
      // Redis cannot be reached: no finding about the policy; the verdict stays, the next connection checks again.
      return;
    }
    const was = this.#check;
    if ('unreadable' in read) {
      this.#check = { state: 'unreadable', why: read.unreadable };
      this.#refusal = null;
      if (was.state !== 'unreadable')
        this.#logger?.warn({ store: this.#place.name }, unreadableWarning(this.#place.where, read.unreadable));
      return;
    }
    if (read.policy === SAFE_POLICY) {
      this.#check = { state: 'safe' };
      this.#refusal = null;
      if (was.state === 'evicting') {
        this.#logger?.info(
          { store: this.#place.name, policy: read.policy },
          'the Redis state store no longer evicts keys; using it again',
        );
      }
      return;
    }
    const message = evictingProblem(this.#place.where, read.policy);
    this.#check = { state: 'evicting', policy: read.policy };
    this.#refusal = new StoreUnavailable('misconfigured', message, { retryAfterSeconds: 30 });
    if (was.state !== 'evicting' || was.policy !== read.policy)
      this.#logger?.error({ store: this.#place.name, policy: read.policy }, message);
  }

  #schedule(): void {
    clearTimeout(this.#timer);
    if (this.#stopped) return;
    const after = this.#refusal === null ? RECHECK_MS : RECHECK_REFUSED_MS;
    this.#timer = setTimeout(() => void this.check(), after);
    this.#timer.unref();
  }
}
