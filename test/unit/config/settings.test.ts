import { describe, expect, it } from 'vitest';
import {
  type Config,
  configSchema,
  configSettings,
  envNameOf,
  FILE_PATHS,
  type HttpTlsConfig,
  loadConfig,
  loadConfigWithWarnings,
  type Setting,
  type Sip2TlsConfig,
} from '../../../src/config/index.js';
import { configError, tempDir } from './helpers.js';

/**
 * The settings table (src/config/settings.ts) and the schema must name the
 * same settings. The schema's settings are read off what it produces, not off
 * zod's internals: the defaults, with the optional TLS sections switched on
 * and every optional or nullable setting given a value.
 */

const tmp = tempDir();
const CERT = tmp.write('tls/cert.pem', 'x');
const KEY = tmp.write('tls/key.pem', 'x');
const CA = tmp.write('tls/ca.pem', 'x');
const RECORDS = tmp.write('records.csv', 'biblionumber,barcode\n1234,it-0001\n');

// `satisfies Required<...>`: a setting added to a TLS section fails type-checking here until it is given a value.
const httpTls = { cert: CERT, key: KEY } satisfies Required<HttpTlsConfig>;
const sip2Tls = {
  ca: CA,
  cert: CERT,
  key: KEY,
  rejectUnauthorized: false,
  servername: 'ils.example.org',
} satisfies Required<Sip2TlsConfig>;
/** Values for the settings whose default is null. */
const notNull = {
  http: { publicUrl: 'https://lib.example.org/paia', tls: httpTls },
  sip2: {
    host: 'ils.example.org',
    tls: sip2Tls,
    charset: 'latin1',
    terminal: { user: 'paia-gateway', password: 'gateway-secret', location: 'CPL' },
    institution: 'CPL',
    pageSize: 20,
    maintenance: [{ days: ['sat', 'sun'], from: '23:00', to: '01:30', timeZone: 'Europe/Berlin' }],
  },
  paia: {
    itemUri: 'https://lib.example.org/item/{barcode}',
    editionUri: 'https://lib.example.org/title/{title}',
    storageUri: 'https://lib.example.org/location/{location}',
    patronTypeUri: 'https://lib.example.org/type/{class}',
    patronIdSecret: 'x'.repeat(40),
    expiresWhenUnknown: '9999-12-31',
  },
  auth: {
    allowedClientLimits: { freeFailuresPerAddress: 100, loginsPerSecond: 50 },
    clients: [
      {
        id: 'vufind',
        secretHash: 'scrypt$32768$8$1$v96IYWJXlyU-KmUDXtqwcA$9UdJ6iytiAK23UE618JOPHwU_YDbGPpH3Pfvt2QOJK0',
        allowedAddresses: ['192.0.2.10'],
      },
    ],
  },
  daia: {
    maxIds: 20,
    requestUrl: 'https://opac.lib.example.org/hold?item={item}',
    department: { content: 'Stadtbibliothek', id: 'http://lobid.org/organisations/DE-7' },
    records: {
      file: RECORDS,
      http: {
        url: 'https://koha.example.org/api/v1/biblios/{record}/items',
        headers: [{ name: 'x-api-key', value: 'key' }],
      },
    },
  },
  state: { store: 'redis', dir: '/var/lib/paia-sip2', redis: { url: 'redis://127.0.0.1:6379', tlsCa: CA } },
};

/**
 * The other form of state.redis (url and the Sentinel settings exclude each other): its settings that are null in
 * `full` are given values here, and `full` is checked in both forms.
 */
const sentinelForm = {
  ...notNull,
  state: {
    store: 'redis',
    dir: '/var/lib/paia-sip2',
    redis: {
      sentinels: ['10.0.0.1:26379', '[2001:db8::1]'],
      sentinelMaster: 'mymaster',
      password: 'redis-secret',
      sentinelPassword: 'sentinel-secret',
      tls: true,
      tlsCa: CA,
    },
  },
};

const defaults: unknown = configSchema.parse({});
const full: unknown = configSchema.parse(notNull);
const fullSentinel: unknown = configSchema.parse(sentinelForm);

