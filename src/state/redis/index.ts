import { randomUUID } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import type { Logger } from '../../log.js';
import { StoreUnavailable, storeFailure } from '../errors.js';
import { KeyedHash } from '../keyed-hash.js';
import type { Leases } from '../leases.js';
import { Limiter, type LimiterOptions } from '../limiter.js';
import { type OperationObserver, operationRunner, type RunOperation, type StoreOperation } from '../operations.js';
import type { Invalidation, StateStore, StoreHealth } from '../store.js';
import { EvictionPolicy } from './eviction-policy.js';
import { RedisLeases } from './leases.js';
import { RedisSessionStore } from './sessions.js';
import { type RedisPlace, redisPlace, type SentinelTarget } from './target.js';

export interface RedisStoreOptions {
  /** One Redis: redis://[user:password@]host:port[/db] or rediss:// for TLS. Never logged: it may carry a password. */
  url?: string | undefined;
  /** Redis Sentinel instead of url: the master the sentinels name, followed through every failover. */
  sentinel?: SentinelTarget | undefined;
  /** The password of Redis itself (url: instead of the URL's; sentinel: the only place for it); null: none. */
  password?: string | null;
  /** Prepended to every key and channel, so several gateways (or other programs) can share one Redis. */
  keyPrefix: string;
  /** PEM text of the CA that signed the server's certificate (rediss://, or sentinel with tls); null: the system's CAs. */
  tlsCa?: string | null;
  /** How long to wait for a connection. */
  connectTimeoutMs: number;
  /** How long one operation may take before it counts as failed (503 for the call). */
  commandTimeoutMs: number;
  maxSessionsPerPatron: number;
  /** Keys the hashes of patron ids in key names (paia.patronIdSecret); null: plain SHA-256. */
  keySecret?: string | null;
  logger?: Logger | undefined;
}

/**
 * ioredis connection states, as the store reports them: `ready` answers
 * operations; anything else fails them at once (no offline queue: a call
 * must get its 503 now, not hang until Redis is back).
 */
type RedisStatus = Redis['status'];

/** Reconnect delays: doubling from 100 ms, at most 2 s, with jitter so that many gateways do not knock in step. */
function reconnectDelay(attempt: number): number {
  const capped = Math.min(2000, 100 * 2 ** Math.min(attempt, 5));
  return Math.round(capped / 2 + Math.random() * (capped / 2));
}

/**
 * OpenSSL's codes for a certificate no trusted CA signed, where state.redis.tlsCa is the fix; others (expired,
 * another host name) have messages that say what is wrong.
 */
const UNTRUSTED_CERTIFICATE = /SELF_SIGNED|ISSUER|UNABLE_TO_VERIFY_LEAF|CERT_UNTRUSTED|CERT_REJECTED/;

/**
 * A connection error in words a sysadmin can act on. ioredis passes on the
 * socket's bare error ("read ECONNRESET", "connect ETIMEDOUT"), which does
 * not tell that the URL's scheme and the server disagree about TLS: a TLS
 * Redis resets a plain client, a plain Redis never answers a TLS handshake.
 * That hint is given only before the first connection: once connected, the
 * scheme is right and a reset means that Redis went away.
 * Only the error's own message is repeated, never the URL (it may carry a password).
 */
function describeConnectionError(
  error: NodeJS.ErrnoException,
  tls: boolean,
  sentinel: boolean,
  everConnected: boolean,
): string {
  const code = error.code ?? '';
  if (tls && UNTRUSTED_CERTIFICATE.test(code)) {
    return `the TLS certificate of Redis is not trusted (${code}: ${error.message}); state.redis.tlsCa must be the PEM file of the CA that signed it (left out: the system's CAs)`;
  }
  if (tls && code === 'ETIMEDOUT' && !everConnected) {
    const fix = sentinel ? 'state.redis.tls must be false' : 'the URL must start with redis://';
    return `${error.message}: no TLS connection within state.redis.connectTimeoutMs; a Redis without TLS never answers a TLS handshake: if it has none, ${fix}`;
  }
  if (!tls && code === 'ECONNRESET' && !everConnected) {
    const fix = sentinel ? 'state.redis.tls must be true' : 'the URL must start with rediss://';
    return `${error.message}: Redis reset the connection; a Redis that only accepts TLS does that to plain connections: if so, ${fix}`;
  }
  return error.message;
}

