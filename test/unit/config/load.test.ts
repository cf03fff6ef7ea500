import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_DENY_LIST } from '../../../src/auth/password-policy.js';
import {
  type Config,
  configSchema,
  configSettings,
  DEFAULT_CONFIG_FILE,
  describeConfig,
  envNameOf,
  loadConfig,
  loadConfigWithWarnings,
  withoutSettings,
} from '../../../src/config/index.js';
import { stateStoreSettings } from '../../../src/gateway/parts/state.js';
import { ILS_ACCOUNT_ENV, problemAt, tempDir } from './helpers.js';

const EXAMPLE_FILE = fileURLToPath(new URL('../../../config/example.yaml', import.meta.url));
const tmp = tempDir();
const CERT = tmp.write('tls/server.pem', '-----BEGIN CERTIFICATE-----\n');
const KEY = tmp.write('tls/server.key', '-----BEGIN PRIVATE KEY-----\n');
const CA = tmp.write('tls/ca.pem', '-----BEGIN CERTIFICATE-----\n');

describe('defaults', () => {
  it('load from config/default.yaml: the embedded demo on 127.0.0.1:8080', () => {
    const { config, warnings } = loadConfigWithWarnings({ env: {} });
    expect(warnings).toEqual([]);
    expect(config.http).toEqual({
      host: '127.0.0.1',
      port: 8080,
      basePath: '',
      publicUrl: null,
      tls: null,
      trustedProxy: false,
      corsOrigins: ['*'],
      maxBodyBytes: 65536,
      maxHeaderBytes: 16384,
      maxUrlBytes: 2048,
      readyWhen: 'every-library',
      shutdownTimeoutMs: 10000,
      requestTimeoutMs: 30000,
      workers: 1,
      headersTimeoutMs: 10000,
      receiveTimeoutMs: 30000,
      keepAliveTimeoutMs: 5000,
      maxConnections: 1000,
      maxConnectionsPerAddress: 100,
    });
    expect(config.sip2.host).toBeNull();
    expect(config.sip2.terminal).toEqual({ user: 'paia', password: 'paia-secret', location: 'MAIN' });
    expect(config.sip2.institution).toBe('DEMO');
    expect(config.sip2.pool).toEqual({
      min: 1,
      max: 4,
      acquireTimeoutMs: 5000,
      maxWaiting: 200,
      keepaliveMs: 20_000,
      maxLifetimeMs: 3_600_000,
    });
    expect(config.sip2.maxListEntries).toBe(10000);
    expect(config.paia).toMatchObject({
      // null: the demo's URIs follow where the gateway listens (test/integration/demo-uris.test.ts)
      itemUri: null,
      editionUri: null,
      patronId: 'barcode',
      patronIdSecret: null,
      maxDocs: 50,
    });
    expect(config.auth).toEqual({
      tokenLifetimeMs: 3_600_000,
      maxSessions: 100000,
      maxSessionsPerPatron: 50,
      requestsPerMinute: 120,
      logoutAllSessions: false,
      maxLoginsPerSecond: 20,
      allowedClients: [],
      allowedClientLimits: { freeFailuresPerAddress: null, loginsPerSecond: null },
      bruteForce: {
        freeFailuresPerUser: 5,
        freeFailuresPerAddress: 30,
        lockoutBaseMs: 1000,
        lockoutMaxMs: 900_000,
        maxSlowdownMs: 5000,
      },
      passwordPolicy: { minLength: 4, denyList: [...DEFAULT_DENY_LIST] },
      clients: [],
    });
    expect(config.state).toEqual({
      store: 'memory',
      // Relative: the working directory's (gateway/components.ts), where `npm start` runs.
      dir: '.paia-sip2',
      redis: {
        url: null,
        sentinels: [],
        sentinelMaster: null,
        password: null,
        sentinelPassword: null,
        tls: false,
        tlsCa: null,
        keyPrefix: 'paia-sip2:',
        connectTimeoutMs: 5000,
        commandTimeoutMs: 1000,
      },
    });
    expect(config.daia).toEqual({
      maxIds: null,
      idsPerMinutePerAddress: 6000,
      exemptClients: [],
      poolShare: 0.5,
      requestUrl: null,
      shelfRequests: false,
      department: { content: null, id: null },
      // VuFind's DAIA driver's default daiaIdPrefix (DAIA.php init(): 'ppn:'); demo mode maps the demo's titles.
      records: {
        idPrefix: 'ppn:',
        maxItemsPerRecord: 100,
        file: null,
        fileCheckMs: 5000,
        http: {
          url: null,
          field: '[].external_id',
          headers: [],
          timeoutMs: 3000,
          cacheMs: 300_000,
          failureCacheMs: 30_000,
          maxEntries: 10000,
          maxConcurrent: 8,
          maxBodyBytes: 1048576,
        },
      },
    });
    expect(config.log).toEqual({ level: 'info', format: 'json' });
    expect(config.sip2.maintenance).toEqual([]);
    expect(config.demo).toEqual({ dialect: 'generic', charset: 'utf-8', sip2Port: 0 });
  });

  it('default.yaml says exactly what the built-in defaults are', () => {
    expect(loadConfig({ env: {} })).toEqual(configSchema.parse({}));
  });

  it('an empty file and empty sections mean the defaults', () => {
    const defaults = configSchema.parse({});
    expect(loadConfig({ file: tmp.write('empty.yaml', ''), env: {} })).toEqual(defaults);
    expect(loadConfig({ file: tmp.write('comments.yaml', '# nothing here\n'), env: {} })).toEqual(defaults);
    expect(loadConfig({ file: tmp.write('sections.yaml', 'http:\nsip2:\n  pool:\nlog:\n'), env: {} })).toEqual(
      defaults,
    );
  });

  it('are deeply frozen: assignment throws', () => {
    const config = loadConfig({ env: {} });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.sip2.pool)).toBe(true);
    expect(Object.isFrozen(config.sip2.terminal)).toBe(true);
    expect(() => {
      (config as { http: { port: number } }).http.port = 1;
    }).toThrow(TypeError);
    expect(() => {
      (config.sip2 as { host: string | null }).host = 'evil.example.org';
    }).toThrow(TypeError);
    expect(() => {
      (config as unknown as Record<string, unknown>).extra = 1;
    }).toThrow(TypeError);
    expect(config.http.port).toBe(8080);
  });

  it('reads the default file next to the package, whatever the working directory', () => {
    expect(DEFAULT_CONFIG_FILE).toBe(fileURLToPath(new URL('../../../config/default.yaml', import.meta.url)));
    expect(loadConfig({ env: {}, cwd: tmp.dir }).http.port).toBe(8080);
  });
});

