import { describe, expect, it } from 'vitest';
import { configSettings, loadConfigWithWarnings } from '../../../src/config/index.js';
import { RENAMED_SETTINGS } from '../../../src/config/renamed.js';
import { SETTING_BY_ENV } from '../../../src/config/settings.js';
import { configError, tempDir } from './helpers.js';

/**
 * The environment table is derived from the schema (settings.ts). This is
 * the table as it was written by hand before (issue 27): every variable the
 * gateway accepted, how its text was read and its flags. The derived table
 * must accept exactly these, with the time settings renamed to milliseconds
 * (renamed.ts), whose old names are still accepted.
 */
const ACCEPTED_BEFORE: readonly (readonly [env: string, kind: string, flags: string])[] = [
  ['PAIA_HTTP_HOST', 'string', ''],
  ['PAIA_HTTP_PORT', 'integer', ''],
  ['PAIA_HTTP_BASE_PATH', 'string', ''],
  ['PAIA_HTTP_PUBLIC_URL', 'string', 'nullable'],
  ['PAIA_HTTP_TLS', 'section', 'nullable'],
  ['PAIA_HTTP_TLS_CERT', 'string', 'file'],
  ['PAIA_HTTP_TLS_KEY', 'string', 'file'],
  ['PAIA_HTTP_TRUSTED_PROXY', 'boolean', ''],
  ['PAIA_HTTP_CORS_ORIGINS', 'list', ''],
  ['PAIA_HTTP_MAX_BODY_BYTES', 'integer', ''],
  ['PAIA_HTTP_MAX_HEADER_BYTES', 'integer', ''],
  ['PAIA_HTTP_MAX_URL_BYTES', 'integer', ''],
  ['PAIA_HTTP_SHUTDOWN_TIMEOUT_MS', 'integer', ''],
  ['PAIA_HTTP_REQUEST_TIMEOUT_MS', 'integer', ''],
  ['PAIA_HTTP_WORKERS', 'integer', ''],
  ['PAIA_HTTP_HEADERS_TIMEOUT_MS', 'integer', ''],
  ['PAIA_HTTP_RECEIVE_TIMEOUT_MS', 'integer', ''],
  ['PAIA_HTTP_KEEP_ALIVE_TIMEOUT_MS', 'integer', ''],
  ['PAIA_HTTP_MAX_CONNECTIONS', 'integer', ''],
  ['PAIA_HTTP_MAX_CONNECTIONS_PER_ADDRESS', 'integer', 'nullable'],
  ['PAIA_SIP2_HOST', 'string', 'nullable'],
  ['PAIA_SIP2_PORT', 'integer', ''],
  ['PAIA_SIP2_TLS', 'section', 'nullable'],
  ['PAIA_SIP2_TLS_CA', 'string', 'file'],
  ['PAIA_SIP2_TLS_CERT', 'string', 'file'],
  ['PAIA_SIP2_TLS_KEY', 'string', 'file'],
  ['PAIA_SIP2_TLS_REJECT_UNAUTHORIZED', 'boolean', ''],
  ['PAIA_SIP2_TLS_SERVERNAME', 'string', ''],
  ['PAIA_SIP2_DIALECT', 'string', ''],
  ['PAIA_SIP2_CHARSET', 'enum', 'nullable'],
  ['PAIA_SIP2_ERROR_DETECTION', 'boolean', ''],
  ['PAIA_SIP2_TERMINAL_USER', 'string', ''],
  ['PAIA_SIP2_TERMINAL_PASSWORD', 'string', 'secret'],
  ['PAIA_SIP2_TERMINAL_LOCATION', 'string', ''],
  ['PAIA_SIP2_INSTITUTION', 'string', ''],
  ['PAIA_SIP2_TERMINAL_PASSWORD_IN_MESSAGES', 'boolean', ''],
  ['PAIA_SIP2_POOL_MIN', 'integer', ''],
  ['PAIA_SIP2_POOL_MAX', 'integer', ''],
  ['PAIA_SIP2_POOL_ACQUIRE_TIMEOUT_MS', 'integer', ''],
  ['PAIA_SIP2_POOL_MAX_WAITING', 'integer', ''],
  ['PAIA_SIP2_POOL_KEEPALIVE_SECONDS', 'integer', ''],
  ['PAIA_SIP2_POOL_MAX_LIFETIME_SECONDS', 'integer', ''],
  ['PAIA_SIP2_TIMEOUTS_CONNECT_MS', 'integer', ''],
  ['PAIA_SIP2_TIMEOUTS_RESPONSE_MS', 'integer', ''],
  ['PAIA_SIP2_CIRCUIT_FAILURE_THRESHOLD', 'integer', ''],
  ['PAIA_SIP2_CIRCUIT_COOL_DOWN_MS', 'integer', ''],
  ['PAIA_SIP2_CIRCUIT_MAX_COOL_DOWN_MS', 'integer', ''],
  ['PAIA_SIP2_MAX_RESENDS', 'integer', ''],
  ['PAIA_SIP2_PAGE_SIZE', 'integer', 'nullable'],
  ['PAIA_SIP2_MAX_LIST_ENTRIES', 'integer', ''],
  ['PAIA_SIP2_CURRENCY', 'string', ''],
  ['PAIA_SIP2_MAINTENANCE', 'json', ''],
  ['PAIA_PAIA_ITEM_URI', 'string', 'nullable'],
  ['PAIA_PAIA_EDITION_URI', 'string', 'nullable'],
  ['PAIA_PAIA_STORAGE_URI', 'string', 'nullable'],
  ['PAIA_PAIA_PATRON_TYPE_URI', 'string', 'nullable'],
  ['PAIA_PAIA_PATRON_ID', 'enum', ''],
  ['PAIA_PAIA_PATRON_ID_SECRET', 'string', 'nullable,secret'],
  ['PAIA_PAIA_MAX_DOCS', 'integer', ''],
  ['PAIA_PAIA_EXPIRES_WHEN_UNKNOWN', 'string', 'nullable'],
  ['PAIA_DAIA_MAX_IDS', 'integer', 'nullable'],
  ['PAIA_DAIA_IDS_PER_MINUTE_PER_ADDRESS', 'integer', ''],
  ['PAIA_DAIA_EXEMPT_CLIENTS', 'list', ''],
  ['PAIA_DAIA_POOL_SHARE', 'number', ''],
  ['PAIA_DAIA_REQUEST_URL', 'string', 'nullable'],
  ['PAIA_DAIA_SHELF_REQUESTS', 'boolean', ''],
  ['PAIA_DAIA_DEPARTMENT_CONTENT', 'string', 'nullable'],
  ['PAIA_DAIA_DEPARTMENT_ID', 'string', 'nullable'],
  ['PAIA_DAIA_RECORDS_ID_PREFIX', 'string', 'nullable'],
  ['PAIA_DAIA_RECORDS_MAX_ITEMS_PER_RECORD', 'integer', ''],
  ['PAIA_DAIA_RECORDS_FILE', 'string', 'nullable,file'],
  ['PAIA_DAIA_RECORDS_FILE_CHECK_SECONDS', 'integer', ''],
  ['PAIA_DAIA_RECORDS_HTTP_URL', 'string', 'nullable'],
  ['PAIA_DAIA_RECORDS_HTTP_FIELD', 'string', ''],
  ['PAIA_DAIA_RECORDS_HTTP_HEADERS', 'json', 'secret'],
  ['PAIA_DAIA_RECORDS_HTTP_TIMEOUT_MS', 'integer', ''],
  ['PAIA_DAIA_RECORDS_HTTP_CACHE_SECONDS', 'integer', ''],
  ['PAIA_DAIA_RECORDS_HTTP_FAILURE_CACHE_SECONDS', 'integer', ''],
  ['PAIA_DAIA_RECORDS_HTTP_MAX_ENTRIES', 'integer', ''],
  ['PAIA_DAIA_RECORDS_HTTP_MAX_CONCURRENT', 'integer', ''],
  ['PAIA_DAIA_RECORDS_HTTP_MAX_BODY_BYTES', 'integer', ''],
  ['PAIA_AUTH_TOKEN_LIFETIME_SECONDS', 'integer', ''],
  ['PAIA_AUTH_MAX_SESSIONS', 'integer', ''],
  ['PAIA_AUTH_MAX_SESSIONS_PER_PATRON', 'integer', ''],
  ['PAIA_AUTH_REQUESTS_PER_MINUTE', 'integer', ''],
  ['PAIA_AUTH_LOGOUT_ALL_SESSIONS', 'boolean', ''],
  ['PAIA_AUTH_MAX_LOGINS_PER_SECOND', 'integer', ''],
  ['PAIA_AUTH_ALLOWED_CLIENTS', 'list', ''],
  ['PAIA_AUTH_ALLOWED_CLIENT_LIMITS_FREE_FAILURES_PER_ADDRESS', 'integer', 'nullable'],
  ['PAIA_AUTH_ALLOWED_CLIENT_LIMITS_LOGINS_PER_SECOND', 'integer', 'nullable'],
  ['PAIA_AUTH_BRUTE_FORCE_FREE_FAILURES_PER_USER', 'integer', ''],
  ['PAIA_AUTH_BRUTE_FORCE_FREE_FAILURES_PER_ADDRESS', 'integer', ''],
  ['PAIA_AUTH_BRUTE_FORCE_LOCKOUT_BASE_SECONDS', 'integer', ''],
  ['PAIA_AUTH_BRUTE_FORCE_LOCKOUT_MAX_SECONDS', 'integer', ''],
  ['PAIA_AUTH_BRUTE_FORCE_MAX_SLOWDOWN_SECONDS', 'integer', ''],
  ['PAIA_AUTH_PASSWORD_POLICY_MIN_LENGTH', 'integer', ''],
  ['PAIA_AUTH_PASSWORD_POLICY_DENY_LIST', 'list', ''],
  ['PAIA_AUTH_CLIENTS', 'json', ''],
  ['PAIA_STATE_STORE', 'enum', ''],
  ['PAIA_STATE_DIR', 'string', 'nullable'],
  ['PAIA_STATE_REDIS_URL', 'string', 'nullable,secret'],
  ['PAIA_STATE_REDIS_TLS_CA', 'string', 'nullable,file'],
  ['PAIA_STATE_REDIS_KEY_PREFIX', 'string', ''],
  ['PAIA_STATE_REDIS_CONNECT_TIMEOUT_MS', 'integer', ''],
  ['PAIA_STATE_REDIS_COMMAND_TIMEOUT_MS', 'integer', ''],
  ['PAIA_CACHE_ITEMS_ENABLED', 'boolean', ''],
  ['PAIA_CACHE_ITEMS_TTL_SECONDS', 'integer', ''],
  ['PAIA_CACHE_ITEMS_MAX_ENTRIES', 'integer', ''],
  ['PAIA_CACHE_ACCOUNTS_ENABLED', 'boolean', ''],
  ['PAIA_CACHE_ACCOUNTS_WINDOW_SECONDS', 'integer', ''],
  ['PAIA_CACHE_ACCOUNTS_MAX_PATRONS', 'integer', ''],
  ['PAIA_METRICS_ENABLED', 'boolean', ''],
  ['PAIA_METRICS_ALLOWED_CLIENTS', 'list', ''],
  ['PAIA_LOG_LEVEL', 'enum', ''],
  ['PAIA_LOG_FORMAT', 'enum', ''],
  ['PAIA_DEMO_DIALECT', 'enum', ''],
  ['PAIA_DEMO_CHARSET', 'enum', ''],
  ['PAIA_DEMO_SIP2_PORT', 'integer', ''],
];

