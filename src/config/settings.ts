/**
 * Every setting by its dotted path, with its environment variable and how
 * that variable's text is read. What a setting means, its default and what it
 * must look like are in the schema (schema.ts); this table only says how the
 * environment reaches it. test/unit/config/settings.test.ts checks that the
 * table and the schema name the same settings, in the same order.
 */

/**
 * How the text of a setting's environment variable is read. A text that does
 * not fit is passed on as it is, for the schema to report with its own message.
 */
type SettingKind =
  /** A number ("1.5" too, so that the schema says it must be whole). */
  | 'integer'
  /** A number that may have a fraction ("0.5"). */
  | 'number'
  /** true/false, yes/no, 1/0, on/off, in any case. */
  | 'boolean'
  /** Trimmed; a secret is taken exactly as given. */
  | 'string'
  /** Comma-separated; passed on trimmed and split by the schema (textList), which splits a one-line list in YAML the same way. */
  | 'list'
  /** One of the schema's words, trimmed. */
  | 'enum'
  /** An optional section (TLS): true/yes/1/on switches it on ({} or the file's section), false/no/0/off/null off. */
  | 'section'
  /** A structured value (a list of sections) written as JSON. */
  | 'json';

export interface Setting {
  /** Dotted path, e.g. "sip2.pool.acquireTimeoutMs". */
  readonly path: string;
  /** Its environment variable, e.g. "PAIA_SIP2_POOL_ACQUIRE_TIMEOUT_MS". */
  readonly env: string;
  readonly kind: SettingKind;
  /** "", "null" and "~" in the variable mean null. */
  readonly nullable: boolean;
  /** Never shown in messages or logs. */
  readonly secret: boolean;
  /** Names a file: a relative path is read from the config file's directory (or, from the environment, the working directory), and the file must be readable. */
  readonly file: boolean;
}

type Flag = 'nullable' | 'secret' | 'file';

function setting(path: string, env: string, kind: SettingKind, ...flags: Flag[]): Setting {
  return {
    path,
    env,
    kind,
    nullable: kind === 'section' || flags.includes('nullable'),
    secret: flags.includes('secret'),
    file: flags.includes('file'),
  };
}