describe('environment overrides', () => {
  it('are named after the config path', () => {
    expect(envNameOf('sip2.host')).toBe('PAIA_SIP2_HOST');
    expect(envNameOf('http.port')).toBe('PAIA_HTTP_PORT');
    expect(envNameOf('sip2.pool.acquireTimeoutMs')).toBe('PAIA_SIP2_POOL_ACQUIRE_TIMEOUT_MS');
    expect(envNameOf('sip2.terminal.password')).toBe('PAIA_SIP2_TERMINAL_PASSWORD');
    expect(envNameOf('demo.sip2Port')).toBe('PAIA_DEMO_SIP2_PORT');
    expect(envNameOf('paia.patronIdSecret')).toBe('PAIA_PAIA_PATRON_ID_SECRET');
  });

  it('exist for every setting, one variable each', () => {
    const settings = configSettings();
    const leaves = settings.filter((setting) => setting.kind !== 'section').map((setting) => setting.path);
    // The table is derived from the schema: settings.test.ts holds it to what the schema produces, and
    // env-names.test.ts to every variable accepted before it was derived (a setting lost or renamed fails there).
    expect(leaves.length).toBeGreaterThan(100);
    expect(leaves).toContain('sip2.pool.acquireTimeoutMs');
    expect(settings.filter((setting) => setting.kind === 'section').map((setting) => setting.env)).toEqual([
      'PAIA_HTTP_TLS',
      'PAIA_SIP2_TLS',
    ]);
    expect(new Set(settings.map((setting) => setting.env)).size).toBe(settings.length);
    for (const setting of settings) expect(setting.env).toBe(envNameOf(setting.path));
    expect(settings.filter((setting) => setting.secret).map((setting) => setting.path)).toEqual([
      'sip2.terminal.password',
      'paia.patronIdSecret',
      'daia.records.http.headers',
      'state.redis.url',
      'state.redis.password',
      'state.redis.sentinelPassword',
    ]);
  });

  it('override the file', () => {
    const file = tmp.write('override.yaml', 'sip2:\n  host: file.example.org\n  pool:\n    max: 2\n');
    const config = loadConfig({
      file,
      env: { ...ILS_ACCOUNT_ENV, PAIA_SIP2_HOST: 'env.example.org', PAIA_SIP2_POOL_ACQUIRE_TIMEOUT_MS: '1234' },
    });
    expect(config.sip2.host).toBe('env.example.org');
    expect(config.sip2.pool.max).toBe(2);
    expect(config.sip2.pool.acquireTimeoutMs).toBe(1234);
  });

  it('parse numbers', () => {
    const config = loadConfig({
      env: { PAIA_HTTP_PORT: '9090', PAIA_SIP2_POOL_MAX: ' 8 ', PAIA_DEMO_SIP2_PORT: '6001' },
    });
    expect(config.http.port).toBe(9090);
    expect(config.sip2.pool.max).toBe(8);
    expect(config.demo.sip2Port).toBe(6001);
  });

  it('parse fractions and the DAIA settings', () => {
    const config = loadConfig({
      env: {
        PAIA_DAIA_POOL_SHARE: ' 0.25 ',
        PAIA_DAIA_MAX_IDS: '20',
        PAIA_DAIA_IDS_PER_MINUTE_PER_ADDRESS: '300',
        PAIA_DAIA_EXEMPT_CLIENTS: '192.0.2.10, 2001:db8::/48',
        PAIA_DAIA_REQUEST_URL: 'https://opac.lib.example.org/hold?barcode={barcode}',
        PAIA_DAIA_SHELF_REQUESTS: 'true',
        PAIA_DAIA_DEPARTMENT_CONTENT: ' Stadtbibliothek Musterstadt ',
        PAIA_DAIA_DEPARTMENT_ID: 'http://lobid.org/organisations/DE-7',
      },
    });
    expect(config.daia).toMatchObject({
      maxIds: 20,
      idsPerMinutePerAddress: 300,
      exemptClients: ['192.0.2.10', '2001:db8::/48'],
      poolShare: 0.25,
      requestUrl: 'https://opac.lib.example.org/hold?barcode={barcode}',
      shelfRequests: true,
      department: { content: 'Stadtbibliothek Musterstadt', id: 'http://lobid.org/organisations/DE-7' },
    });
    expect(loadConfig({ env: { PAIA_DAIA_MAX_IDS: 'null' } }).daia.maxIds).toBeNull();
    expect(() => loadConfig({ env: { PAIA_DAIA_POOL_SHARE: '50%' } })).toThrow(
      /daia\.poolShare.*must be a fraction between 0 and 1.*PAIA_DAIA_POOL_SHARE/s,
    );
  });

  it.each([
    ['true', true],
    ['false', false],
    ['1', true],
    ['0', false],
    ['yes', true],
    ['no', false],
    ['YES', true],
    ['False', false],
  ])('parse the boolean %s', (text, value) => {
    expect(loadConfig({ env: { PAIA_HTTP_TRUSTED_PROXY: text } }).http.trustedProxy).toBe(value);
    expect(loadConfig({ env: { PAIA_SIP2_ERROR_DETECTION: text } }).sip2.errorDetection).toBe(value);
  });

  it('parse null for nullable settings, and an empty value as null', () => {
    const file = tmp.write(
      'nullable.yaml',
      'sip2:\n  host: ils.example.org\n  pageSize: 20\n  charset: latin1\nhttp:\n  publicUrl: https://lib.example.org/paia\n',
    );
    const config = loadConfig({
      file,
      env: { PAIA_SIP2_HOST: 'null', PAIA_SIP2_PAGE_SIZE: 'NULL', PAIA_SIP2_CHARSET: 'null', PAIA_HTTP_PUBLIC_URL: '' },
    });
    expect(config.sip2.host).toBeNull();
    expect(config.sip2.pageSize).toBeNull();
    expect(config.sip2.charset).toBeNull();
    expect(config.http.publicUrl).toBeNull();
  });

  it('set nullable settings to values', () => {
    const config = loadConfig({
      env: {
        PAIA_SIP2_PAGE_SIZE: '25',
        PAIA_SIP2_CHARSET: 'utf-8',
        PAIA_PAIA_STORAGE_URI: 'https://lib.example.org/location/{location}',
      },
    });
    expect(config.sip2.pageSize).toBe(25);
    expect(config.sip2.charset).toBe('utf-8');
    expect(config.paia.storageUri).toBe('https://lib.example.org/location/{location}');
  });

  it('take enums and text; secrets exactly as given', () => {
    const config = loadConfig({
      env: {
        PAIA_LOG_LEVEL: 'debug',
        PAIA_PAIA_PATRON_ID: 'barcode',
        PAIA_SIP2_INSTITUTION: ' CPL ',
        PAIA_SIP2_TERMINAL_PASSWORD: ' pass word ',
      },
    });
    expect(config.log.level).toBe('debug');
    expect(config.sip2.institution).toBe('CPL');
    expect(config.sip2.terminal.password).toBe(' pass word ');
  });

  it('switch TLS sections on and off', () => {
    expect(loadConfig({ env: { PAIA_SIP2_TLS: 'true' } }).sip2.tls).toEqual({ rejectUnauthorized: true });
    expect(loadConfig({ env: { PAIA_SIP2_TLS_CA: CA } }).sip2.tls).toEqual({ ca: CA, rejectUnauthorized: true });
    expect(loadConfig({ env: { PAIA_HTTP_TLS_CERT: CERT, PAIA_HTTP_TLS_KEY: KEY } }).http.tls).toEqual({
      cert: CERT,
      key: KEY,
    });
    const off = tmp.write('tls-off.yaml', 'http:\n  tls: false\n');
    expect(loadConfig({ file: off, env: { PAIA_HTTP_TLS_CERT: CERT, PAIA_HTTP_TLS_KEY: KEY } }).http.tls).toEqual({
      cert: CERT,
      key: KEY,
    });
    const file = tmp.write('tls-on.yaml', `http:\n  tls:\n    cert: ${CERT}\n    key: ${KEY}\nsip2:\n  tls: {}\n`);
    expect(loadConfig({ file, env: {} }).http.tls).toEqual({ cert: CERT, key: KEY });
    const { config, warnings } = loadConfigWithWarnings({
      file,
      env: { PAIA_HTTP_TLS: 'null', PAIA_HTTP_TLS_CERT: CERT, PAIA_SIP2_TLS: 'false' },
    });
    expect(config.http.tls).toBeNull();
    expect(config.sip2.tls).toBeNull();
    expect(warnings).toEqual(['PAIA_HTTP_TLS_CERT is ignored because PAIA_HTTP_TLS switches http.tls off']);
  });

  it('report values that do not fit, naming the variable', () => {
    expect(problemAt({ env: { PAIA_SIP2_PORT: 'abc' } }, 'sip2.port')).toBe(
      'must be a TCP port between 1 and 65535 (got "abc", from PAIA_SIP2_PORT)',
    );
    expect(problemAt({ env: { PAIA_HTTP_TRUSTED_PROXY: 'maybe' } }, 'http.trustedProxy')).toBe(
      'must be true or false (in the environment also yes/no, 1/0, on/off) (got "maybe", from PAIA_HTTP_TRUSTED_PROXY)',
    );
    expect(problemAt({ env: { PAIA_SIP2_POOL_MAX: '' } }, 'sip2.pool.max')).toContain(
      '(got "", from PAIA_SIP2_POOL_MAX)',
    );
  });

  it('paia.expiresWhenUnknown: a real calendar date YYYY-MM-DD, or null', () => {
    const expiry = (value: string) => loadConfig({ env: { PAIA_PAIA_EXPIRES_WHEN_UNKNOWN: value } }).paia;
    expect(expiry('9999-12-31').expiresWhenUnknown).toBe('9999-12-31');
    expect(expiry('null').expiresWhenUnknown).toBeNull();
    expect(loadConfig({ env: {} }).paia.expiresWhenUnknown).toBeNull();
    for (const bad of ['2026-02-30', '31.12.9999', '99991231', '9999-12-31T00:00']) {
      expect(problemAt({ env: { PAIA_PAIA_EXPIRES_WHEN_UNKNOWN: bad } }, 'paia.expiresWhenUnknown'), bad).toBe(
        `must be a date YYYY-MM-DD such as 9999-12-31 (a real day), or null (got "${bad}", from PAIA_PAIA_EXPIRES_WHEN_UNKNOWN)`,
      );
    }
  });

  it('warn behind a trusted proxy without http.publicUrl, whose links would name the forwarded-to address', () => {
    const { warnings } = loadConfigWithWarnings({ env: { PAIA_HTTP_TRUSTED_PROXY: 'true' } });
    expect(warnings).toEqual([
      expect.stringMatching(/^http\.trustedProxy is true but http\.publicUrl is not set: .*set http\.publicUrl/),
    ]);
    const withUrl = loadConfigWithWarnings({
      env: { PAIA_HTTP_TRUSTED_PROXY: 'true', PAIA_HTTP_PUBLIC_URL: 'https://lib.example.org/paia' },
    });
    expect(withUrl.warnings).toEqual([]);
  });

  it('warn about unknown PAIA_* variables, with a suggestion, and ignore others', () => {
    const { warnings } = loadConfigWithWarnings({
      env: { PAIA_SIP2_HOTS: 'x', PAIA_WHATEVER: '1', HOME: '/root', PAIA: 'x' },
    });
    expect(warnings).toEqual([
      'PAIA_SIP2_HOTS is not a paia-sip2 setting and is ignored; did you mean PAIA_SIP2_HOST?',
      'PAIA_WHATEVER is not a paia-sip2 setting and is ignored',
    ]);
  });

  it("take a PAIA_* variable that a client's secretEnv names (docs/configuration.md's own example) as read, not unknown", () => {
    const client = { id: 'vufind', secretEnv: 'PAIA_CLIENT_VUFIND_SECRET', allowedAddresses: ['192.0.2.10'] };
    const secret = { PAIA_CLIENT_VUFIND_SECRET: 'a-secret-of-32-characters-000000' };
    const fromEnv = loadConfigWithWarnings({ env: { PAIA_AUTH_CLIENTS: JSON.stringify([client]), ...secret } });
    expect(fromEnv.warnings).toEqual([]);
    const file = tmp.write(
      'client-secret-env.yaml',
      'auth:\n  clients:\n    - id: vufind\n      secretEnv: PAIA_CLIENT_VUFIND_SECRET\n      allowedAddresses: ["192.0.2.10"]\n',
    );
    expect(loadConfigWithWarnings({ file, env: { ...secret, PAIA_CLIENT_OTHER_SECRET: 'x' } }).warnings).toEqual([
      'PAIA_CLIENT_OTHER_SECRET is not a paia-sip2 setting and is ignored',
    ]);
  });
});

