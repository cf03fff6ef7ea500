import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configSchema, describeConfig, loadConfig, loadConfigWithWarnings } from '../../../src/config/index.js';
import { packagePath } from '../../../src/package-root.js';
import { configError, problemAt, problemLines, tempDir } from './helpers.js';

const tmp = tempDir();
let counter = 0;

/** Writes a config file and returns the load options for it. */
function yaml(text: string, env: NodeJS.ProcessEnv = {}) {
  counter += 1;
  return { file: tmp.write(`libraries${counter}.yaml`, text), env };
}

/** The top level a real ILS needs (but sip2.host and the institution, which each library gives). */
const TOP = `sip2:
  port: 6001
  terminal: { user: paia-gateway, password: gateway-secret, location: "" }
  pool: { min: 1, max: 4 }
paia:
  itemUri: "https://lib.example.org/item/{barcode}"
  editionUri: "https://lib.example.org/title/{title}"
`;

/** A library of TOP with its host and institution, and `more` (YAML flow-mapping entries) in its sip2. */
const library = (id: string, more = '') =>
  `  ${id}:\n    sip2: { host: ils.example.org, institution: "${id}"${more ? `, ${more}` : ''} }\n`;

describe('the libraries section', () => {
  it('absent or empty: the configuration is exactly a single-library one', () => {
    const plain = loadConfig({ env: {} });
    expect(plain.libraries).toBeNull();
    expect(plain).toEqual({ ...configSchema.parse({}), libraries: null });
    expect(loadConfig(yaml('libraries: {}\n'))).toEqual(plain);
    expect(loadConfig(yaml('libraries:\n'))).toEqual(plain);
    expect(Object.keys(describeConfig(plain))).not.toContain('libraries');
  });

  it('keeps the file order of the libraries, ids that look like numbers too', () => {
    const config = loadConfig(
      yaml(`${TOP}libraries:\n${['b', 'a', '10', '9', 'DE-830'].map((id) => library(id)).join('')}`),
    );
    expect(config.libraries?.map(({ id }) => id)).toEqual(['b', 'a', '10', '9', 'DE-830']);
    expect((describeConfig(config).libraries as { id: string }[]).map(({ id }) => id)).toEqual([
      'b',
      'a',
      '10',
      '9',
      'DE-830',
    ]);
  });

  it('accepts ISILs and every URL-safe character', () => {
    const ids = ['DE-830', 'DE-Hil2', 'x', 'a.b_c~d-e', 'A'.repeat(64)];
    const config = loadConfig(yaml(`${TOP}libraries:\n${ids.map((id) => library(id)).join('')}`));
    expect(config.libraries?.map(({ id }) => id)).toEqual(ids);
  });

  it.each([
    ['bad id', 'is not a usable library id'],
    ['a/b', 'is not a usable library id'],
    // Hono would read ":830" in the library's routes as a path parameter.
    ['DE:830', 'is not a usable library id'],
    ['DE-830ä', 'is not a usable library id'],
    ['A'.repeat(65), 'is not a usable library id'],
    ['..', 'URLs drop "." and ".." as path segments'],
    ['healthz', "the gateway's own paths use it"],
    ['Metrics', "the gateway's own paths use it"],
    ['openapi.json', "the gateway's own paths use it"],
    ['core', "the gateway's own paths use it"],
  ])('refuses the id %j', (id, message) => {
    expect(problemAt(yaml(`${TOP}libraries:\n  "${id}": {}\n`), `libraries[${id}]`)).toContain(message);
  });

  it('refuses two ids that differ only in case, and an id given twice', () => {
    expect(
      problemAt(yaml(`${TOP}libraries:\n${library('DE-830')}${library('de-830')}`), 'libraries[de-830]'),
    ).toContain('differs from the library id "DE-830" only in case');
    expect(problemLines(yaml(`${TOP}libraries:\n${library('DE-830')}${library('DE-830')}`))).toEqual([
      expect.stringMatching(/: not valid YAML at line 11, column 3: map keys must be unique$/),
    ]);
  });

  it('a top-level sip2.tls the libraries inherit draws no warning about the demo simulator, and reaches them', () => {
    const ca = tmp.write('inherited-ca.pem', '-----BEGIN CERTIFICATE-----\n');
    const top = TOP.replace('sip2:\n', `sip2:\n  tls: { ca: ${ca} }\n`);
    const { config, warnings } = loadConfigWithWarnings(yaml(`${top}libraries:\n${library('A')}`));
    expect(warnings.filter((warning) => warning.includes('embedded demo simulator'))).toEqual([]);
    expect(config.libraries?.[0]?.config.sip2.tls).not.toBeNull();
  });

  it('refuses the id __proto__, which zod and a JavaScript object would drop silently', () => {
    expect(
      problemAt(yaml(`${TOP}libraries:\n${library('__proto__')}${library('DE-830')}`), 'libraries[__proto__]'),
    ).toContain('is not a usable library id');
  });

  it('refuses an id given once as a number and once as text (one key to JavaScript, so one library would vanish)', () => {
    expect(
      problemAt(
        yaml(`${TOP}libraries:\n${library('830')}  "830":\n    sip2: { host: other.example.org }\n`),
        'libraries[830]',
      ),
    ).toContain('is given twice');
  });

  it('refuses any section but sip2, paia and daia in a library, naming it and the library', () => {
    const options = yaml(`${TOP}libraries:\n${library('DE-830')}    http: { port: 8081 }\n    sip: {}\n`);
    const lines = problemLines(options);
    expect(lines).toEqual([
      `libraries[DE-830].http: is not a section a library may set: a library gives sip2, paia, daia (each setting optional, the rest from the top level); the other sections apply to every library and are set at the top level (at ${options.file}:11)`,
      expect.stringMatching(/^libraries\[DE-830\]\.sip: is not a section a library may set/),
    ]);
  });

  it('is a section of libraries, not a list', () => {
    expect(problemAt(yaml('libraries: [DE-830]\n'), 'libraries')).toContain('must be a section of library ids');
  });
});

