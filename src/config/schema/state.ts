import { z } from 'zod';
import { filePath, flag, integer, must, secret, section, splitHostPort, textList } from './validators.js';

/** state: where sessions, lockouts and limits live (memory or Redis). */

/** Default of state.dir: relative to the working directory of the gateway (a path set in a file is the file's). */
const DEFAULT_STATE_DIR = '.paia-sip2';
const STATE_DIR_MUST_BE =
  'must be the path of a directory the gateway may write (e.g. "/var/lib/paia-sip2"), or null to keep sessions in memory only';
/** Words that turn state.dir off, as YAML and the environment write them (besides null). */
export const STATE_DIR_OFF: readonly string[] = ['off', 'false'];

/** Default Redis key prefix: every key and channel of the gateway starts with it. */
const DEFAULT_KEY_PREFIX = 'paia-sip2:';

/** The port of a sentinel given without one: Sentinel's own default. */
export const SENTINEL_PORT = 26379;

/** The addresses of state.redis.sentinels, which the schema has checked are each host[:port]. */
export function sentinelAddresses(entries: readonly string[]): { host: string; port: number }[] {
  return entries.flatMap((entry) => splitHostPort(entry, SENTINEL_PORT) ?? []);
}
const SENTINELS_MUST_BE =
  'must be a list of sentinel addresses, host:port each (e.g. ["10.0.0.1:26379", "10.0.0.2:26379", "10.0.0.3:26379"]), or [] for one Redis at state.redis.url';

/** Where the Redis of state.store "redis" is: one of these two, never both. */
const ONE_REDIS =
  'state.redis.url (one Redis) or state.redis.sentinels with state.redis.sentinelMaster (Redis Sentinel)';

/** The password in a redis:// URL, if it has one (the URL was checked by the schema). */
function urlHasPassword(url: string): boolean {
  try {
    return new URL(url).password !== '';
  } catch {
    return false;
  }
}