describe('command-line flags (serve --workers N)', () => {
  const workers = (text: string) => [{ path: 'http.workers', flag: '--workers', text }];
  const redis = { PAIA_STATE_STORE: 'redis', PAIA_STATE_REDIS_URL: 'redis://127.0.0.1:6379' };

  it('win over the environment and the file', () => {
    const file = tmp.write(
      'workers.yaml',
      'http:\n  workers: 3\nstate:\n  store: redis\n  redis:\n    url: redis://127.0.0.1:6379\n',
    );
    expect(loadConfig({ file, env: {} }).http.workers).toBe(3);
    expect(loadConfig({ file, env: { PAIA_HTTP_WORKERS: '5' } }).http.workers).toBe(5);
    expect(loadConfig({ file, env: { PAIA_HTTP_WORKERS: '5' }, flags: workers('2') }).http.workers).toBe(2);
    expect(loadConfig({ env: redis, flags: workers(' 8 ') }).http.workers).toBe(8);
  });

  it('are reported by their name when the value does not fit', () => {
    expect(problemAt({ env: redis, flags: workers('many') }, 'http.workers')).toBe(
      'must be a whole number of worker processes between 1 and 64 (got "many", from --workers)',
    );
    expect(problemAt({ env: redis, flags: workers('0') }, 'http.workers')).toBe(
      'must be a whole number of worker processes between 1 and 64 (got 0, from --workers)',
    );
    expect(problemAt({ env: redis, flags: workers('1.5') }, 'http.workers')).toContain('(got 1.5, from --workers)');
  });
});

