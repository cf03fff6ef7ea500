import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_CONFIG_FILE, loadConfig, loadConfigWithWarnings } from '../../../src/config/index.js';
import { BUILTIN_DIALECTS_TEXT } from '../../../src/sip2/dialect.js';
import { configError, ILS_ACCOUNT_ENV, problemAt, problemLines, tempDir } from './helpers.js';

const tmp = tempDir();
const CERT = tmp.write('tls/server.pem', 'x');
const KEY = tmp.write('tls/server.key', 'x');
let counter = 0;

/** Writes a config file and returns the load options for it (no environment). */
function yaml(text: string, env: NodeJS.ProcessEnv = {}) {
  counter += 1;
  return { file: tmp.write(`c${counter}.yaml`, text), env };
}

describe('values from the file', () => {
  it('name the path, what it must be, what was found and the line', () => {
    const options = yaml('# a comment\nhttp:\n  port: 70000\n');
    expect(problemAt(options, 'http.port')).toBe(
      `must be a TCP port between 1 and 65535 (0 picks a free port, for tests) (got 70000, at ${options.file}:3)`,
    );
  });

  it('say to drop the quotes around a number and to quote text that YAML read as a number', () => {
    expect(problemAt(yaml('sip2:\n  port: "6001"\n'), 'sip2.port')).toContain(
      'must be a TCP port between 1 and 65535; write the number without quotes (got "6001"',
    );
    expect(problemAt(yaml('sip2:\n  institution: 0042\n'), 'sip2.institution')).toContain(
      'must be the SIP2 institution id; put the value in quotes (got 42',
    );
  });

  it.each([
    ['http:\n  host: "bad host!"', 'http.host', 'must be a host name or IP address to listen on'],
    ['http:\n  basePath: paia', 'http.basePath', 'must be empty or a URL path starting with "/", e.g. "/paia"'],
    ['http:\n  publicUrl: ftp://lib.example.org/paia', 'http.publicUrl', 'must be an absolute http(s) URL'],
    ['http:\n  publicUrl: /paia', 'http.publicUrl', 'e.g. "https://lib.example.org/paia", or null'],
    [
      'http:\n  publicUrl: "https://lib.example.org/paia?"',
      'http.publicUrl',
      'without user name, password, query ("?")',
    ],
    ['http:\n  publicUrl: "https://lib.example.org/paia#"', 'http.publicUrl', 'or fragment ("#")'],
    ['http:\n  publicUrl: "https://user:pw@lib.example.org/paia"', 'http.publicUrl', 'without user name, password'],
    ['http:\n  trustedProxy: yes', 'http.trustedProxy', 'must be true or false (got "yes"'],
    ['http:\n  maxBodyBytes: 10', 'http.maxBodyBytes', 'must be a size in bytes between 1024 and 16777216 (got 10'],
    ['sip2:\n  host: tcp://ils.example.org', 'sip2.host', 'without a scheme'],
    ['sip2:\n  host: ils.example.org:6001', 'sip2.host', 'give the host name alone and the port in its own setting'],
    ['sip2:\n  port: 0', 'sip2.port', 'must be a TCP port between 1 and 65535 (got 0'],
    [
      'sip2:\n  charset: utf8',
      'sip2.charset',
      'must be cp850, latin1 or utf-8, or null for the dialect\'s charset (got "utf8"',
    ],
    ['sip2:\n  errorDetection: "off"', 'sip2.errorDetection', 'must be true or false'],
    ['sip2:\n  terminal:\n    user: ""', 'sip2.terminal.user', 'must be the SIP2 terminal login name (got ""'],
    ['sip2:\n  terminal:\n    location: "A|B"', 'sip2.terminal.location', 'without "|", line breaks or NUL characters'],
    ['sip2:\n  institution: ""', 'sip2.institution', 'must be the SIP2 institution id'],
    ['sip2:\n  pool:\n    max: 0', 'sip2.pool.max', 'must be a whole number of connections between 1 and 100'],
    [
      'sip2:\n  pool:\n    min: 6',
      'sip2.pool.min',
      'must not be larger than sip2.pool.max (4): lower it or raise sip2.pool.max (got 6',
    ],
    [
      'sip2:\n  pool:\n    acquireTimeoutMs: -5',
      'sip2.pool.acquireTimeoutMs',
      'must be milliseconds between 1 and 600000',
    ],
    [
      'sip2:\n  pool:\n    keepaliveMs: 20',
      'sip2.pool.keepaliveMs',
      'must be 0 (off) or milliseconds between 1000 and 86400000 (e.g. 20000 for 20 s) (got 20',
    ],
    ['sip2:\n  timeouts:\n    responseMs: 0', 'sip2.timeouts.responseMs', 'must be milliseconds between 1 and 600000'],
    ['sip2:\n  maxResends: 99', 'sip2.maxResends', 'must be a whole number between 0 and 10'],
    ['sip2:\n  pageSize: 0', 'sip2.pageSize', "or null for the dialect's page size"],
    [
      'sip2:\n  currency: eur',
      'sip2.currency',
      'must be a three-letter ISO 4217 currency code in capitals, e.g. EUR or USD (got "eur"',
    ],
    ['sip2:\n  tls:\n    rejectUnauthorized: nope', 'sip2.tls.rejectUnauthorized', 'must be true or false'],
    ['sip2:\n  tls:\n    servername: "a b"', 'sip2.tls.servername', 'must be the host name in the ILS certificate'],
    [
      'paia:\n  itemUri: https://lib.example.org/item/',
      'paia.itemUri',
      'must contain {barcode} exactly once, e.g. "https://lib.example.org/item/{barcode}"',
    ],
    [
      'paia:\n  itemUri: /item/{barcode}',
      'paia.itemUri',
      'must be an absolute URI (with a scheme like https:) once {barcode} is filled in',
    ],
    ['paia:\n  itemUri: https://x.org/{barcode}/{barcode}', 'paia.itemUri', 'exactly once'],
    [
      'paia:\n  editionUri: https://x.org/title/{id}',
      'paia.editionUri',
      'has the unknown placeholder {id}: only {title} is filled in',
    ],
    ['paia:\n  storageUri: https://x.org/location', 'paia.storageUri', 'must contain {location} exactly once'],
    ['paia:\n  patronTypeUri: "type {class}"', 'paia.patronTypeUri', 'must not contain spaces'],
    ['paia:\n  patronId: hashed', 'paia.patronId', 'must be "barcode" or "opaque" (got "hashed"'],
    ['paia:\n  maxDocs: 0', 'paia.maxDocs', 'must be a whole number between 1 and 1000'],
    ['daia:\n  maxIds: 0', 'daia.maxIds', 'must be a whole number between 1 and 1000, or null for paia.maxDocs'],
    ['daia:\n  idsPerMinutePerAddress: 0', 'daia.idsPerMinutePerAddress', 'must be a whole number between 1 and'],
    ['daia:\n  idsPerMinutePerAddress: 2.5', 'daia.idsPerMinutePerAddress', 'must be a whole number between 1 and'],
    ['daia:\n  exemptClients: ["10.0.0.0/33"]', 'daia.exemptClients', 'has "10.0.0.0/33", which has a prefix length'],
    [
      'daia:\n  poolShare: 0',
      'daia.poolShare',
      'must be a fraction between 0 and 1, e.g. 0.5 for half of sip2.pool.max',
    ],
    ['daia:\n  poolShare: 1.5', 'daia.poolShare', 'must be a fraction between 0 and 1'],
    ['daia:\n  poolShare: half', 'daia.poolShare', 'for half of sip2.pool.max (got "half"'],
    [
      'daia:\n  requestUrl: https://opac.example.org/hold',
      'daia.requestUrl',
      'must contain {item} or {barcode}, so that the link names the copy, e.g. "https://opac.lib.example.org/hold?item={item}"',
    ],
    [
      'daia:\n  requestUrl: https://opac.example.org/hold?patron={patron}',
      'daia.requestUrl',
      'has the unknown placeholder {patron}: only {item} and {barcode} are filled in',
    ],
    ['daia:\n  requestUrl: "urn:hold:{barcode}"', 'daia.requestUrl', 'must be an http: or https: URL once'],
    ['daia:\n  requestUrl: "/hold/{barcode}"', 'daia.requestUrl', 'must be an http: or https: URL once'],
    ['daia:\n  shelfRequests: yes please', 'daia.shelfRequests', 'must be true or false'],
    ['daia:\n  department:\n    content: ""', 'daia.department.content', 'must be the name of the library'],
    ['daia:\n  department:\n    id: DE-7', 'daia.department.id', 'must be an absolute URI, e.g. "http://lobid.org/'],
    [
      'auth:\n  tokenLifetimeMs: 900',
      'auth.tokenLifetimeMs',
      'must be milliseconds between 1000 and 2592000000 (e.g. 3600000 for 3600 s) (got 900',
    ],
    ['auth:\n  maxSessions: many', 'auth.maxSessions', 'must be a whole number between 1 and 10000000 (got "many"'],
    [
      'log:\n  level: verbose',
      'log.level',
      'must be one of fatal, error, warn, info, debug, trace, silent (got "verbose"',
    ],
    ['demo:\n  dialect: sierra', 'demo.dialect', `must be one of ${BUILTIN_DIALECTS_TEXT}`],
    ['demo:\n  sip2Port: -1', 'demo.sip2Port', 'must be a TCP port between 0 (a free one) and 65535'],
  ])('%j -> %s', (text, path, expected) => {
    expect(problemAt(yaml(`${text}\n`), path)).toContain(expected);
  });

  it('accept what they should', () => {
    const config = loadConfig(
      yaml(
        'http:\n  basePath: /paia/\n  publicUrl: https://lib.example.org/paia/\n  port: 0\n  host: "::1"\n  tls: false\n' +
          'sip2:\n  host: 192.0.2.10\n  tls: true\n  terminal:\n    location: ""\n    password: ""\n' +
          'paia:\n  itemUri: urn:barcode:{barcode}\n  storageUri: https://lib.example.org/location/{location}\n',
        {
          PAIA_SIP2_TERMINAL_USER: 'gw',
          PAIA_SIP2_INSTITUTION: 'CPL',
          PAIA_PAIA_EDITION_URI: 'https://lib.example.org/title/{title}',
        },
      ),
    );
    expect(config.http).toMatchObject({
      basePath: '/paia',
      publicUrl: 'https://lib.example.org/paia',
      port: 0,
      host: '::1',
      tls: null,
    });
    expect(config.sip2).toMatchObject({
      host: '192.0.2.10',
      tls: { rejectUnauthorized: true },
      terminal: { location: '', password: '' },
    });
    expect(config.paia.itemUri).toBe('urn:barcode:{barcode}');
  });
});