/**
 * One client of the store: one Redis by its URL, or Sentinel. With Sentinel, ioredis asks the sentinels for the
 * master at every (re)connection and checks that the server it reaches says it is the master (a demoted one is
 * left for the next sentinel's answer). A master demoted while it runs (a manual failover) drops its clients
 * (the sentinels send it CLIENT KILL), and a write it refuses as a replica (READONLY) makes the client
 * reconnect too. Not ioredis's failover detector: its +switch-master ends a reconnection under way for good
 * (the client's status becomes "end"), which is what a killed master's failover looks like. A sentinel that
 * accepts but does not answer is given up after connectTimeoutMs.
 */
function client(options: RedisStoreOptions, common: RedisOptions): Redis {
  const password = options.password ?? undefined;
  const { sentinel } = options;
  if (sentinel === undefined) {
    const tls = options.url?.startsWith('rediss:') && options.tlsCa ? { tls: { ca: options.tlsCa } } : {};
    return new Redis(options.url ?? '', { ...common, ...tls, ...(password === undefined ? {} : { password }) });
  }
  const tls = sentinel.tls ? (options.tlsCa ? { ca: options.tlsCa } : {}) : undefined;
  return new Redis({
    ...common,
    sentinels: sentinel.sentinels.map(({ host, port }) => ({ host, port })),
    name: sentinel.masterName,
    ...(password === undefined ? {} : { password }),
    ...(sentinel.password === null ? {} : { sentinelPassword: sentinel.password }),
    ...(tls === undefined ? {} : { tls, sentinelTLS: tls, enableTLSForSentinelMode: true }),
    sentinelRetryStrategy: reconnectDelay,
    sentinelCommandTimeout: options.connectTimeoutMs,
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
  });
}

/**
 * Sessions, counters and facts in Redis or Valkey, shared by every instance
 * and worker that uses the same URL and key prefix; invalidations (items,
 * accounts) go out on a pub/sub channel. Nothing waits for a lost connection: operations
 * fail at once (StoreUnavailable) while ioredis reconnects in the background,
 * and work again as soon as it is back, without a restart.
 */
export class RedisStore implements StateStore {
  readonly kind = 'redis' as const;
  readonly sessions: RedisSessionStore;
  readonly #redis: Redis;
  readonly #subscriber: Redis;
  readonly #options: RedisStoreOptions;
  readonly #place: RedisPlace;
  readonly #channel: string;
  /** Marks this instance's own invalidations, so it does not act on its echo. */
  readonly #instance = randomUUID();
  readonly #listeners: Array<(invalidation: Invalidation) => void> = [];
  #observe: OperationObserver = () => {};
  #errors = 0;
  #lastError: string | null = null;
  /** Whether the latest operation failed: a connected Redis that does not answer. */
  #lastFailed = false;
  #lastProbe = 0;
  #status: RedisStatus = 'wait';
  #everConnected = false;
  #subscribed: Promise<unknown> | undefined;
  /** close() was called: the connection ending is no loss to report. */
  #closing = false;
  /** Whether this Redis may drop keys: while it may, every operation is refused (eviction-policy.ts). */
  readonly #eviction: EvictionPolicy;
  /** Every operation goes through this: timed for the metric, refused while Redis may evict. */
  readonly #run: RunOperation;
  /** The PINGs of health() and ready(), timed alike but never refused: how a refused store still sees Redis answer. */
  readonly #probe: RunOperation;
  /**
   * What no call waits for (a session's touch): timed and counted for the
   * metric by its own operation name, but a failure is not the store failing
   * a call, so it neither makes health() report a problem nor counts in its errors.
   */
  readonly #unawaited: RunOperation;