/** In the order of the schema: problems are listed in this order. */
const SETTINGS: readonly Setting[] = [
  setting('http.host', 'PAIA_HTTP_HOST', 'string'),
  setting('http.port', 'PAIA_HTTP_PORT', 'integer'),
  setting('http.basePath', 'PAIA_HTTP_BASE_PATH', 'string'),
  setting('http.publicUrl', 'PAIA_HTTP_PUBLIC_URL', 'string', 'nullable'),
  setting('http.tls', 'PAIA_HTTP_TLS', 'section'),
  setting('http.tls.cert', 'PAIA_HTTP_TLS_CERT', 'string', 'file'),
  setting('http.tls.key', 'PAIA_HTTP_TLS_KEY', 'string', 'file'),
  setting('http.trustedProxy', 'PAIA_HTTP_TRUSTED_PROXY', 'boolean'),
  setting('http.corsOrigins', 'PAIA_HTTP_CORS_ORIGINS', 'list'),
  setting('http.maxBodyBytes', 'PAIA_HTTP_MAX_BODY_BYTES', 'integer'),
  setting('http.maxHeaderBytes', 'PAIA_HTTP_MAX_HEADER_BYTES', 'integer'),
  setting('http.maxUrlBytes', 'PAIA_HTTP_MAX_URL_BYTES', 'integer'),
  setting('http.shutdownTimeoutMs', 'PAIA_HTTP_SHUTDOWN_TIMEOUT_MS', 'integer'),
  setting('http.requestTimeoutMs', 'PAIA_HTTP_REQUEST_TIMEOUT_MS', 'integer'),
  setting('http.workers', 'PAIA_HTTP_WORKERS', 'integer'),
  setting('http.headersTimeoutMs', 'PAIA_HTTP_HEADERS_TIMEOUT_MS', 'integer'),
  setting('http.receiveTimeoutMs', 'PAIA_HTTP_RECEIVE_TIMEOUT_MS', 'integer'),
  setting('http.keepAliveTimeoutMs', 'PAIA_HTTP_KEEP_ALIVE_TIMEOUT_MS', 'integer'),
  setting('http.maxConnections', 'PAIA_HTTP_MAX_CONNECTIONS', 'integer'),
  setting('http.maxConnectionsPerAddress', 'PAIA_HTTP_MAX_CONNECTIONS_PER_ADDRESS', 'integer', 'nullable'),

  setting('sip2.host', 'PAIA_SIP2_HOST', 'string', 'nullable'),
  setting('sip2.port', 'PAIA_SIP2_PORT', 'integer'),
  setting('sip2.tls', 'PAIA_SIP2_TLS', 'section'),
  setting('sip2.tls.ca', 'PAIA_SIP2_TLS_CA', 'string', 'file'),
  setting('sip2.tls.cert', 'PAIA_SIP2_TLS_CERT', 'string', 'file'),
  setting('sip2.tls.key', 'PAIA_SIP2_TLS_KEY', 'string', 'file'),
  setting('sip2.tls.rejectUnauthorized', 'PAIA_SIP2_TLS_REJECT_UNAUTHORIZED', 'boolean'),
  setting('sip2.tls.servername', 'PAIA_SIP2_TLS_SERVERNAME', 'string'),
  setting('sip2.dialect', 'PAIA_SIP2_DIALECT', 'string'),
  setting('sip2.charset', 'PAIA_SIP2_CHARSET', 'enum', 'nullable'),
  setting('sip2.errorDetection', 'PAIA_SIP2_ERROR_DETECTION', 'boolean'),
  setting('sip2.terminal.user', 'PAIA_SIP2_TERMINAL_USER', 'string'),
  setting('sip2.terminal.password', 'PAIA_SIP2_TERMINAL_PASSWORD', 'string', 'secret'),
  setting('sip2.terminal.location', 'PAIA_SIP2_TERMINAL_LOCATION', 'string'),
  setting('sip2.institution', 'PAIA_SIP2_INSTITUTION', 'string'),
  setting('sip2.terminalPasswordInMessages', 'PAIA_SIP2_TERMINAL_PASSWORD_IN_MESSAGES', 'boolean'),
  setting('sip2.pool.min', 'PAIA_SIP2_POOL_MIN', 'integer'),
  setting('sip2.pool.max', 'PAIA_SIP2_POOL_MAX', 'integer'),
  setting('sip2.pool.acquireTimeoutMs', 'PAIA_SIP2_POOL_ACQUIRE_TIMEOUT_MS', 'integer'),
  setting('sip2.pool.maxWaiting', 'PAIA_SIP2_POOL_MAX_WAITING', 'integer'),
  setting('sip2.pool.keepaliveSeconds', 'PAIA_SIP2_POOL_KEEPALIVE_SECONDS', 'integer'),
  setting('sip2.pool.maxLifetimeSeconds', 'PAIA_SIP2_POOL_MAX_LIFETIME_SECONDS', 'integer'),
  setting('sip2.timeouts.connectMs', 'PAIA_SIP2_TIMEOUTS_CONNECT_MS', 'integer'),
  setting('sip2.timeouts.responseMs', 'PAIA_SIP2_TIMEOUTS_RESPONSE_MS', 'integer'),
  setting('sip2.circuit.failureThreshold', 'PAIA_SIP2_CIRCUIT_FAILURE_THRESHOLD', 'integer'),
  setting('sip2.circuit.coolDownMs', 'PAIA_SIP2_CIRCUIT_COOL_DOWN_MS', 'integer'),
  setting('sip2.circuit.maxCoolDownMs', 'PAIA_SIP2_CIRCUIT_MAX_COOL_DOWN_MS', 'integer'),
  setting('sip2.maxResends', 'PAIA_SIP2_MAX_RESENDS', 'integer'),
  setting('sip2.pageSize', 'PAIA_SIP2_PAGE_SIZE', 'integer', 'nullable'),
  setting('sip2.maxListEntries', 'PAIA_SIP2_MAX_LIST_ENTRIES', 'integer'),
  setting('sip2.currency', 'PAIA_SIP2_CURRENCY', 'string'),
  setting('sip2.maintenance', 'PAIA_SIP2_MAINTENANCE', 'json'),

  setting('paia.itemUri', 'PAIA_PAIA_ITEM_URI', 'string', 'nullable'),
  setting('paia.editionUri', 'PAIA_PAIA_EDITION_URI', 'string', 'nullable'),
  setting('paia.storageUri', 'PAIA_PAIA_STORAGE_URI', 'string', 'nullable'),
  setting('paia.patronTypeUri', 'PAIA_PAIA_PATRON_TYPE_URI', 'string', 'nullable'),
  setting('paia.patronId', 'PAIA_PAIA_PATRON_ID', 'enum'),
  setting('paia.patronIdSecret', 'PAIA_PAIA_PATRON_ID_SECRET', 'string', 'nullable', 'secret'),
  setting('paia.maxDocs', 'PAIA_PAIA_MAX_DOCS', 'integer'),
  setting('paia.expiresWhenUnknown', 'PAIA_PAIA_EXPIRES_WHEN_UNKNOWN', 'string', 'nullable'),

  setting('daia.maxIds', 'PAIA_DAIA_MAX_IDS', 'integer', 'nullable'),
  setting('daia.idsPerMinutePerAddress', 'PAIA_DAIA_IDS_PER_MINUTE_PER_ADDRESS', 'integer'),
  setting('daia.exemptClients', 'PAIA_DAIA_EXEMPT_CLIENTS', 'list'),
  setting('daia.poolShare', 'PAIA_DAIA_POOL_SHARE', 'number'),
  setting('daia.requestUrl', 'PAIA_DAIA_REQUEST_URL', 'string', 'nullable'),
  setting('daia.shelfRequests', 'PAIA_DAIA_SHELF_REQUESTS', 'boolean'),
  setting('daia.department.content', 'PAIA_DAIA_DEPARTMENT_CONTENT', 'string', 'nullable'),
  setting('daia.department.id', 'PAIA_DAIA_DEPARTMENT_ID', 'string', 'nullable'),
  setting('daia.records.idPrefix', 'PAIA_DAIA_RECORDS_ID_PREFIX', 'string', 'nullable'),
  setting('daia.records.maxItemsPerRecord', 'PAIA_DAIA_RECORDS_MAX_ITEMS_PER_RECORD', 'integer'),
  setting('daia.records.file', 'PAIA_DAIA_RECORDS_FILE', 'string', 'nullable', 'file'),
  setting('daia.records.fileCheckSeconds', 'PAIA_DAIA_RECORDS_FILE_CHECK_SECONDS', 'integer'),
  setting('daia.records.http.url', 'PAIA_DAIA_RECORDS_HTTP_URL', 'string', 'nullable'),
  setting('daia.records.http.field', 'PAIA_DAIA_RECORDS_HTTP_FIELD', 'string'),
  setting('daia.records.http.headers', 'PAIA_DAIA_RECORDS_HTTP_HEADERS', 'json', 'secret'),
  setting('daia.records.http.timeoutMs', 'PAIA_DAIA_RECORDS_HTTP_TIMEOUT_MS', 'integer'),
  setting('daia.records.http.cacheSeconds', 'PAIA_DAIA_RECORDS_HTTP_CACHE_SECONDS', 'integer'),
  setting('daia.records.http.failureCacheSeconds', 'PAIA_DAIA_RECORDS_HTTP_FAILURE_CACHE_SECONDS', 'integer'),
  setting('daia.records.http.maxEntries', 'PAIA_DAIA_RECORDS_HTTP_MAX_ENTRIES', 'integer'),
  setting('daia.records.http.maxConcurrent', 'PAIA_DAIA_RECORDS_HTTP_MAX_CONCURRENT', 'integer'),
  setting('daia.records.http.maxBodyBytes', 'PAIA_DAIA_RECORDS_HTTP_MAX_BODY_BYTES', 'integer'),

  setting('auth.tokenLifetimeSeconds', 'PAIA_AUTH_TOKEN_LIFETIME_SECONDS', 'integer'),
  setting('auth.maxSessions', 'PAIA_AUTH_MAX_SESSIONS', 'integer'),
  setting('auth.maxSessionsPerPatron', 'PAIA_AUTH_MAX_SESSIONS_PER_PATRON', 'integer'),
  setting('auth.requestsPerMinute', 'PAIA_AUTH_REQUESTS_PER_MINUTE', 'integer'),
  setting('auth.logoutAllSessions', 'PAIA_AUTH_LOGOUT_ALL_SESSIONS', 'boolean'),
  setting('auth.maxLoginsPerSecond', 'PAIA_AUTH_MAX_LOGINS_PER_SECOND', 'integer'),
  setting('auth.allowedClients', 'PAIA_AUTH_ALLOWED_CLIENTS', 'list'),
  setting(
    'auth.allowedClientLimits.freeFailuresPerAddress',
    'PAIA_AUTH_ALLOWED_CLIENT_LIMITS_FREE_FAILURES_PER_ADDRESS',
    'integer',
    'nullable',
  ),
  setting(
    'auth.allowedClientLimits.loginsPerSecond',
    'PAIA_AUTH_ALLOWED_CLIENT_LIMITS_LOGINS_PER_SECOND',
    'integer',
    'nullable',
  ),
  setting('auth.bruteForce.freeFailuresPerUser', 'PAIA_AUTH_BRUTE_FORCE_FREE_FAILURES_PER_USER', 'integer'),
  setting('auth.bruteForce.freeFailuresPerAddress', 'PAIA_AUTH_BRUTE_FORCE_FREE_FAILURES_PER_ADDRESS', 'integer'),
  setting('auth.bruteForce.lockoutBaseSeconds', 'PAIA_AUTH_BRUTE_FORCE_LOCKOUT_BASE_SECONDS', 'integer'),
  setting('auth.bruteForce.lockoutMaxSeconds', 'PAIA_AUTH_BRUTE_FORCE_LOCKOUT_MAX_SECONDS', 'integer'),
  setting('auth.bruteForce.maxSlowdownSeconds', 'PAIA_AUTH_BRUTE_FORCE_MAX_SLOWDOWN_SECONDS', 'integer'),
  setting('auth.passwordPolicy.minLength', 'PAIA_AUTH_PASSWORD_POLICY_MIN_LENGTH', 'integer'),
  setting('auth.passwordPolicy.denyList', 'PAIA_AUTH_PASSWORD_POLICY_DENY_LIST', 'list'),
  setting('auth.clients', 'PAIA_AUTH_CLIENTS', 'json'),

  setting('state.store', 'PAIA_STATE_STORE', 'enum'),
  setting('state.dir', 'PAIA_STATE_DIR', 'string', 'nullable'),
  setting('state.redis.url', 'PAIA_STATE_REDIS_URL', 'string', 'nullable', 'secret'),
  setting('state.redis.tlsCa', 'PAIA_STATE_REDIS_TLS_CA', 'string', 'nullable', 'file'),
  setting('state.redis.keyPrefix', 'PAIA_STATE_REDIS_KEY_PREFIX', 'string'),
  setting('state.redis.connectTimeoutMs', 'PAIA_STATE_REDIS_CONNECT_TIMEOUT_MS', 'integer'),
  setting('state.redis.commandTimeoutMs', 'PAIA_STATE_REDIS_COMMAND_TIMEOUT_MS', 'integer'),

  setting('cache.items.enabled', 'PAIA_CACHE_ITEMS_ENABLED', 'boolean'),
  setting('cache.items.ttlSeconds', 'PAIA_CACHE_ITEMS_TTL_SECONDS', 'integer'),
  setting('cache.items.maxEntries', 'PAIA_CACHE_ITEMS_MAX_ENTRIES', 'integer'),
  setting('cache.accounts.enabled', 'PAIA_CACHE_ACCOUNTS_ENABLED', 'boolean'),
  setting('cache.accounts.windowSeconds', 'PAIA_CACHE_ACCOUNTS_WINDOW_SECONDS', 'integer'),
  setting('cache.accounts.maxPatrons', 'PAIA_CACHE_ACCOUNTS_MAX_PATRONS', 'integer'),

  setting('metrics.enabled', 'PAIA_METRICS_ENABLED', 'boolean'),
  setting('metrics.allowedClients', 'PAIA_METRICS_ALLOWED_CLIENTS', 'list'),

  setting('log.level', 'PAIA_LOG_LEVEL', 'enum'),
  setting('log.format', 'PAIA_LOG_FORMAT', 'enum'),

  setting('demo.dialect', 'PAIA_DEMO_DIALECT', 'enum'),
  setting('demo.charset', 'PAIA_DEMO_CHARSET', 'enum'),
  setting('demo.sip2Port', 'PAIA_DEMO_SIP2_PORT', 'integer'),
];