/** The renames as environment variables: old (seconds) -> new (milliseconds). */
const RENAMED_ENV = new Map(
  ACCEPTED_BEFORE.filter(([env]) => env.endsWith('_SECONDS')).map(([env]) => [env, env.replace(/_SECONDS$/, '_MS')]),
);

const flagsOf = (setting: { nullable: boolean; secret: boolean; file: boolean }) =>
  [setting.nullable && 'nullable', setting.secret && 'secret', setting.file && 'file'].filter(Boolean).join(',');

describe('the environment variables derived from the schema', () => {
  const derived = configSettings().map((setting) => [setting.env, setting.kind, flagsOf(setting)]);
  const expected = ACCEPTED_BEFORE.map(([env, kind, flags]) => [RENAMED_ENV.get(env) ?? env, kind, flags]);
  const before = new Set(expected.map(([env]) => env));

  it('are the ones written by hand before, in the same order, kinds and flags, the renamed ones ending in _MS', () => {
    // Settings added after the hand-written table are not in it; every one that was is derived alike.
    expect(derived.filter(([env]) => before.has(env as string))).toEqual(expected);
    expect(derived.length).toBeGreaterThanOrEqual(expected.length);
  });

  it('accept every variable accepted before, and the new names of the renamed ones besides', () => {
    const accepted = new Set(SETTING_BY_ENV.keys());
    for (const [env] of ACCEPTED_BEFORE) expect(accepted.has(env), env).toBe(true);
    for (const env of RENAMED_ENV.values()) expect(accepted.has(env), env).toBe(true);
    // Nothing else but settings added since (each with its variable by the rule, settings.test.ts).
    const added = derived.map(([env]) => env as string).filter((env) => !before.has(env));
    expect([...accepted].filter((env) => !before.has(env) && !RENAMED_ENV.has(env)).sort()).toEqual(added.sort());
  });

  it('rename exactly the settings in seconds, each to milliseconds', () => {
    expect(RENAMED_ENV.size).toBe(11);
    expect(RENAMED_SETTINGS.map(({ from }) => from).every((path) => path.endsWith('Seconds'))).toBe(true);
    expect(configSettings().filter((setting) => /seconds/i.test(setting.path))).toEqual([]);
  });
});