describe('rules across settings', () => {
  it('plain HTTP off loopback needs TLS or a trusted proxy', () => {
    expect(problemAt(yaml('http:\n  host: 0.0.0.0\n'), 'http.tls')).toContain(
      'is required because http.host ("0.0.0.0") is not a loopback address: set http.tls.cert and http.tls.key, or set http.trustedProxy to true',
    );
    expect(
      loadConfig(yaml('http:\n  host: 0.0.0.0\n  trustedProxy: true\n  publicUrl: https://lib.example.org/paia\n')).http
        .host,
    ).toBe('0.0.0.0');
    const publicUrl = '  publicUrl: https://lib.example.org/paia\n';
    expect(
      loadConfig(yaml(`http:\n  host: 0.0.0.0\n${publicUrl}  tls:\n    cert: ${CERT}\n    key: ${KEY}\n`)).http.tls,
    ).toEqual({
      cert: CERT,
      key: KEY,
    });
    expect(loadConfig(yaml('http:\n  host: localhost\n')).http.tls).toBeNull();
  });

  it('HTTP TLS needs both files', () => {
    const options = yaml(`http:\n  tls:\n    cert: ${CERT}\n`);
    expect(problemAt(options, 'http.tls.key')).toBe(
      `must be the path of the PEM private key file of http.tls.cert (not set, section at ${options.file}:2)`,
    );
    expect(problemAt(yaml('http:\n  tls: on\n'), 'http.tls')).toContain(
      'must be a section with "cert" and "key" (PEM file paths), or null to serve plain HTTP (got "on"',
    );
  });

  it('a SIP2 client certificate needs its key and the other way round', () => {
    expect(problemAt(yaml(`sip2:\n  tls:\n    cert: ${CERT}\n`), 'sip2.tls.key')).toContain(
      "is required when sip2.tls.cert is set: the path of the client certificate's PEM private key",
    );
    expect(problemAt(yaml(`sip2:\n  tls:\n    key: ${KEY}\n`), 'sip2.tls.cert')).toContain(
      'is required when sip2.tls.key is set',
    );
  });

  it('opaque patron ids need a secret of at least 32 characters', () => {
    const options = yaml('paia:\n  patronId: opaque\n');
    expect(problemAt(options, 'paia.patronIdSecret')).toBe(
      `is required when paia.patronId is "opaque" (at least 32 characters): generate one with \`openssl rand -base64 48\` and set it in paia.patronIdSecret or PAIA_PAIA_PATRON_ID_SECRET (value hidden, section at ${options.file}:1)`,
    );
    expect(problemAt(yaml('paia:\n  patronId: opaque\n  patronIdSecret: tooshort\n'), 'paia.patronIdSecret')).toContain(
      'must be at least 32 characters long when paia.patronId is "opaque"',
    );
    expect(
      problemAt(
        yaml('paia:\n  patronId: opaque\n  patronIdSecret: change-me-change-me-change-me-change-me\n'),
        'paia.patronIdSecret',
      ),
    ).toContain('is still the placeholder');
    const secret = 'x'.repeat(32);
    expect(loadConfig(yaml(`paia:\n  patronId: opaque\n  patronIdSecret: "${secret}"\n`)).paia.patronIdSecret).toBe(
      secret,
    );
  });

  it('several workers need the Redis store, wherever the number of workers comes from', () => {
    const reason =
      'must be 1 while state.store is "memory": each worker would keep its own sessions and counters, so a token issued by one worker would be unknown to the next; set state.store to "redis" (and state.redis.url or state.redis.sentinels) to run several workers';
    const options = yaml('http:\n  workers: 4\n');
    expect(problemAt(options, 'http.workers')).toBe(`${reason} (got 4, at ${options.file}:2)`);
    expect(problemAt({ env: { PAIA_HTTP_WORKERS: '2' } }, 'http.workers')).toBe(
      `${reason} (got 2, from PAIA_HTTP_WORKERS)`,
    );
    expect(
      problemAt({ env: {}, flags: [{ path: 'http.workers', flag: '--workers', text: '2' }] }, 'http.workers'),
    ).toBe(`${reason} (got 2, from --workers)`);
    const redis = { PAIA_STATE_STORE: 'redis', PAIA_STATE_REDIS_URL: 'redis://127.0.0.1:6379' };
    expect(loadConfig({ env: { ...redis, PAIA_HTTP_WORKERS: '4' } }).http.workers).toBe(4);
    expect(loadConfig({ env: {} }).http.workers).toBe(1);
  });

  it('the rule on workers stays quiet while the store setting itself is wrong', () => {
    expect(problemLines({ env: { PAIA_HTTP_WORKERS: '2', PAIA_STATE_STORE: 'memcached' } })).toEqual([
      'state.store: must be "memory" or "redis" (got "memcached", from PAIA_STATE_STORE)',
    ]);
  });

  it('a secret without opaque ids is no warning: it keys the hashes in the store; a Redis store without one is', () => {
    const secret = 'paia:\n  patronIdSecret: some-secret-value-that-is-long-enough\n';
    expect(loadConfigWithWarnings(yaml(secret)).warnings).toEqual([]);
    const redis = { PAIA_STATE_STORE: 'redis', PAIA_STATE_REDIS_URL: 'redis://127.0.0.1:6379' };
    expect(loadConfigWithWarnings(yaml(secret, redis)).warnings).toEqual([]);
    expect(loadConfigWithWarnings({ env: redis }).warnings).toEqual([
      expect.stringMatching(/^state\.store is "redis" and paia\.patronIdSecret is not set: .* plain SHA-256 hashes/),
    ]);
  });

  it('a slowdown as long as the whole call is a warning: a correct login from a slowed address would get 504', () => {
    const slow = { PAIA_AUTH_BRUTE_FORCE_MAX_SLOWDOWN_MS: '30000', PAIA_HTTP_REQUEST_TIMEOUT_MS: '30000' };
    expect(loadConfigWithWarnings({ env: slow }).warnings).toEqual([
      expect.stringMatching(/^auth\.bruteForce\.maxSlowdownMs \(30000 ms\) is not below http\.requestTimeoutMs/),
    ]);
    expect(loadConfigWithWarnings({ env: { ...slow, PAIA_HTTP_REQUEST_TIMEOUT_MS: '31000' } }).warnings).toEqual([]);
  });

  it('client secret hashes of different costs are a warning: the cheaper ones could be told apart by time', async () => {
    const { hashSecret } = await import('../../../src/auth/client-secret.js');
    const clients = async (costs: number[]) =>
      JSON.stringify(
        await Promise.all(
          costs.map(async (cost, index) => ({
            id: `c${index}`,
            secretHash: await hashSecret('a-client-secret-0123456789', cost),
            allowedAddresses: ['192.0.2.10'],
          })),
        ),
      );
    expect(loadConfigWithWarnings({ env: { PAIA_AUTH_CLIENTS: await clients([1024, 1024]) } }).warnings).toEqual([]);
    expect(loadConfigWithWarnings({ env: { PAIA_AUTH_CLIENTS: await clients([1024, 2048]) } }).warnings).toEqual([
      expect.stringMatching(/^auth\.clients: the secretHash values have different costs/),
    ]);
  });

  it('other risky settings are warnings', () => {
    const { warnings } = loadConfigWithWarnings(
      yaml(
        'sip2:\n  host: ils.example.org\n  tls:\n    rejectUnauthorized: false\n  timeouts:\n    responseMs: 5\n',
        ILS_ACCOUNT_ENV,
      ),
    );
    expect(warnings).toEqual([
      'sip2.tls.rejectUnauthorized is false: the ILS certificate is not checked, so anyone in between can read terminal and patron passwords',
      'sip2.timeouts.responseMs is 5 ms; it is in milliseconds, not seconds (e.g. 5000 for 5 s)',
    ]);
  });
});