describe('PORT', () => {
  it('sets http.port', () => {
    expect(loadConfig({ env: { PORT: '3000' } }).http.port).toBe(3000);
    const file = tmp.write('port.yaml', 'http:\n  port: 8181\n');
    expect(loadConfig({ file, env: { PORT: '3000' } }).http.port).toBe(3000);
  });

  it('loses to PAIA_HTTP_PORT, with a warning', () => {
    const { config, warnings } = loadConfigWithWarnings({ env: { PORT: '3000', PAIA_HTTP_PORT: '4000' } });
    expect(config.http.port).toBe(4000);
    expect(warnings).toEqual(['PORT is ignored because PAIA_HTTP_PORT is set']);
  });

  it('is reported by name when wrong, and ignored when empty', () => {
    expect(problemAt({ env: { PORT: 'http' } }, 'http.port')).toContain('(got "http", from PORT)');
    expect(loadConfig({ env: { PORT: '' } }).http.port).toBe(8080);
  });
});

describe('relative paths', () => {
  it('in the file are read from the directory of the file, whatever the working directory', () => {
    const koha = readFileSync(fileURLToPath(new URL('../../../config/dialects/koha.yaml', import.meta.url)), 'utf8');
    tmp.write('rel/etc/tls/cert.pem', 'x');
    tmp.write('rel/etc/tls/key.pem', 'x');
    tmp.write('rel/etc/tls/ca.pem', 'x');
    tmp.write('rel/etc/dialects/mine.yaml', koha.replace('name: koha', 'name: mine'));
    const file = tmp.write(
      'rel/etc/paia.yaml',
      'http:\n  tls:\n    cert: tls/cert.pem\n    key: ./tls/key.pem\nsip2:\n  host: ils.example.org\n  dialect: dialects/mine.yaml\n  tls:\n    ca: tls/ca.pem\n',
    );
    const sub = { dir: join(tmp.dir, 'rel') };
    const config = loadConfig({ file, env: { ...ILS_ACCOUNT_ENV }, cwd: tmp.dir });
    expect(config.http.tls).toEqual({ cert: join(sub.dir, 'etc/tls/cert.pem'), key: join(sub.dir, 'etc/tls/key.pem') });
    expect(config.sip2.tls?.ca).toBe(join(sub.dir, 'etc/tls/ca.pem'));
    expect(config.sip2.dialect).toBe(join(sub.dir, 'etc/dialects/mine.yaml'));
  });

  it('in environment variables and --config are read from the working directory', () => {
    const file = tmp.write('conf/relative.yaml', 'log:\n  level: warn\n');
    const config = loadConfig({
      file: 'conf/relative.yaml',
      cwd: tmp.dir,
      env: { PAIA_HTTP_TLS_CERT: 'tls/server.pem', PAIA_HTTP_TLS_KEY: 'tls/server.key' },
    });
    expect(config.log.level).toBe('warn');
    expect(config.http.tls).toEqual({ cert: CERT, key: KEY });
    expect(file).toBe(join(tmp.dir, 'conf/relative.yaml'));
  });

  it('leave built-in dialect names alone', () => {
    expect(loadConfig({ env: { PAIA_SIP2_DIALECT: 'evergreen' } }).sip2.dialect).toBe('evergreen');
  });

  it("state.dir: from a file, the file's directory; from the environment, the working directory; by default, .paia-sip2 where the gateway runs (npm start: the package); off turns it off", () => {
    const file = tmp.write('state/etc/paia.yaml', 'state:\n  dir: ../var/sessions\n');
    expect(loadConfig({ file, env: {}, cwd: tmp.dir }).state.dir).toBe(join(tmp.dir, 'state/var/sessions'));
    expect(loadConfig({ env: { PAIA_STATE_DIR: 'data/state' }, cwd: tmp.dir }).state.dir).toBe(
      join(tmp.dir, 'data/state'),
    );
    const byDefault = loadConfig({ env: {} });
    expect(byDefault.state.dir).toBe('.paia-sip2');
    // What the store gets: the working directory's.
    expect(stateStoreSettings(byDefault).dir).toBe(join(process.cwd(), '.paia-sip2'));
    for (const off of ['off', 'false', 'null', '']) {
      expect(loadConfig({ env: { PAIA_STATE_DIR: off } }).state.dir, off).toBeNull();
      expect(stateStoreSettings(loadConfig({ env: { PAIA_STATE_DIR: off } })).dir, off).toBeNull();
    }
    const offInFile = tmp.write('state/off.yaml', 'state:\n  dir: false\n');
    expect(loadConfig({ file: offInFile, env: {} }).state.dir).toBeNull();
  });
});