/** A value of each renamed setting, in seconds, that its new setting accepts times 1000. */
const OLD_VALUE: Record<string, number> = {
  'sip2.pool.keepaliveSeconds': 30,
  'sip2.pool.maxLifetimeSeconds': 7200,
  'daia.records.fileCheckSeconds': 10,
  'daia.records.http.cacheSeconds': 600,
  'daia.records.http.failureCacheSeconds': 60,
  'auth.tokenLifetimeSeconds': 7200,
  'auth.bruteForce.lockoutBaseSeconds': 2,
  'auth.bruteForce.lockoutMaxSeconds': 1800,
  'auth.bruteForce.maxSlowdownSeconds': 3,
  'cache.items.ttlSeconds': 30,
  'cache.accounts.windowSeconds': 10,
};

function valueAt(value: unknown, dotted: string): unknown {
  return dotted.split('.').reduce<unknown>((current, key) => (current as Record<string, unknown>)[key], value);
}

function yamlAt(dotted: string, value: number): string {
  return dotted
    .split('.')
    .map((key, depth, keys) => `${'  '.repeat(depth)}${key}:${depth === keys.length - 1 ? ` ${value}` : ''}`)
    .join('\n');
}

const envName = (path: string) =>
  `PAIA_${path
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/\./g, '_')
    .toUpperCase()}`;