describe('files', () => {
  it('TLS files must exist', () => {
    const options = yaml('http:\n  trustedProxy: true\n  tls:\n    cert: missing/cert.pem\n    key: missing/key.pem\n');
    expect(problemAt(options, 'http.tls.cert')).toBe(
      `cannot read ${tmp.dir}/missing/cert.pem: no such file; set it to the PEM certificate (chain) the gateway presents (absolute path, or relative to the config file) (at ${options.file}:4)`,
    );
    expect(problemAt(options, 'http.tls.key')).toContain(`cannot read ${tmp.dir}/missing/key.pem: no such file`);
  });

  it('TLS files must be files', () => {
    expect(problemAt(yaml(`sip2:\n  tls:\n    ca: ${tmp.dir}\n`), 'sip2.tls.ca')).toContain(
      `cannot read ${tmp.dir}: is a directory, not a file`,
    );
  });

  it('TLS files from the environment say so', () => {
    expect(problemAt({ env: { PAIA_SIP2_TLS_CA: 'nope.pem' }, cwd: tmp.dir }, 'sip2.tls.ca')).toContain(
      `cannot read ${tmp.dir}/nope.pem: no such file; set it to the PEM CA certificate(s) that signed the ILS certificate, or leave it out to use the system CAs (absolute path, or relative to the working directory) (from PAIA_SIP2_TLS_CA)`,
    );
  });

  it('the dialect must load', () => {
    expect(problemAt(yaml('sip2:\n  dialect: sierra\n'), 'sip2.dialect')).toContain(
      `dialect "sierra" not found (built-in dialects: ${BUILTIN_DIALECTS_TEXT}); use ${BUILTIN_DIALECTS_TEXT} or the path of a dialect YAML file`,
    );
    tmp.write('bad-dialect.yaml', 'name: bad\ncharset: ebcdic\n');
    const message = problemAt(yaml('sip2:\n  dialect: ./bad-dialect.yaml\n'), 'sip2.dialect');
    expect(message).toContain(`dialect file ${tmp.dir}/bad-dialect.yaml is invalid`);
    expect(message).toContain('charset');
  });

  it('the config file must exist and be YAML', () => {
    const missing = configError({ file: `${tmp.dir}/nope.yaml`, env: {} });
    expect(missing).toBeInstanceOf(ConfigError);
    expect(missing.problems).toEqual([
      {
        path: `${tmp.dir}/nope.yaml`,
        message: 'cannot read the configuration file: no such file; check the --config argument',
      },
    ]);
    const broken = yaml('http:\n  port: 8080\n   host: x\n');
    const [line] = problemLines(broken);
    expect(line).toMatch(
      new RegExp(`^${broken.file}: not valid YAML at line 2, column 9: nested mappings are not allowed`),
    );
    expect(problemLines(yaml('http:\n  port: 1\n  port: 2\n'))[0]).toContain('not valid YAML');
    expect(problemLines(yaml('- http\n- sip2\n'))[0]).toContain(
      'must be a mapping of sections (http, sip2, paia, daia, auth, state, cache, metrics, log, demo, libraries), got a list',
    );
  });
});