function isSection(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** [dotted path, value] of every leaf (a value that is not a section), in the schema's order. */
function leavesOf(value: unknown, path: string[] = []): [string, unknown][] {
  if (!isSection(value)) return [[path.join('.'), value]];
  return Object.entries(value).flatMap(([key, child]) => leavesOf(child, [...path, key]));
}

function valueAt(value: unknown, dotted: string): unknown {
  return dotted.split('.').reduce<unknown>((current, key) => (isSection(current) ? current[key] : undefined), value);
}

/** A mapping with one value set at a dotted path. */
function withValueAt(dotted: string, value: unknown): Record<string, unknown> {
  return dotted
    .split('.')
    .reverse()
    .reduce<Record<string, unknown>>((inner, key, index) => ({ [key]: index === 0 ? value : inner }), {});
}

const settings = configSettings();
const leafSettings = settings.filter((setting) => setting.kind !== 'section');
const sectionSettings = settings.filter((setting) => setting.kind === 'section');

describe('the settings table and the schema', () => {
  it('name the same settings, in the same order, each once', () => {
    // The libraries section repeats sections per library: no setting, no variable of its own.
    const schemaLeaves = leavesOf(full)
      .map(([path]) => path)
      .filter((path) => path !== 'libraries');
    expect(schemaLeaves.length).toBeGreaterThan(60);
    expect(leafSettings.map((setting) => setting.path)).toEqual(schemaLeaves);
    expect(new Set(settings.map((setting) => setting.path)).size).toBe(settings.length);
  });

  it('name the same optional sections: null by default, sections once switched on', () => {
    const optional = leavesOf(defaults)
      .filter(([path, value]) => value === null && isSection(valueAt(full, path)))
      .map(([path]) => path);
    expect(optional).toEqual(['http.tls', 'sip2.tls']);
    expect(sectionSettings.map((setting) => setting.path)).toEqual(optional);
    for (const section of sectionSettings) {
      // Right before its own settings, so that problems inside it are listed where it is.
      const next = settings[settings.indexOf(section) + 1] as Setting;
      expect(next.path.startsWith(`${section.path}.`), section.path).toBe(true);
    }
  });

  it('give each setting the variable envNameOf names, and no variable twice', () => {
    for (const setting of settings) expect(setting.env, setting.path).toBe(envNameOf(setting.path));
    expect(new Set(settings.map((setting) => setting.env)).size).toBe(settings.length);
  });

  it('read each variable as the kind of value the schema produces there', () => {
    const fits: Record<Setting['kind'], (value: unknown) => boolean> = {
      integer: (value) => Number.isInteger(value),
      number: (value) => typeof value === 'number' && Number.isFinite(value),
      boolean: (value) => typeof value === 'boolean',
      string: (value) => typeof value === 'string',
      enum: (value) => typeof value === 'string',
      list: (value) => Array.isArray(value),
      section: isSection,
      json: (value) => Array.isArray(value) && value.every(isSection),
    };
    for (const setting of settings) {
      const value = valueAt(full, setting.path) ?? valueAt(fullSentinel, setting.path);
      expect(fits[setting.kind](value), `${setting.path} as ${setting.kind}`).toBe(true);
    }
  });

  it('mark a setting nullable exactly when the schema accepts null for it', () => {
    for (const setting of settings) {
      const result = configSchema.safeParse(withValueAt(setting.path, null));
      const refused = !result.success && result.error.issues.some((issue) => issue.path.join('.') === setting.path);
      expect(refused, setting.path).toBe(!setting.nullable);
    }
  });

  it('mark the secrets and the file paths', () => {
    expect(settings.filter((setting) => setting.secret).map((setting) => setting.path)).toEqual([
      'sip2.terminal.password',
      'paia.patronIdSecret',
      'daia.records.http.headers',
      'state.redis.url',
      'state.redis.password',
      'state.redis.sentinelPassword',
    ]);
    expect(FILE_PATHS).toEqual([
      'http.tls.cert',
      'http.tls.key',
      'sip2.tls.ca',
      'sip2.tls.cert',
      'sip2.tls.key',
      'daia.records.file',
      'state.redis.tlsCa',
    ]);
  });
});

describe('every variable of the table', () => {
  /** Settings that take any text, "|" included: each has a test of its own below. */
  const FREE_TEXT = [
    'auth.passwordPolicy.denyList',
    'daia.department.content',
    'state.redis.password',
    'state.redis.sentinelPassword',
  ];

  /** How a sysadmin writes the value in the environment. */
  function asText(value: unknown): string {
    if (Array.isArray(value) && value.some(isSection)) return JSON.stringify(value);
    if (Array.isArray(value)) return value.join(',');
    if (isSection(value)) return 'true';
    return String(value);
  }

  it.each([
    ['with state.redis.url', full],
    ['with Redis Sentinel', fullSentinel],
  ])("written out from the schema's own values (%s), loads back to the same configuration", (_, values) => {
    const env = Object.fromEntries(settings.map((setting) => [setting.env, asText(valueAt(values, setting.path))]));
    const { config, warnings } = loadConfigWithWarnings({ env });
    expect(config).toEqual(values);
    expect(warnings.filter((warning) => warning.includes('is ignored'))).toEqual([]);
  });

  it.each(leafSettings.filter((setting) => !FREE_TEXT.includes(setting.path)).map((setting) => [setting.env, setting]))(
    '%s reaches its setting: a value the schema refuses is reported there, naming the variable',
    (_, setting) => {
      // "|" fits no setting but a directory's path (a line break fits none); a patron id secret is checked only with opaque ids.
      const env = {
        [setting.env]: setting.path === 'state.dir' ? 'state\ndir' : '|',
        ...(setting.path === 'paia.patronIdSecret' ? { PAIA_PAIA_PATRON_ID: 'opaque' } : {}),
      };
      const problem = configError({ env }).problems.find((entry) => entry.path === setting.path);
      expect(problem?.message).toMatch(new RegExp(`from ${setting.env}\\)$`));
    },
  );

  it('PAIA_AUTH_PASSWORD_POLICY_DENY_LIST (any list of passwords is valid) reaches its setting', () => {
    expect(
      loadConfig({ env: { PAIA_AUTH_PASSWORD_POLICY_DENY_LIST: 'hunter2, letmein2' } }).auth.passwordPolicy.denyList,
    ).toEqual(['hunter2', 'letmein2']);
  });

  it('PAIA_STATE_REDIS_PASSWORD and PAIA_STATE_REDIS_SENTINEL_PASSWORD (any text is a password) reach their settings', () => {
    const env = {
      PAIA_STATE_STORE: 'redis',
      PAIA_STATE_REDIS_SENTINELS: '127.0.0.1',
      PAIA_STATE_REDIS_SENTINEL_MASTER: 'mymaster',
      PAIA_STATE_REDIS_PASSWORD: ' a|b ',
      PAIA_STATE_REDIS_SENTINEL_PASSWORD: 'c|d',
    };
    const { redis } = loadConfig({ env }).state;
    expect([redis.password, redis.sentinelPassword]).toEqual([' a|b ', 'c|d']);
  });

  it('PAIA_DAIA_DEPARTMENT_CONTENT (any name up to 200 characters) reaches its setting', () => {
    expect(loadConfig({ env: { PAIA_DAIA_DEPARTMENT_CONTENT: 'Bibliothek | Nord' } }).daia.department.content).toBe(
      'Bibliothek | Nord',
    );
    const problem = configError({ env: { PAIA_DAIA_DEPARTMENT_CONTENT: 'x'.repeat(201) } }).problems.find(
      (entry) => entry.path === 'daia.department.content',
    );
    expect(problem?.message).toMatch(/from PAIA_DAIA_DEPARTMENT_CONTENT\)$/);
  });
});

describe('Config', () => {
  it('is readonly all the way down, as the loaded configuration is frozen', () => {
    const config: Config = loadConfig({ env: {} });
    expect(() => {
      // @ts-expect-error lists are readonly
      config.http.corsOrigins.push('https://evil.example.org');
    }).toThrow(TypeError);
    expect(() => {
      // @ts-expect-error nested settings are readonly
      config.auth.bruteForce.lockoutMaxMs = 1;
    }).toThrow(TypeError);
    expect(config.http.corsOrigins).toEqual(['*']);
  });
});