describe('the old ...Seconds names, still read for one release', () => {
  const tmp = tempDir();

  it.each(RENAMED_SETTINGS.map(({ from, to }) => [envName(from), from, to]))(
    '%s sets %s in milliseconds, with one warning naming the new variable',
    (variable, from, to) => {
      const seconds = OLD_VALUE[from] as number;
      const { config, warnings } = loadConfigWithWarnings({ env: { [variable]: String(seconds) } });
      expect(valueAt(config, to)).toBe(seconds * 1000);
      const named = warnings.filter((warning) => warning.includes(variable));
      expect(named).toHaveLength(1);
      expect(named[0]).toContain(`is deprecated and will be removed in a coming release: set ${envName(to)} instead`);
    },
  );

  it.each(RENAMED_SETTINGS.map(({ from, to }) => [from, to]))(
    '%s in the file sets %s in milliseconds, with one warning naming the new setting',
    (from, to) => {
      const seconds = OLD_VALUE[from] as number;
      const file = tmp.write(`${from}.yaml`, `${yamlAt(from, seconds)}\n`);
      const { config, warnings } = loadConfigWithWarnings({ file, env: {} });
      expect(valueAt(config, to)).toBe(seconds * 1000);
      expect(warnings.filter((warning) => warning.includes(from))).toEqual([
        `${from} is deprecated and will be removed in a coming release: set ${to} instead, in milliseconds (${from} ${seconds} is ${to} ${seconds * 1000})`,
      ]);
    },
  );

  it('a fraction of a second in an old name becomes whole milliseconds, not a float the new setting refuses', () => {
    const { config } = loadConfigWithWarnings({ env: { PAIA_AUTH_BRUTE_FORCE_MAX_SLOWDOWN_SECONDS: '1.1' } });
    expect(config.auth.bruteForce.maxSlowdownMs).toBe(1100);
  });

  it('both names at the same value: the warning only', () => {
    const { config, warnings } = loadConfigWithWarnings({
      env: { PAIA_CACHE_ITEMS_TTL_SECONDS: '20', PAIA_CACHE_ITEMS_TTL_MS: '20000' },
    });
    expect(config.cache.items.ttlMs).toBe(20_000);
    expect(warnings.filter((warning) => warning.includes('PAIA_CACHE_ITEMS_TTL_SECONDS'))).toHaveLength(1);
  });

  it('both names in the environment at different values: a problem naming both, and no value guessed', () => {
    const error = configError({ env: { PAIA_CACHE_ITEMS_TTL_SECONDS: '30', PAIA_CACHE_ITEMS_TTL_MS: '20000' } });
    expect(error.problems).toEqual([
      {
        path: 'cache.items.ttlMs',
        message:
          'is set twice, by PAIA_CACHE_ITEMS_TTL_MS (20000 ms) and by the deprecated PAIA_CACHE_ITEMS_TTL_SECONDS (30 s); remove cache.items.ttlSeconds (or its variable) (from PAIA_CACHE_ITEMS_TTL_MS)',
      },
    ]);
  });

  it('both names in the file at different values: a problem at the new one', () => {
    const file = tmp.write('both.yaml', 'cache:\n  items:\n    ttlSeconds: 30\n    ttlMs: 20000\n');
    expect(configError({ file, env: {} }).problems).toEqual([
      {
        path: 'cache.items.ttlMs',
        message: `is set twice, by cache.items.ttlMs in the configuration file (20000 ms) and by the deprecated cache.items.ttlSeconds in the configuration file (30 s); remove cache.items.ttlSeconds (or its variable) (at ${file}:4)`,
      },
    ]);
  });

  it('the environment wins over the file, whichever name each uses', () => {
    const file = tmp.write('layers.yaml', 'cache:\n  items:\n    ttlMs: 20000\n  accounts:\n    windowSeconds: 2\n');
    const { config, warnings } = loadConfigWithWarnings({
      file,
      env: { PAIA_CACHE_ITEMS_TTL_SECONDS: '30', PAIA_CACHE_ACCOUNTS_WINDOW_MS: '3000' },
    });
    expect(config.cache.items.ttlMs).toBe(30_000);
    expect(config.cache.accounts.windowMs).toBe(3000);
    expect(warnings).toHaveLength(2);
  });

  it('an old value out of range is reported at the new setting, saying where it came from', () => {
    const error = configError({ env: { PAIA_CACHE_ACCOUNTS_WINDOW_SECONDS: '301' } });
    expect(error.problems.map(({ path, message }) => `${path}: ${message}`)).toEqual([
      'cache.accounts.windowMs: must be milliseconds between 1000 and 300000 (e.g. 5000 for 5 s) (got 301000, from PAIA_CACHE_ACCOUNTS_WINDOW_SECONDS, given in seconds as the deprecated cache.accounts.windowSeconds, times 1000)',
    ]);
  });
});