describe('unknown keys', () => {
  it('are errors naming the key, with a suggestion', () => {
    const options = yaml('sip:\n  host: x\nsip2:\n  pool:\n    maxWaitng: 5\n    max_lifetime_ms: 10\n');
    expect(problemLines(options)).toEqual([
      `sip2.pool.maxWaitng: is not a known setting; did you mean maxWaiting? (the settings in sip2.pool are min, max, acquireTimeoutMs, maxWaiting, keepaliveMs, maxLifetimeMs; keys are camelCase) (at ${options.file}:5)`,
      `sip2.pool.max_lifetime_ms: is not a known setting; did you mean maxLifetimeMs? (the settings in sip2.pool are min, max, acquireTimeoutMs, maxWaiting, keepaliveMs, maxLifetimeMs; keys are camelCase) (at ${options.file}:6)`,
      `sip: is not a known section; did you mean sip2? (the sections are http, sip2, paia, daia, auth, state, cache, metrics, log, demo, libraries; keys are camelCase) (at ${options.file}:1)`,
    ]);
  });

  it('explain dotted keys', () => {
    expect(problemAt(yaml('sip2.host: ils.example.org\n'), 'sip2.host')).toContain(
      'is not a setting: write it nested, "sip2:" with "host: ..." indented below it',
    );
  });

  it('inside TLS sections too', () => {
    expect(problemAt(yaml('sip2:\n  tls:\n    verify: false\n'), 'sip2.tls.verify')).toContain(
      'is not a known setting',
    );
  });

  it('sections must be sections', () => {
    expect(problemAt(yaml('sip2: ils.example.org\n'), 'sip2')).toContain(
      'must be a section of settings (indented "key: value" lines) (got "ils.example.org"',
    );
  });
});