describe('config/example.yaml', () => {
  const secrets = {
    PAIA_SIP2_TERMINAL_PASSWORD: 'terminal-password-from-env',
    PAIA_PAIA_PATRON_ID_SECRET: 'k8Qw3nZr7Lx2Vb5Tm9Hc4Jd6Fg1Ps0Ya',
  };
  const files = { PAIA_HTTP_TLS_CERT: CERT, PAIA_HTTP_TLS_KEY: KEY, PAIA_SIP2_TLS_CA: CA };

  it('validates once its TLS files exist and the secrets are set', () => {
    const { config, warnings } = loadConfigWithWarnings({ file: EXAMPLE_FILE, env: { ...secrets, ...files } });
    expect(warnings).toEqual([]);
    expect(config.sip2.host).toBe('koha-sip.lib.example.org');
    expect(config.sip2.dialect).toBe('koha');
    expect(config.sip2.tls).toEqual({ ca: CA, rejectUnauthorized: true });
    expect(config.http).toMatchObject({
      host: '0.0.0.0',
      port: 8443,
      basePath: '/paia',
      tls: { cert: CERT, key: KEY },
    });
    expect(config.paia.patronId).toBe('opaque');
    expect(config.paia.itemUri).toBe('https://lib.example.org/item/{barcode}');
    expect(config.sip2.terminal.password).toBe(secrets.PAIA_SIP2_TERMINAL_PASSWORD);
  });

  it('as copied is refused until its files and secrets are real', () => {
    const error = (() => {
      try {
        loadConfig({ file: EXAMPLE_FILE, env: {} });
      } catch (e) {
        return e as Error & { problems: { path: string }[] };
      }
      throw new Error('loaded');
    })();
    expect(error.problems.map((problem) => problem.path)).toEqual([
      'http.tls.cert',
      'http.tls.key',
      'sip2.tls.ca',
      'sip2.terminal.password',
      'paia.patronIdSecret',
    ]);
  });

  it('mentions every setting, with a comment', () => {
    const text = readFileSync(EXAMPLE_FILE, 'utf8');
    for (const setting of configSettings()) {
      const key = setting.path.split('.').at(-1) as string;
      expect(text, setting.path).toMatch(new RegExp(`^\\s*#?\\s*${key}:`, 'm'));
    }
    expect(text.split('\n').filter((line) => line.trimStart().startsWith('#')).length).toBeGreaterThan(60);
  });

  it('and default.yaml mention every setting too', () => {
    const text = readFileSync(DEFAULT_CONFIG_FILE, 'utf8');
    for (const setting of configSettings()) {
      if (setting.path.startsWith('sip2.tls.') || setting.path.startsWith('http.tls.')) continue;
      const key = setting.path.split('.').at(-1) as string;
      expect(text, setting.path).toMatch(new RegExp(`^\\s*#?\\s*${key}:`, 'm'));
    }
  });
});

