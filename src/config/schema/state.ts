import { z } from 'zod';
import { filePath, integer, must, secret, section } from './validators.js';

/** state: where sessions, lockouts and limits live (memory or Redis). */

/** Default of state.dir: relative to the working directory of the gateway (a path set in a file is the file's). */
const DEFAULT_STATE_DIR = '.paia-sip2';
const STATE_DIR_MUST_BE =
  'must be the path of a directory the gateway may write (e.g. "/var/lib/paia-sip2"), or null to keep sessions in memory only';
/** Words that turn state.dir off, as YAML and the environment write them (besides null). */
export const STATE_DIR_OFF: readonly string[] = ['off', 'false'];

/** Default Redis key prefix: every key and channel of the gateway starts with it. */
const DEFAULT_KEY_PREFIX = 'paia-sip2:';

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
    /** CA certificate(s) (PEM) that signed the Redis server's certificate (rediss:// only); leave out for the system's CAs. */
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
    if (state.store === 'redis' && (state.redis as { url: unknown }).url === null) {
      ctx.addIssue({
        code: 'custom',
        path: ['redis', 'url'],
        message:
          'is required when state.store is "redis": the address of the Redis or Valkey server, e.g. "redis://127.0.0.1:6379" (PAIA_STATE_REDIS_URL)',
      });
    }
  },
  { when: () => true },
);