describe('every problem at once', () => {
  it('is listed in the message, in the order of the settings', () => {
    const options = yaml(
      'log:\n  level: loud\nhttp:\n  port: x\nsip2:\n  pool:\n    min: 9\n  currency: euro\n  typo: 1\n',
      { PAIA_AUTH_MAX_SESSIONS: '0' },
    );
    const error = configError(options);
    expect(error.problems.map((problem) => problem.path)).toEqual([
      'http.port',
      'sip2.pool.min',
      'sip2.currency',
      'sip2.typo',
      'auth.maxSessions',
      'log.level',
    ]);
    expect(error.message.split('\n')[0]).toBe(`invalid configuration (${options.file}), 6 problems:`);
    for (const problem of error.problems) expect(error.message).toContain(`  ${problem.path}: ${problem.message}`);
  });
});

describe('cross-setting rules', () => {
  it('stay quiet about settings that are already wrong', () => {
    expect(problemLines({ env: { PAIA_SIP2_POOL_MAX: '0', PAIA_SIP2_POOL_MIN: '3' } })).toEqual([
      'sip2.pool.max: must be a whole number of connections between 1 and 100 (got 0, from PAIA_SIP2_POOL_MAX)',
    ]);
  });

  it('still run when another section is wrong', () => {
    const paths = configError({
      env: { PAIA_LOG_LEVEL: 'loud', PAIA_SIP2_POOL_MIN: '5', PAIA_PAIA_PATRON_ID: 'opaque' },
    }).problems.map((problem) => problem.path);
    expect(paths).toEqual(['sip2.pool.min', 'paia.patronIdSecret', 'log.level']);
  });
});