export const stateSection = section({
  /**
   * Where sessions, login lockouts and limits live: "memory" (this process
   * only; sessions survive a restart in state.dir, lockouts and limits do
   * not) or "redis" (Redis or Valkey, shared by every instance and worker;
   * everything survives restarts).
   */
  store: z.enum(['memory', 'redis'], must('must be "memory" or "redis"')).default('memory'),
  /**
   * Where the memory store keeps its sessions across restarts: a directory of
   * its own (made with mode 0700 if missing) holding the state file (mode
   * 0600; tokens only as hashes, sessions sealed), written within 2 s of a
   * change (WRITE_INTERVAL_MS in src/state/memory/persistence.ts), at a
   * graceful stop, and before a logout is answered. Relative
   * paths are read from the config file's directory (from the environment:
   * the working directory); the default is `.paia-sip2` in the working
   * directory. One gateway per directory. null (or false, "off", "false"): nothing is
   * kept, a restart logs every patron out. Not used with store "redis".
   */
  dir: z.preprocess(
    (value) => (value === false || STATE_DIR_OFF.includes(value as string) ? null : value),
    z
      .string(must(STATE_DIR_MUST_BE))
      .min(1, must(STATE_DIR_MUST_BE))
      // A line break or other control character in a path is a slip of copy and paste, not a directory name.
      .refine((value) => !/\p{Cc}/u.test(value), { error: `${STATE_DIR_MUST_BE}, without line breaks` })
      .nullable()
      .default(DEFAULT_STATE_DIR),
  ),
  redis: section({
    /** redis://[user:password@]host:port[/db], or rediss:// for TLS. Required with store "redis". Secret (it may carry a password). */
    url: secret(
      z
        .string(must('must be a redis:// or rediss:// URL, e.g. "redis://127.0.0.1:6379"'))
        .refine(
          (value) => {
            try {
              const url = new URL(value);
              return (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '';
            } catch {
              return false;
            }
          },
          {
            error: 'must be a redis:// or rediss:// URL with a host, e.g. "redis://127.0.0.1:6379"',
            params: { showValue: false },
          },
        )
        .nullable()
        .default(null),
    ),
    /**
     * Redis Sentinel instead of url: the sentinels' addresses (host:port; the port defaults to 26379), of which
     * the gateway asks the first that answers where the master is, and asks again after every lost
     * connection, so that it follows a failover without a restart. Three or more in production.
     */
    sentinels: textList('must be a sentinel address "host:port" (text)', SENTINELS_MUST_BE)
      .superRefine((entries, ctx) => {
        for (const entry of entries) {
          if (splitHostPort(entry, SENTINEL_PORT) === null)
            ctx.addIssue({
              code: 'custom',
              message: `has ${JSON.stringify(entry.slice(0, 80))}, which is not host:port (a host name or IP address, an IPv6 address in brackets: "[2001:db8::1]:26379")`,
            });
        }
      })
      .default([]),
    /** The name the sentinels know the master by (`sentinel monitor NAME ...` in sentinel.conf); required with sentinels. */
    sentinelMaster: z
      .string(must('must be the master name of the sentinels\' configuration, e.g. "mymaster"'))
      .regex(
        /^[^\s]{1,200}$/,
        must('must be the master name of the sentinels\' configuration, e.g. "mymaster", without spaces'),
      )
      .nullable()
      .default(null),
    /**
     * The password of Redis itself (requirepass, or an ACL user's with a user name in url); with sentinels the
     * only place for it. With url it may stand in for the URL's password (not both). Secret.
     */
    password: secret(
      z
        .string(must('must be the Redis password (text)'))
        .min(1, must('must be the Redis password, or null for none'))
        .nullable()
        .default(null),
    ),
    /** The sentinels' own password (their requirepass), if they ask for one; with sentinels only. Secret. */
    sentinelPassword: secret(
      z
        .string(must("must be the sentinels' password (text)"))
        .min(1, must("must be the sentinels' password, or null for none"))
        .nullable()
        .default(null),
    ),
    /**
     * With sentinels: TLS to the sentinels and to Redis (what rediss:// is for url), trusting tlsCa; both
     * must then speak TLS. With url the URL's scheme says it.
     */
    tls: flag().default(false),
    /** CA certificate(s) (PEM) that signed the Redis server's certificate (rediss://, or tls with sentinels); leave out for the system's CAs. */
    tlsCa: filePath('must be the path of a PEM file with the CA certificate(s) that signed the Redis certificate')
      .nullable()
      .default(null),
    /** Prepended to every key and channel: several gateways (or other programs) can share one Redis. */
    keyPrefix: z
      .string(must('must be a short text of letters, digits and _ . : - such as "paia-sip2:"'))
      .regex(/^[A-Za-z0-9_.:-]{0,100}$/, must('must be at most 100 letters, digits and _ . : - such as "paia-sip2:"'))
      .default(DEFAULT_KEY_PREFIX),
    /** How long to wait for Redis at start and on each reconnect. */
    connectTimeoutMs: integer(100, 60_000, 'must be milliseconds between 100 and 60000').default(5000),
    /** How long one store operation may take; beyond it the call gets 503 (never served without its check). */
    commandTimeoutMs: integer(10, 10_000, 'must be milliseconds between 10 and 10000').default(1000),
  }),
}).superRefine(
  (state, ctx) => {
    // Runs whatever else is wrong (when: () => true): a setting that did not validate arrives as it was written.
    const redis = state.redis as Record<string, unknown>;
    const url = typeof redis.url === 'string' ? redis.url : null;
    const given = (key: string) => redis[key] !== null && redis[key] !== undefined;
    const issue = (key: string, message: string) => ctx.addIssue({ code: 'custom', path: ['redis', key], message });
    const sentinel = Array.isArray(redis.sentinels) && redis.sentinels.length > 0;
    if (url !== null && sentinel) {
      issue(
        'sentinels',
        'cannot be used together with state.redis.url: give either url (one Redis) or sentinels and sentinelMaster (Redis Sentinel, which names the master itself), not both',
      );
    } else if (state.store === 'redis' && !given('url') && !sentinel) {
      issue(
        'url',
        `is required when state.store is "redis": give ${ONE_REDIS}, e.g. "redis://127.0.0.1:6379" (PAIA_STATE_REDIS_URL)`,
      );
    }
    if (sentinel && !given('sentinelMaster')) {
      issue(
        'sentinelMaster',
        'is required with state.redis.sentinels: the name the sentinels monitor the master by (`sentinel monitor NAME ...` in sentinel.conf), e.g. "mymaster" (PAIA_STATE_REDIS_SENTINEL_MASTER)',
      );
    }
    if (!sentinel) {
      if (given('sentinelMaster'))
        issue(
          'sentinelMaster',
          "is used only with state.redis.sentinels: set the sentinels' addresses too, or leave it out",
        );
      if (given('sentinelPassword'))
        issue(
          'sentinelPassword',
          "is used only with state.redis.sentinels: set the sentinels' addresses too, or leave it out",
        );
    }
    if (url !== null && given('password') && urlHasPassword(url)) {
      issue(
        'password',
        'is given twice, here and in state.redis.url; keep one of them (the URL without its password, or this setting left out)',
      );
    }
    if (url !== null && redis.tls === true && url.startsWith('redis:')) {
      issue(
        'tls',
        "is for state.redis.sentinels; with state.redis.url the URL's scheme says whether to use TLS: rediss:// for TLS, redis:// without",
      );
    }
  },
  { when: () => true },
);