describe("a library's effective configuration", () => {
  it('merges nested sections field by field, and a list or a scalar replaces the top level', () => {
    const config = loadConfig(
      yaml(`${TOP.replace('sip2:\n', 'sip2:\n  maintenance: [{ days: [sat], from: "01:00", to: "02:00", timeZone: UTC }]\n')}daia:
  exemptClients: [10.0.0.1, 10.0.0.2]
libraries:
  A:
    sip2:
      host: ils-a.example.org
      institution: A
      pool: { max: 8 }
      terminal: { user: a-gateway }
      maintenance: [{ days: [sun], from: "03:00", to: "04:00", timeZone: UTC }]
    daia: { exemptClients: [10.0.0.3] }
  B:
    sip2: { host: ils-b.example.org, institution: B, port: 7001 }
`),
    );
    const [a, b] = config.libraries ?? [];
    expect(a?.config.sip2.pool).toMatchObject({ min: 1, max: 8 });
    expect(a?.config.sip2.terminal).toEqual({ user: 'a-gateway', password: 'gateway-secret', location: '' });
    expect(a?.config.sip2.port).toBe(6001);
    expect(a?.config.daia.exemptClients).toEqual(['10.0.0.3']);
    expect(a?.config.sip2.maintenance.map(({ days }) => days)).toEqual([['sun']]);
    expect(b?.config.sip2.maintenance.map(({ days }) => days)).toEqual([['sat']]);
    expect(b?.config.sip2).toMatchObject({ host: 'ils-b.example.org', port: 7001, institution: 'B' });
    expect(b?.config.sip2.pool).toMatchObject({ min: 1, max: 4 });
    expect(b?.config.daia.exemptClients).toEqual(['10.0.0.1', '10.0.0.2']);
    // The settings a library leaves out take the top level's value, not the schema's default.
    expect(b?.config.paia.itemUri).toBe('https://lib.example.org/item/{barcode}');
  });

  it('takes what a library leaves out from the top level as the environment sets it, and its own value over both', () => {
    const env = { PAIA_SIP2_PORT: '7000', PAIA_SIP2_POOL_MAX: '6', PAIA_SIP2_TERMINAL_PASSWORD: 'from-the-env' };
    const config = loadConfig(yaml(`${TOP}libraries:\n${library('A', 'port: 6100')}${library('B')}`, env));
    const [a, b] = config.libraries ?? [];
    expect(a?.config.sip2.port).toBe(6100);
    expect(b?.config.sip2.port).toBe(7000);
    expect(a?.config.sip2.pool.max).toBe(6);
    expect(b?.config.sip2.terminal.password).toBe('from-the-env');
  });

  it('is a whole configuration: the top level sections as they are, and no libraries of its own', () => {
    const config = loadConfig(yaml(`${TOP}libraries:\n${library('A', 'port: 6100')}`));
    const a = config.libraries?.[0]?.config;
    expect(a?.libraries).toBeNull();
    expect(a?.http).toBe(config.http);
    expect(a?.auth).toBe(config.auth);
    expect(a?.state).toBe(config.state);
  });

  it('is frozen all the way down', () => {
    const config = loadConfig(yaml(`${TOP}libraries:\n${library('A')}`));
    expect(Object.isFrozen(config.libraries)).toBe(true);
    expect(Object.isFrozen(config.libraries?.[0])).toBe(true);
    expect(Object.isFrozen(config.libraries?.[0]?.config.sip2.pool)).toBe(true);
  });

  it('needs a sip2.host: no embedded demo simulator per library', () => {
    const options = yaml(`libraries:\n  A: {}\n`);
    expect(problemAt(options, 'libraries[A].sip2.host')).toBe(
      `is required for every library, in the library's sip2 section or at the top level: the embedded demo simulator serves only a gateway without libraries (not set, section at ${options.file}:2)`,
    );
  });

  it('is not held to the top level: a top level with sip2.host but no institution is fine when each library gives one', () => {
    const config = loadConfig(
      yaml(
        `${TOP.replace('sip2:\n', 'sip2:\n  host: ils.example.org\n')}libraries:\n  A: { sip2: { institution: A } }\n`,
      ),
    );
    expect(config.libraries?.[0]?.config.sip2).toMatchObject({ host: 'ils.example.org', institution: 'A' });
  });
});