describe('describeConfig', () => {
  it('summarises the demo', () => {
    const summary = describeConfig(loadConfig({ env: {} }));
    expect(summary).toMatchObject({
      http: { listen: 'http://127.0.0.1:8080', tls: false, workers: 1 },
      sip2: {
        ils: expect.stringContaining('embedded demo simulator'),
        dialect: 'generic',
        charset: 'cp850',
        institution: 'DEMO',
      },
      daia: {
        idsPerMinutePerAddress: 6000,
        requestUrl: '(the gateway URL)/daia?id={item}&format=json',
        shelfRequests: false,
        department: "(the ILS's library name)",
      },
      cache: {
        items: '10000 entries for 15 s',
        accounts: "a patron's reads shared for 5 s, up to 10000 patrons",
      },
      log: 'info',
    });
    const off = describeConfig(loadConfig({ env: { PAIA_CACHE_ACCOUNTS_ENABLED: 'false' } }));
    expect(off).toMatchObject({ cache: { accounts: 'off' } });
  });

  it('never contains a secret', () => {
    const env = {
      ...ILS_ACCOUNT_ENV,
      PAIA_SIP2_HOST: 'ils.example.org',
      PAIA_SIP2_TERMINAL_PASSWORD: 'hunter2-terminal',
      PAIA_PAIA_PATRON_ID: 'opaque',
      PAIA_PAIA_PATRON_ID_SECRET: 'a-very-long-secret-for-opaque-patron-ids',
      PAIA_SIP2_DIALECT: 'koha',
    };
    const config: Config = loadConfig({ env });
    const text = JSON.stringify(describeConfig(config));
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('a-very-long-secret');
    expect(JSON.parse(text)).toMatchObject({
      sip2: { ils: 'ils.example.org:6001', dialect: 'koha', charset: 'utf-8' },
      paia: { patronId: 'opaque' },
    });
  });
});