/** Every setting with its environment variable, in schema order. */
export function configSettings(): readonly Setting[] {
  return SETTINGS;
}

/** camelCase path -> PAIA_UPPER_SNAKE (`sip2.pool.acquireTimeoutMs` -> `PAIA_SIP2_POOL_ACQUIRE_TIMEOUT_MS`): the rule the table follows. @internal */
export function envNameOf(path: string): string {
  return `PAIA_${path
    .split('.')
    .map((segment) => segment.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase())
    .join('_')}`;
}

export const SETTING_BY_ENV: ReadonlyMap<string, Setting> = new Map(SETTINGS.map((entry) => [entry.env, entry]));
export const SETTING_BY_PATH: ReadonlyMap<string, Setting> = new Map(SETTINGS.map((entry) => [entry.path, entry]));

/** Settings whose values never appear in messages or logs. */
export const SECRET_PATHS: readonly string[] = SETTINGS.filter((entry) => entry.secret).map((entry) => entry.path);

/** Settings naming files; relative paths are read from the directory of the config file. */
export const FILE_PATHS: readonly string[] = SETTINGS.filter((entry) => entry.file).map((entry) => entry.path);

/** The keys each section allows, in schema order, by dotted path ("" = the top level). */
export const SECTION_KEYS: ReadonlyMap<string, readonly string[]> = (() => {
  const keys = new Map<string, string[]>();
  for (const { path } of SETTINGS) {
    const segments = path.split('.');
    segments.forEach((key, depth) => {
      const parent = segments.slice(0, depth).join('.');
      const known = keys.get(parent) ?? [];
      if (!known.includes(key)) known.push(key);
      keys.set(parent, known);
    });
  }
  return keys;
})();