  constructor(options: RedisStoreOptions) {
    this.#options = options;
    if ((options.url === undefined) === (options.sentinel === undefined))
      throw new Error('RedisStore needs either a url or a sentinel target');
    this.#place = redisPlace(options);
    this.#channel = `${options.keyPrefix}item-invalidated`;
    const common: RedisOptions = {
      lazyConnect: true,
      connectTimeout: options.connectTimeoutMs,
      retryStrategy: reconnectDelay,
      // A command while disconnected fails at once instead of waiting in a queue for Redis to come back.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs,
    };
    this.#redis = client(options, common);
    this.#eviction = new EvictionPolicy(this.#redis, this.#place, options.logger);
    const observe: OperationObserver = (...args) => this.#observed(...args);
    this.#run = operationRunner('redis', observe, () => this.#eviction.refusal());
    this.#probe = operationRunner('redis', observe);
    this.#unawaited = operationRunner(
      'redis',
      (...args) => this.#observe(...args),
      () => this.#eviction.refusal(),
    );
    this.#watch(this.#redis);
    this.#revive(this.#redis);
    // The subscriber holds its SUBSCRIBE until connected, however many attempts that takes (a gateway may start
    // before Redis), and subscribes again after each reconnect; it sends nothing else. Not ioredis's own
    // resubscribe: it drops the SUBSCRIBE's promise, so a connection closing before Redis answers it (Redis
    // going away again, or close()) would be an unhandled rejection, which ends a Node process.
    this.#subscriber = client(options, {
      ...common,
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
      commandTimeout: undefined,
      autoResubscribe: false,
    });
    this.#subscriber.on('error', () => {});
    this.#revive(this.#subscriber);
    let connectedBefore = false; // the first connection sends the SUBSCRIBE that ready() queued
    this.#subscriber.on('ready', () => {
      if (connectedBefore && this.#subscribed !== undefined && !this.#closing)
        this.#subscriber.subscribe(this.#channel).catch(() => {});
      connectedBefore = true;
    });
    this.#subscriber.on('message', (channel: string, message: string) => this.#heard(channel, message));
    this.sessions = new RedisSessionStore(this.#redis, {
      prefix: options.keyPrefix,
      maxSessionsPerPatron: options.maxSessionsPerPatron,
      run: this.#run,
      runTouch: this.#unawaited,
      keys: new KeyedHash(options.keySecret ?? null),
    });
  }

  /**
   * Connects a client again after ioredis gave it up ("end": a connection attempt that rejected, where ioredis
   * stops retrying), with the same backoff: the store must come back without a restart whatever ended it.
   */
  #revive(redis: Redis): void {
    let attempt = 0;
    redis.on('ready', () => {
      attempt = 0;
    });
    redis.on('end', () => {
      if (this.#closing) return;
      attempt += 1;
      const timer = setTimeout(() => {
        if (!this.#closing && redis.status === 'end') redis.connect().catch(() => {});
      }, reconnectDelay(attempt));
      timer.unref();
    });
  }

  /** Logs each change of the connection's state once: a sysadmin sees Redis go and come back, not every retry. */
  #watch(redis: Redis): void {
    const log = this.#options.logger;
    const moved = () => {
      const status = redis.status;
      if (status === this.#status) return;
      const was = this.#status;
      this.#status = status;
      if (status === 'ready') {
        this.#everConnected = true;
        log?.info({ store: this.#place.name, was }, 'state store connected');
        // Another server may be behind the address now (a restart with another configuration, a failover).
        if (!this.#closing) void this.#eviction.check();
      } else if (was === 'ready' && !this.#closing) {
        log?.warn(
          { store: this.#place.name, status, error: this.#lastError },
          'state store connection lost; reconnecting',
        );
      }
    };
    for (const event of ['connect', 'ready', 'close', 'reconnecting', 'end']) redis.on(event, moved);
    const { sentinel, url } = this.#options;
    const tls = sentinel?.tls ?? url?.startsWith('rediss:') ?? false;
    redis.on('error', (error: NodeJS.ErrnoException) => {
      this.#lastError = describeConnectionError(error, tls, sentinel !== undefined, this.#everConnected);
    });
  }

  #observed(operation: StoreOperation, seconds: number, ok: boolean): void {
    if (ok) this.#lastFailed = false;
    else {
      this.#errors += 1;
      this.#lastFailed = true;
    }
    this.#observe(operation, seconds, ok);
  }

  limiter(options: LimiterOptions): Limiter {
    const limiter = new RateLimiterRedis({
      storeClient: this.#redis,
      keyPrefix: `${this.#options.keyPrefix}limit:${options.name}`,
      points: options.points,
      duration: options.durationSeconds,
      rejectIfRedisNotReady: true,
    });
    return new Limiter(limiter, options.points, this.#run);
  }

  leases(name: string): Leases {
    return new RedisLeases(this.#redis, `${this.#options.keyPrefix}lease:${name}:`, this.#run);
  }

  async remember(key: string, value: string, ttlSeconds: number): Promise<void> {
    await this.#run('fact-set', () =>
      this.#redis.set(`${this.#options.keyPrefix}fact:${key}`, value, 'EX', Math.max(1, Math.ceil(ttlSeconds))),
    );
  }

  recall(key: string): Promise<string | null> {
    return this.#run('fact-get', () => this.#redis.get(`${this.#options.keyPrefix}fact:${key}`));
  }

  async publishInvalidation(invalidation: Invalidation): Promise<void> {
    const message = JSON.stringify({ ...invalidation, from: this.#instance });
    await this.#run('invalidate', () => this.#redis.publish(this.#channel, message));
  }

  onInvalidation(listener: (invalidation: Invalidation) => void): void {
    this.#listeners.push(listener);
  }

  #heard(channel: string, message: string): void {
    if (channel !== this.#channel) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      return;
    }
    const { item, patron, outcomeUnknown, from } = (parsed ?? {}) as Record<string, unknown>;
    if (from === this.#instance) return;
    const known = outcomeUnknown === true;
    const invalidation: Invalidation | null =
      typeof item === 'string'
        ? { item, outcomeUnknown: known }
        : typeof patron === 'string'
          ? { patron, outcomeUnknown: known }
          : null;
    if (invalidation === null) return;
    for (const listener of this.#listeners) listener(invalidation);
  }

  /**
   * Connected is not enough: a hung Redis keeps its connection. So health
   * also reports the last operation failing, and starts a PING (at most one
   * a second, not awaited) so that an idle gateway notices too: the probe
   * after next sees its outcome.
   */
  health(): StoreHealth {
    const status = this.#redis.status;
    const warning = this.#eviction.warning();
    if (status !== 'ready') {
      const why = `${status}${this.#lastError ? `: ${this.#lastError}` : ''}`;
      return {
        problem: `the Redis state store ${this.#place.where} is not connected (${why})`,
        warning,
        errors: this.#errors,
      };
    }
    const now = Date.now();
    if (now - this.#lastProbe >= 1000) {
      this.#lastProbe = now;
      this.#probe('ping', () => this.#redis.ping()).catch(() => {});
    }
    const problem =
      this.#eviction.refusal()?.message ??
      (this.#lastFailed
        ? `the Redis state store ${this.#place.where} is connected but does not answer (the last operation failed or timed out after state.redis.commandTimeoutMs)`
        : null);
    return { problem, warning, errors: this.#errors };
  }

  observe(observer: OperationObserver): void {
    this.#observe = observer;
  }

  /**
   * Connects both clients. Rejects with StoreUnavailable when Redis does not
   * answer within `timeoutMs`; ioredis goes on trying in the background, so
   * the caller may also carry on and let /readyz say "not ready".
   */
  async ready(timeoutMs: number): Promise<void> {
    const connect = (redis: Redis) => (redis.status === 'wait' ? redis.connect() : Promise.resolve());
    // Sent once, whether or not Redis answers now: it waits in the subscriber's queue until the first connection.
    this.#subscribed ??= this.#subscriber.subscribe(this.#channel);
    this.#subscribed.catch(() => {}); // rejected only by close()
    const connected = Promise.all([connect(this.#redis), this.#subscribed]);
    connected.catch(() => {}); // a later failure is seen in health()
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new StoreUnavailable(
              'unreachable',
              `the Redis state store ${this.#place.where} did not answer within ${timeoutMs} ms${this.#lastError ? ` (${this.#lastError})` : ''}`,
            ),
          ),
        timeoutMs,
      );
    });
    try {
      await Promise.race([
        connected.then(() => this.#probe('ping', () => this.#redis.ping())).then(() => this.#eviction.check()),
        deadline,
      ]);
    } catch (thrown) {
      throw storeFailure('redis', thrown);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.#eviction.stop();
    // The subscriber has nothing to finish, and a QUIT queued behind a SUBSCRIBE that never went out would never end.
    await this.#redis.quit().catch(() => {});
    this.#redis.disconnect();
    this.#subscriber.disconnect();
  }
}