describe('auth and input-limit settings (issue 5)', () => {
  it('take environment overrides: numbers, flags, a comma-separated deny list', () => {
    const config = loadConfig({
      env: {
        PAIA_AUTH_REQUESTS_PER_MINUTE: '30',
        PAIA_AUTH_LOGOUT_ALL_SESSIONS: 'yes',
        PAIA_AUTH_MAX_LOGINS_PER_SECOND: '5',
        PAIA_AUTH_BRUTE_FORCE_LOCKOUT_MAX_MS: '60000',
        PAIA_AUTH_PASSWORD_POLICY_MIN_LENGTH: '8',
        PAIA_AUTH_PASSWORD_POLICY_DENY_LIST: ' hunter2, secret ,',
        PAIA_HTTP_MAX_HEADER_BYTES: '4096',
        PAIA_HTTP_MAX_URL_BYTES: '1024',
      },
    });
    expect(config.auth.requestsPerMinute).toBe(30);
    expect(config.auth.logoutAllSessions).toBe(true);
    expect(config.auth.maxLoginsPerSecond).toBe(5);
    expect(config.auth.bruteForce.lockoutMaxMs).toBe(60_000);
    expect(config.auth.passwordPolicy).toEqual({ minLength: 8, denyList: ['hunter2', 'secret'] });
    expect(config.http.maxHeaderBytes).toBe(4096);
    expect(config.http.maxUrlBytes).toBe(1024);
  });

  it('an empty deny list is allowed; wrong values say what they must be', () => {
    expect(
      loadConfig({ file: tmp.write('deny.yaml', 'auth:\n  passwordPolicy:\n    denyList: []\n'), env: {} }).auth
        .passwordPolicy.denyList,
    ).toEqual([]);
    const problems = (() => {
      try {
        loadConfig({
          file: tmp.write(
            'bad-auth.yaml',
            'auth:\n  requestsPerMinute: 0\n  passwordPolicy:\n    denyList: 5\n  bruteForce:\n    freeFailuresPerUser: x\n',
          ),
          env: {},
        });
      } catch (e) {
        return (e as { problems: { path: string; message: string }[] }).problems;
      }
      throw new Error('loaded');
    })();
    expect(problems.map((p) => p.path)).toEqual([
      'auth.requestsPerMinute',
      'auth.bruteForce.freeFailuresPerUser',
      'auth.passwordPolicy.denyList',
    ]);
    expect(problems[2]!.message).toMatch(/must be a list of passwords/);
  });

  it('withoutSettings drops every PAIA_ variable and PORT, nothing else', () => {
    expect(withoutSettings({ PAIA_SIP2_HOST: 'x', PORT: '1', PATH: '/bin', PAIA: 'kept', HOME: '/root' })).toEqual({
      PATH: '/bin',
      PAIA: 'kept',
      HOME: '/root',
    });
  });

  it('sip2.circuit: read from the environment; a first pause longer than the longest is refused', () => {
    const config = loadConfig({
      env: { PAIA_SIP2_CIRCUIT_FAILURE_THRESHOLD: '3', PAIA_SIP2_CIRCUIT_COOL_DOWN_MS: '2000' },
    });
    expect(config.sip2.circuit).toEqual({ failureThreshold: 3, coolDownMs: 2000, maxCoolDownMs: 30_000 });
    let problems: Array<{ path: string; message: string }> = [];
    try {
      loadConfig({ env: { PAIA_SIP2_CIRCUIT_COOL_DOWN_MS: '60000', PAIA_SIP2_CIRCUIT_MAX_COOL_DOWN_MS: '5000' } });
    } catch (e) {
      problems = (e as { problems: Array<{ path: string; message: string }> }).problems;
    }
    expect(problems.map((p) => p.path)).toEqual(['sip2.circuit.coolDownMs']);
    expect(problems[0]!.message).toMatch(/must not be larger than sip2.circuit.maxCoolDownMs \(5000\)/);
  });

  it('auth.allowedClients: IPv4 and IPv6 addresses and CIDR blocks, comma-separated in the environment; a bad entry is named', () => {
    expect(
      loadConfig({ env: { PAIA_AUTH_ALLOWED_CLIENTS: ' 10.0.0.0/8, 192.0.2.10 ,2001:db8::/32,::1,' } }).auth
        .allowedClients,
    ).toEqual(['10.0.0.0/8', '192.0.2.10', '2001:db8::/32', '::1']);
    expect(
      loadConfig({ file: tmp.write('clients.yaml', 'auth:\n  allowedClients: ["127.0.0.1/32"]\n'), env: {} }).auth
        .allowedClients,
    ).toEqual(['127.0.0.1/32']);
    for (const [value, pattern] of [
      ['10.0.0.0/8,intranet', /"intranet", which is not an IP address or CIDR block/],
      ['10.0.0.0/33', /"10\.0\.0\.0\/33", which has a prefix length that is not a whole number between 0 and 32/],
      ['2001:db8::/129', /between 0 and 128/],
      ['10.0.0.0/x', /prefix length/],
    ] as const) {
      const problems = (() => {
        try {
          loadConfig({ env: { PAIA_AUTH_ALLOWED_CLIENTS: value } });
        } catch (e) {
          return (e as { problems: { path: string; message: string }[] }).problems;
        }
        throw new Error(`loaded ${value}`);
      })();
      expect(problems.map((p) => p.path)).toEqual(['auth.allowedClients']);
      expect(problems[0]!.message).toMatch(pattern);
    }
    const wrongType = (() => {
      try {
        loadConfig({ file: tmp.write('clients-bad.yaml', 'auth:\n  allowedClients: 5\n'), env: {} });
      } catch (e) {
        return (e as { problems: { path: string; message: string }[] }).problems;
      }
      throw new Error('loaded');
    })();
    expect(wrongType[0]!.message).toMatch(/must be a list of IP addresses or CIDR blocks/);
  });
});

