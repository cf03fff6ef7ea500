/**
 * The settings of deliverable 3 of issue 15 ("operable"): PAIA_CONFIG, the
 * _FILE variants of secrets, the HTTP server limits, log.format and
 * sip2.maintenance, as the loader reads and checks them.
 */
import { chmodSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { describeConfig, loadConfig, loadConfigWithWarnings } from '../../../src/config/index.js';
import { configError, problemLines, tempDir } from './helpers.js';

const tmp = tempDir();
const SECRET = 'ils-terminal-pw';

describe('PAIA_CONFIG', () => {
  it('names the configuration file when --config is not given, relative to the working directory, and is no unknown variable', () => {
    tmp.write('env/gateway.yaml', 'log:\n  level: warn\n');
    const { config, warnings } = loadConfigWithWarnings({ env: { PAIA_CONFIG: 'env/gateway.yaml' }, cwd: tmp.dir });
    expect(config.log.level).toBe('warn');
    expect(warnings).toEqual([]);
  });

  it('loses to --config', () => {
    const flagged = tmp.write('flag.yaml', 'log:\n  level: error\n');
    const named = tmp.write('named.yaml', 'log:\n  level: warn\n');
    expect(loadConfig({ file: flagged, env: { PAIA_CONFIG: named } }).log.level).toBe('error');
  });

  it('that names no file is an error saying so', () => {
    const error = configError({ env: { PAIA_CONFIG: 'missing.yaml' }, cwd: tmp.dir });
    expect(error.problems[0]?.message).toMatch(/cannot read the configuration file: no such file; .*PAIA_CONFIG/);
  });
});

describe('_FILE variants of the secret settings', () => {
  it('read the secret from the file without its final line break, and keep it out of messages', () => {
    const file = tmp.write('secrets/sip2', `${SECRET}\n`);
    const config = loadConfig({ env: { PAIA_SIP2_TERMINAL_PASSWORD_FILE: file } });
    expect(config.sip2.terminal.password).toBe(SECRET);
    const redis = tmp.write('secrets/redis', 'redis://:pw@127.0.0.1:6379\r\n');
    expect(loadConfig({ env: { PAIA_STATE_STORE: 'redis', PAIA_STATE_REDIS_URL_FILE: redis } }).state.redis.url).toBe(
      'redis://:pw@127.0.0.1:6379',
    );
  });

  it('keep a secret exactly as written apart from one final line break', () => {
    const file = tmp.write('secrets/spaces', '  two words  \n');
    expect(loadConfig({ env: { PAIA_SIP2_TERMINAL_PASSWORD_FILE: file } }).sip2.terminal.password).toBe(
      '  two words  ',
    );
  });

  it('take a relative path from the working directory', () => {
    tmp.write('run/secret', 'x'.repeat(40));
    const config = loadConfig({
      env: { PAIA_PAIA_PATRON_ID: 'opaque', PAIA_PAIA_PATRON_ID_SECRET_FILE: 'run/secret' },
      cwd: tmp.dir,
    });
    expect(config.paia.patronIdSecret).toBe('x'.repeat(40));
  });

  it('that cannot be read are an error naming the variable and the file', () => {
    expect(problemLines({ env: { PAIA_SIP2_TERMINAL_PASSWORD_FILE: 'nope/secret' }, cwd: tmp.dir })).toEqual([
      `sip2.terminal.password: cannot read ${tmp.dir}/nope/secret named by PAIA_SIP2_TERMINAL_PASSWORD_FILE: no such file; make the file readable for the user paia-sip2 runs as, or set PAIA_SIP2_TERMINAL_PASSWORD instead`,
    ]);
    if (process.getuid?.() !== 0) {
      const locked = tmp.write('secrets/locked', SECRET);
      chmodSync(locked, 0o000);
      expect(problemLines({ env: { PAIA_SIP2_TERMINAL_PASSWORD_FILE: locked } })[0]).toMatch(/permission denied/);
    }
  });

  it('set together with the variable itself are an error, showing neither value', () => {
    const file = tmp.write('secrets/both', SECRET);
    const lines = problemLines({
      env: { PAIA_SIP2_TERMINAL_PASSWORD: 'other-pw', PAIA_SIP2_TERMINAL_PASSWORD_FILE: file },
    });
    expect(lines).toEqual([
      'sip2.terminal.password: is set twice, by PAIA_SIP2_TERMINAL_PASSWORD and by PAIA_SIP2_TERMINAL_PASSWORD_FILE; set only one of them (value hidden)',
    ]);
  });

  it('report a value the schema refuses by the _FILE variable, with the value hidden', () => {
    const file = tmp.write('secrets/short', 'short\n');
    const lines = problemLines({ env: { PAIA_PAIA_PATRON_ID: 'opaque', PAIA_PAIA_PATRON_ID_SECRET_FILE: file } });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^paia\.patronIdSecret: .*\(value hidden, from PAIA_PAIA_PATRON_ID_SECRET_FILE\)$/);
    expect(lines[0]).not.toContain('short\n');
  });

  it('exist only for secrets: PAIA_HTTP_PORT_FILE is an unknown variable', () => {
    const { warnings } = loadConfigWithWarnings({ env: { PAIA_HTTP_PORT_FILE: '/dev/null' } });
    expect(warnings.some((warning) => warning.startsWith('PAIA_HTTP_PORT_FILE is not a paia-sip2 setting'))).toBe(true);
  });
});