describe('warnings with errors', () => {
  it('are part of the error, since a misspelt variable may be the cause', () => {
    const error = configError({ env: { PAIA_PAIA_PATRON_ID: 'opaque', PAIA_PAIA_PATRON_SECRET: 'x'.repeat(40) } });
    expect(error.warnings).toEqual([
      'PAIA_PAIA_PATRON_SECRET is not a paia-sip2 setting and is ignored; did you mean PAIA_PAIA_PATRON_ID_SECRET?',
    ]);
    expect(error.message).toContain('\nwarnings:\n  PAIA_PAIA_PATRON_SECRET is not a paia-sip2 setting');
    expect(error.message).not.toContain('x'.repeat(40));
  });
});

describe('secrets', () => {
  const terminal = 'Terminal|Secret42';
  const patronSecret = 'short-but-secret';

  it('never appear in errors or warnings', () => {
    const error = configError({
      env: {
        PAIA_SIP2_TERMINAL_PASSWORD: terminal,
        PAIA_PAIA_PATRON_ID: 'opaque',
        PAIA_PAIA_PATRON_ID_SECRET: patronSecret,
        PAIA_SIP2_TERMINAL_PASSWORD_X: terminal,
      },
    });
    expect(error.problems.map((problem) => problem.path)).toEqual(['sip2.terminal.password', 'paia.patronIdSecret']);
    for (const problem of error.problems) expect(problem.message).toContain('value hidden');
    expect(error.message).not.toContain('Secret42');
    expect(error.message).not.toContain(patronSecret);
    expect(error.stack).not.toContain('Secret42');
  });

  it('stay hidden when YAML reads them as numbers or they have the wrong type', () => {
    const options = yaml('sip2:\n  terminal:\n    password: 123456789\npaia:\n  patronIdSecret: [1, 2]\n');
    const lines = problemLines(options);
    expect(lines).toEqual([
      `sip2.terminal.password: must be the SIP2 terminal password; put the value in quotes (value hidden, at ${options.file}:3)`,
      `paia.patronIdSecret: must be a random string of at least 32 characters, or null (value hidden, at ${options.file}:5)`,
    ]);
    expect(lines.join('\n')).not.toContain('123456789');
  });

  it('are hidden even when they match another setting that is reported', () => {
    // The secret equals a value shown elsewhere: the scrubber hides it there as well.
    const error = configError({ env: { PAIA_SIP2_TERMINAL_PASSWORD: 'loud-level', PAIA_LOG_LEVEL: 'loud-level' } });
    expect(error.message).not.toContain('loud-level');
  });
});