describe('http.corsOrigins (issue 5)', () => {
  function problemsOf(options: { file?: string; env: NodeJS.ProcessEnv }): { path: string; message: string }[] {
    try {
      loadConfig(options);
    } catch (e) {
      return (e as { problems: { path: string; message: string }[] }).problems;
    }
    throw new Error('loaded');
  }

  it('defaults to ["*"] and takes a comma-separated list from the environment, normalised as browsers send origins', () => {
    expect(loadConfig({ env: {} }).http.corsOrigins).toEqual(['*']);
    const config = loadConfig({
      env: {
        PAIA_HTTP_CORS_ORIGINS: ' https://OPAC.Lib.example.org/ , http://localhost:3000,https://x.example.org:443,',
      },
    });
    expect(config.http.corsOrigins).toEqual([
      'https://opac.lib.example.org',
      'http://localhost:3000',
      'https://x.example.org',
    ]);
    expect(describeConfig(config)).toMatchObject({ http: { corsOrigins: config.http.corsOrigins } });
  });

  it('takes a list from the file; [] allows no origin', () => {
    const file = tmp.write(
      'cors.yaml',
      'http:\n  corsOrigins: ["https://opac.lib.example.org", "http://[::1]:8081"]\n',
    );
    expect(loadConfig({ file, env: {} }).http.corsOrigins).toEqual([
      'https://opac.lib.example.org',
      'http://[::1]:8081',
    ]);
    expect(
      loadConfig({ file: tmp.write('cors-none.yaml', 'http:\n  corsOrigins: []\n'), env: {} }).http.corsOrigins,
    ).toEqual([]);
  });

  it.each([
    ['https://opac.example.org/catalog', 'is not an origin: give scheme://host[:port] without a path'],
    ['https://opac.example.org?x=1', 'is not an origin: give scheme://host[:port] without a path, query or fragment'],
    ['opac.example.org', 'is not an origin: give the scheme and host'],
    ['ftp://opac.example.org', 'is not an http(s) origin'],
    ['https://user:pw@opac.example.org', 'must not contain a user name or password'],
  ])('names the bad entry %s', (entry, message) => {
    const problems = problemsOf({ env: { PAIA_HTTP_CORS_ORIGINS: `https://ok.example.org,${entry}` } });
    expect(problems.map((p) => p.path)).toEqual(['http.corsOrigins']);
    expect(problems[0]!.message).toContain(`has ${JSON.stringify(entry)}, which ${message}`);
  });

  it('wants "*" alone, and a list (a single string is a list of one, as in the environment)', () => {
    expect(
      loadConfig({ file: tmp.write('cors-one.yaml', 'http:\n  corsOrigins: https://opac.example.org\n'), env: {} }).http
        .corsOrigins,
    ).toEqual(['https://opac.example.org']);
    expect(problemsOf({ env: { PAIA_HTTP_CORS_ORIGINS: '*,https://opac.example.org' } })[0]!.message).toContain(
      'must be ["*"] alone (any origin) or a list of origins without "*"',
    );
    const problems = problemsOf({ file: tmp.write('cors-bad.yaml', 'http:\n  corsOrigins: 5\n'), env: {} });
    expect(problems.map((p) => p.path)).toEqual(['http.corsOrigins']);
    expect(problems[0]!.message).toContain(
      'must be ["*"] (any origin) or a list of origins, e.g. ["https://opac.lib.example.org"]',
    );
  });
});