describe("a library's problems", () => {
  it('name the library, with the wording of a single-library problem and the line of its own value', () => {
    const options = yaml(`${TOP}libraries:\n${library('A')}${library('DE-830', 'port: 70000')}`);
    expect(problemLines(options)).toEqual([
      `libraries[DE-830].sip2.port: must be a TCP port between 1 and 65535 (got 70000, at ${options.file}:12)`,
    ]);
  });

  it('fail a rule between sections in one library only', () => {
    const lookup = 'records: { http: { url: "https://records.example.org/{record}", timeoutMs: 40000 } }';
    const options = yaml(`${TOP}libraries:\n${library('A')}${library('B')}    daia: { ${lookup} }\n`);
    expect(problemLines(options)).toEqual([
      `libraries[B].daia.records.http.timeoutMs: must be below http.requestTimeoutMs (30000): a lookup that hangs must end in time for its record to be answered without items, not the whole call with 504 (got 40000, at ${options.file}:13)`,
    ]);
    // The same rule, with the top level's call bound a library inherits from the environment.
    expect(
      loadConfig(
        yaml(`${TOP}libraries:\n${library('B')}    daia: { ${lookup} }\n`, { PAIA_HTTP_REQUEST_TIMEOUT_MS: '60000' }),
      ).libraries,
    ).toHaveLength(1);
  });

  it('say where an inherited value was given: the top level line or its environment variable', () => {
    const options = yaml(`sip2:\n  institution: ""\nlibraries:\n  A: { sip2: { host: ils.example.org } }\n`);
    // The top level's own problem, once: not again for the library that inherits it.
    expect(problemLines(options).filter((line) => line.includes('institution'))).toEqual([
      `sip2.institution: must be the SIP2 institution id (got "", at ${options.file}:2)`,
    ]);
    const fromEnv = yaml(`${TOP}libraries:\n${library('A')}  B: { sip2: { host: ils-b.example.org } }\n`, {
      PAIA_SIP2_INSTITUTION: '',
    });
    expect(problemAt(fromEnv, 'sip2.institution')).toContain('from PAIA_SIP2_INSTITUTION');
    expect(configError(fromEnv).problems.map(({ path }) => path)).toEqual(['sip2.institution']);
  });

  it("read a library's relative file paths from the config file's directory, and name a file it cannot read", () => {
    tmp.write('dialects/mine.yaml', readFileSync(packagePath('config', 'dialects', 'koha.yaml'), 'utf8'));
    const config = loadConfig(yaml(`${TOP}libraries:\n${library('A', 'dialect: dialects/mine.yaml')}`));
    expect(config.libraries?.[0]?.config.sip2.dialect).toBe(`${tmp.dir}/dialects/mine.yaml`);
    const options = yaml(`${TOP}libraries:\n${library('A', 'tls: { ca: no-such-ca.pem }')}`);
    expect(problemAt(options, 'libraries[A].sip2.tls.ca')).toContain(`cannot read ${tmp.dir}/no-such-ca.pem`);
  });

  it('name an unknown setting of a library, with the settings it could have meant', () => {
    const options = yaml(`${TOP}libraries:\n${library('A', 'hots: x')}`);
    expect(problemAt(options, 'libraries[A].sip2.hots')).toMatch(/^is not a known setting; did you mean host\?/);
  });

  it('hide secrets, and a library that is fine is not reported', () => {
    const options = yaml(
      `${TOP}libraries:\n${library('A')}  B:\n    sip2: { host: b, institution: B, terminal: { password: change-me-please } }\n`,
    );
    const error = configError(options);
    expect(error.problems.map(({ path }) => path)).toEqual(['libraries[B].sip2.terminal.password']);
    expect(error.message).not.toContain('change-me-please');
    expect(error.problems[0]?.message).toContain('value hidden');
  });

  it('come after the top level problems, library by library in file order', () => {
    const top = TOP.replace('sip2:\n', 'sip2:\n  pageSize: 0\n');
    const options = yaml(`http:\n  port: 0.5\n${top}libraries:\n${library('Z', 'port: 0')}${library('A', 'port: 0')}`);
    expect(configError(options).problems.map(({ path }) => path)).toEqual([
      'http.port',
      'sip2.pageSize',
      'libraries[Z].sip2.port',
      'libraries[A].sip2.port',
    ]);
  });

  it('warn once for what a library inherits, and name the library for its own', () => {
    const { warnings } = loadConfigWithWarnings(
      yaml(
        `${TOP.replace('sip2:\n', 'sip2:\n  timeouts: { connectMs: 5 }\n')}libraries:\n${library('A')}${library('B', 'timeouts: { responseMs: 7 }')}`,
      ),
    );
    expect(warnings.filter((warning) => warning.includes('connectMs is 5'))).toEqual([
      'sip2.timeouts.connectMs is 5 ms; it is in milliseconds, not seconds (e.g. 5000 for 5 s)',
    ]);
    expect(warnings).toContain(
      'libraries[B]: sip2.timeouts.responseMs is 7 ms; it is in milliseconds, not seconds (e.g. 5000 for 5 s)',
    );
  });
});