describe('a real ILS (sip2.host set) gets no demo values', () => {
  const ils = { ...ILS_ACCOUNT_ENV, PAIA_SIP2_HOST: 'ils.example.org' };
  const without = (name: string) => Object.fromEntries(Object.entries(ils).filter(([key]) => key !== name));

  it.each([
    ['sip2.terminal.user', 'PAIA_SIP2_TERMINAL_USER', 'the login name of the SIP2 terminal account'],
    ['sip2.terminal.password', 'PAIA_SIP2_TERMINAL_PASSWORD', 'the password of that terminal account'],
    ['sip2.terminal.location', 'PAIA_SIP2_TERMINAL_LOCATION', 'the location code of the terminal'],
    ['sip2.institution', 'PAIA_SIP2_INSTITUTION', 'the institution id the ILS expects'],
    ['paia.itemUri', 'PAIA_PAIA_ITEM_URI', 'the URI template of your items'],
    ['paia.editionUri', 'PAIA_PAIA_EDITION_URI', 'the URI template of your titles'],
  ])('refuses %s left unset, saying what to put there', (path, variable, fix) => {
    const error = configError({ file: DEFAULT_CONFIG_FILE, env: without(variable) });
    expect(error.problems.map((problem) => problem.path)).toEqual([path]);
    const message = error.problems[0]?.message ?? '';
    expect(message).toContain('is required because sip2.host is set');
    expect(message).toContain(fix);
    expect(message).toContain(`(${variable})`);
  });

  it('takes each of them when set, also to the simulator values, and keeps the demo values out', () => {
    const config = loadConfig({ file: DEFAULT_CONFIG_FILE, env: ils });
    expect(config.sip2.terminal).toEqual({ user: 'paia-gateway', password: 'gateway-secret', location: 'CPL' });
    expect(config.sip2.institution).toBe('CPL');
    const simulator = loadConfig({
      file: DEFAULT_CONFIG_FILE,
      env: {
        ...ils,
        PAIA_SIP2_TERMINAL_USER: 'paia',
        PAIA_SIP2_TERMINAL_PASSWORD: 'paia-secret',
        PAIA_SIP2_TERMINAL_LOCATION: '',
        PAIA_SIP2_INSTITUTION: 'DEMO',
      },
    });
    expect(simulator.sip2.terminal).toEqual({ user: 'paia', password: 'paia-secret', location: '' });
  });

  it('refuses a misspelt PAIA_SIP2_TERMINAL_PASSWORD: the password is missing, and the warning names the right variable', () => {
    const misspelt = { ...without('PAIA_SIP2_TERMINAL_PASSWORD'), PAIA_SIP2_TERMINAL_PASWORD: 'gateway-secret' };
    const error = configError({ file: DEFAULT_CONFIG_FILE, env: misspelt });
    expect(error.problems.map((problem) => problem.path)).toEqual(['sip2.terminal.password']);
    expect(error.message).toContain(
      'PAIA_SIP2_TERMINAL_PASWORD is not a paia-sip2 setting and is ignored; did you mean PAIA_SIP2_TERMINAL_PASSWORD?',
    );
    expect(error.message).not.toContain('gateway-secret');
  });

  it('gives the demo its terminal account and institution while sip2.host is not set', () => {
    const config = loadConfig({ file: DEFAULT_CONFIG_FILE, env: {} });
    expect(config.sip2.terminal).toEqual({ user: 'paia', password: 'paia-secret', location: 'MAIN' });
    expect(config.sip2.institution).toBe('DEMO');
    expect(config.paia.itemUri).toBeNull();
  });
});

describe('http.publicUrl', () => {
  it('is required off loopback, where the listening address is not what clients reach', () => {
    const options = yaml('http:\n  host: 0.0.0.0\n  trustedProxy: true\n');
    expect(problemAt(options, 'http.publicUrl')).toContain(
      'is required because http.host ("0.0.0.0") is not a loopback address: the https URL clients reach the gateway at',
    );
    expect(loadConfig(yaml('http:\n  host: "::1"\n')).http.publicUrl).toBeNull();
  });
});
