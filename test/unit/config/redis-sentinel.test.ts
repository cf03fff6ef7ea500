/**
 * state.redis with Redis Sentinel (issue 28, deliverable 2): the settings,
 * the messages a sysadmin gets when they do not fit together, the
 * passwords' _FILE variables, and how the store is named (never with a
 * password) once the gateway has read them.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { stateStoreSettings } from '../../../src/gateway/parts/state.js';
import { describeStore } from '../../../src/state/index.js';
import { configError, problemAt, problemLines, tempDir } from './helpers.js';

const tmp = tempDir();

const SENTINEL_ENV = {
  PAIA_STATE_STORE: 'redis',
  PAIA_STATE_REDIS_SENTINELS: '10.0.0.1:26380, sentinel-b.example.org, [2001:db8::1]:26381',
  PAIA_STATE_REDIS_SENTINEL_MASTER: 'mymaster',
};

describe('state.redis with Sentinel', () => {
  it('reads the sentinels (the port defaults to 26379), the master name and both passwords, and names the store without them', () => {
    const config = loadConfig({
      env: {
        ...SENTINEL_ENV,
        PAIA_STATE_REDIS_PASSWORD: 'redis-pw',
        PAIA_STATE_REDIS_SENTINEL_PASSWORD: 'sentinel-pw',
      },
    });
    const settings = stateStoreSettings(config);
    expect(settings.redis).toMatchObject({
      url: null,
      password: 'redis-pw',
      sentinel: {
        sentinels: [
          { host: '10.0.0.1', port: 26380 },
          { host: 'sentinel-b.example.org', port: 26379 },
          { host: '2001:db8::1', port: 26381 },
        ],
        masterName: 'mymaster',
        password: 'sentinel-pw',
        tls: false,
      },
    });
    expect(describeStore(settings)).toBe(
      'Redis via Sentinel master mymaster at 10.0.0.1:26380,sentinel-b.example.org:26379,[2001:db8::1]:26381',
    );
  });

  it('a store at one URL is named by scheme, host and port only', () => {
    const config = loadConfig({ env: { PAIA_STATE_STORE: 'redis', PAIA_STATE_REDIS_URL: 'rediss://:pw@redis.lan' } });
    const settings = stateStoreSettings(config);
    expect(settings.redis.sentinel).toBeNull();
    expect(describeStore(settings)).toBe('rediss://redis.lan:6379');
    expect(describeStore(stateStoreSettings(loadConfig({ env: {} })))).toBe('memory');
  });

  it('reads both passwords from files (PAIA_..._FILE), as the other secrets', () => {
    const redisPw = tmp.write('secrets/redis', 'redis-pw\n');
    const sentinelPw = tmp.write('secrets/sentinel', 'sentinel-pw\n');
    const { redis } = loadConfig({
      env: {
        ...SENTINEL_ENV,
        PAIA_STATE_REDIS_PASSWORD_FILE: redisPw,
        PAIA_STATE_REDIS_SENTINEL_PASSWORD_FILE: sentinelPw,
      },
    }).state;
    expect([redis.password, redis.sentinelPassword]).toEqual(['redis-pw', 'sentinel-pw']);
  });

  it('refuses url and sentinels together, saying to pick one', () => {
    expect(
      problemAt({ env: { ...SENTINEL_ENV, PAIA_STATE_REDIS_URL: 'redis://127.0.0.1:6379' } }, 'state.redis.sentinels'),
    ).toMatch(
      /^cannot be used together with state\.redis\.url: give either url \(one Redis\) or sentinels and sentinelMaster/,
    );
  });

  it('asks for url or sentinels when the store is redis and neither is given', () => {
    expect(problemAt({ env: { PAIA_STATE_STORE: 'redis' } }, 'state.redis.url')).toMatch(
      /^is required when state\.store is "redis": give state\.redis\.url \(one Redis\) or state\.redis\.sentinels with state\.redis\.sentinelMaster \(Redis Sentinel\), e\.g\. "redis:\/\/127\.0\.0\.1:6379" \(PAIA_STATE_REDIS_URL\)/,
    );
  });

  it('needs the master name with sentinels, and the sentinel settings only with sentinels', () => {
    expect(
      problemAt({ env: { ...SENTINEL_ENV, PAIA_STATE_REDIS_SENTINEL_MASTER: '' } }, 'state.redis.sentinelMaster'),
    ).toMatch(/^is required with state\.redis\.sentinels: the name the sentinels monitor the master by/);
    const lines = problemLines({
      env: {
        PAIA_STATE_STORE: 'redis',
        PAIA_STATE_REDIS_URL: 'redis://127.0.0.1:6379',
        PAIA_STATE_REDIS_SENTINEL_MASTER: 'mymaster',
        PAIA_STATE_REDIS_SENTINEL_PASSWORD: 'sentinel-pw',
      },
    });
    expect(lines).toEqual([
      'state.redis.sentinelMaster: is used only with state.redis.sentinels: set the sentinels\' addresses too, or leave it out (got "mymaster", from PAIA_STATE_REDIS_SENTINEL_MASTER)',
      "state.redis.sentinelPassword: is used only with state.redis.sentinels: set the sentinels' addresses too, or leave it out (value hidden, from PAIA_STATE_REDIS_SENTINEL_PASSWORD)",
    ]);
  });

  it('names each sentinel address that is not host:port', () => {
    const lines = problemLines({
      env: { ...SENTINEL_ENV, PAIA_STATE_REDIS_SENTINELS: '10.0.0.1:26379, redis://10.0.0.2:26379, ::1' },
    });
    expect(lines).toEqual([
      expect.stringMatching(/^state\.redis\.sentinels: has "redis:\/\/10\.0\.0\.2:26379", which is not host:port/),
      expect.stringMatching(/^state\.redis\.sentinels: has "::1", which is not host:port .*"\[2001:db8::1\]:26379"/),
    ]);
  });

  it('refuses a password given both in the URL and in state.redis.password, showing neither', () => {
    const error = configError({
      env: {
        PAIA_STATE_STORE: 'redis',
        PAIA_STATE_REDIS_URL: 'redis://:url-pw@127.0.0.1:6379',
        PAIA_STATE_REDIS_PASSWORD: 'setting-pw',
      },
    });
    expect(error.problems.map((problem) => problem.path)).toEqual(['state.redis.password']);
    expect(error.message).toContain('is given twice, here and in state.redis.url');
    expect(error.message).not.toMatch(/url-pw|setting-pw/);
    // Without a password in the URL, the setting is the password.
    const config = loadConfig({
      env: {
        PAIA_STATE_STORE: 'redis',
        PAIA_STATE_REDIS_URL: 'redis://127.0.0.1:6379',
        PAIA_STATE_REDIS_PASSWORD: 'pw',
      },
    });
    expect(stateStoreSettings(config).redis.password).toBe('pw');
  });

  it('refuses tls with a redis:// URL: the scheme says it', () => {
    expect(
      problemAt(
        {
          env: {
            PAIA_STATE_STORE: 'redis',
            PAIA_STATE_REDIS_URL: 'redis://127.0.0.1:6379',
            PAIA_STATE_REDIS_TLS: 'true',
          },
        },
        'state.redis.tls',
      ),
    ).toMatch(/^is for state\.redis\.sentinels; with state\.redis\.url the URL's scheme says whether to use TLS/);
    expect(
      stateStoreSettings(loadConfig({ env: { ...SENTINEL_ENV, PAIA_STATE_REDIS_TLS: 'yes' } })).redis.sentinel?.tls,
    ).toBe(true);
  });
});