describe('the HTTP server limits', () => {
  it('are read from the environment', () => {
    const { http } = loadConfig({
      env: {
        PAIA_HTTP_HEADERS_TIMEOUT_MS: '2000',
        PAIA_HTTP_RECEIVE_TIMEOUT_MS: '4000',
        PAIA_HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000',
        PAIA_HTTP_MAX_CONNECTIONS: '50',
        PAIA_HTTP_MAX_CONNECTIONS_PER_ADDRESS: 'null',
      },
    });
    expect(http).toMatchObject({
      headersTimeoutMs: 2000,
      receiveTimeoutMs: 4000,
      keepAliveTimeoutMs: 1000,
      maxConnections: 50,
      maxConnectionsPerAddress: null,
    });
  });

  it('refuse a receive timeout shorter than the headers timeout', () => {
    expect(
      problemLines({ env: { PAIA_HTTP_HEADERS_TIMEOUT_MS: '20000', PAIA_HTTP_RECEIVE_TIMEOUT_MS: '5000' } }),
    ).toEqual([
      'http.receiveTimeoutMs: must be at least http.headersTimeoutMs (20000): the whole request cannot arrive before its head (got 5000, from PAIA_HTTP_RECEIVE_TIMEOUT_MS)',
    ]);
  });
});

describe('log.format', () => {
  it('is json by default, pretty on request, nothing else', () => {
    expect(loadConfig({ env: {} }).log.format).toBe('json');
    expect(loadConfig({ env: { PAIA_LOG_FORMAT: 'pretty' } }).log.format).toBe('pretty');
    expect(problemLines({ env: { PAIA_LOG_FORMAT: 'text' } })).toEqual([
      'log.format: must be one of json, pretty (got "text", from PAIA_LOG_FORMAT)',
    ]);
  });
});

describe('sip2.maintenance', () => {
  it('reads windows from the file, across midnight too', () => {
    const file = tmp.write(
      'maintenance.yaml',
      [
        'sip2:',
        '  maintenance:',
        '    - days: [mon, tue, wed, thu, fri, sat, sun]',
        '      from: "02:00"',
        '      to: "02:30"',
        '      timeZone: Europe/Berlin',
        '    - {days: [sat], from: "23:00", to: "01:00", timeZone: UTC}',
        '',
      ].join('\n'),
    );
    expect(loadConfig({ file, env: {} }).sip2.maintenance).toEqual([
      {
        days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
        from: '02:00',
        to: '02:30',
        timeZone: 'Europe/Berlin',
      },
      { days: ['sat'], from: '23:00', to: '01:00', timeZone: 'UTC' },
    ]);
  });

  it('reads JSON from PAIA_SIP2_MAINTENANCE', () => {
    const env = { PAIA_SIP2_MAINTENANCE: '[{"days":["sun"],"from":"03:00","to":"04:00","timeZone":"UTC"}]' };
    expect(loadConfig({ env }).sip2.maintenance).toEqual([
      { days: ['sun'], from: '03:00', to: '04:00', timeZone: 'UTC' },
    ]);
    expect(problemLines({ env: { PAIA_SIP2_MAINTENANCE: 'mon 02:00-03:00' } })[0]).toMatch(
      /^sip2\.maintenance: must be a list of windows/,
    );
  });

  it('names the window and the field of each mistake', () => {
    const file = tmp.write(
      'bad-maintenance.yaml',
      [
        'sip2:',
        '  maintenance:',
        '    - {days: [monday], from: "2:00", to: "02:30", timeZone: Europe/Berlni}',
        '    - {days: [], from: "02:00", to: "02:00", timeZone: UTC}',
        '    - {days: [sun], from: "02:00", until: "03:00", timeZone: UTC}',
        '',
      ].join('\n'),
    );
    const lines = problemLines({ file, env: {} });
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^sip2\.maintenance\.0\.days\.0: must be days of the week: mon, tue, wed, thu, fri, sat, sun \(got "monday"/,
        ),
        expect.stringMatching(
          /^sip2\.maintenance\.0\.from: must be a local time "HH:MM" \(24 h\), e\.g\. "02:00" \(got "2:00"/,
        ),
        expect.stringMatching(
          /^sip2\.maintenance\.0\.timeZone: must be an IANA time zone, e\.g\. "Europe\/Berlin" or "UTC" \(got "Europe\/Berlni"/,
        ),
        expect.stringMatching(/^sip2\.maintenance\.1\.days: must name at least one day/),
        'sip2.maintenance.2.until: is not a known setting (the settings in sip2.maintenance.2 are days, from, to, timeZone; keys are camelCase) (at ' +
          `${file}:5)`,
      ]),
    );
  });
});

describe('the check-config summary', () => {
  it('shows the HTTP limits, the maintenance windows and a pretty log format', () => {
    const env = {
      PAIA_SIP2_MAINTENANCE: '[{"days":["sat","sun"],"from":"23:00","to":"01:00","timeZone":"Europe/Berlin"}]',
      PAIA_HTTP_MAX_CONNECTIONS_PER_ADDRESS: 'null',
      PAIA_LOG_FORMAT: 'pretty',
    };
    expect(describeConfig(loadConfig({ env }))).toMatchObject({
      http: { limits: { headersTimeoutMs: 10000, receiveTimeoutMs: 30000, maxConnectionsPerAddress: 'no cap' } },
      sip2: { maintenance: ['sat,sun 23:00-01:00 Europe/Berlin'] },
      log: 'info (pretty)',
    });
    expect(describeConfig(loadConfig({ env: {} }))).toMatchObject({ sip2: { maintenance: 'none' }, log: 'info' });
  });
});
