/**
 * The composition root's Config -> options functions, where they hold logic:
 * demo mode against a real ILS, defaults that follow from other settings,
 * units, and the secrets of auth.clients taken from the loader, never from
 * the environment again.
 */
import { describe, expect, it } from 'vitest';
import { TrustedClients } from '../../../src/auth/trusted-clients.js';
import { loadConfig } from '../../../src/config/index.js';
import { appSettings } from '../../../src/gateway/parts/app.js';
import { configuredOwnUrl, httpSettings } from '../../../src/gateway/parts/http.js';
import { sip2Options } from '../../../src/gateway/parts/sip2-options.js';
import { stateOptions } from '../../../src/gateway/parts/state.js';
import { DEMO_RECORD_MAPPING, recordOptions } from '../../../src/gateway/records.js';
import { ILS_ACCOUNT_ENV } from '../config/helpers.js';

const OWN = 'http://127.0.0.1:3000/paia';
const demo = loadConfig({ env: {} });
const ils = loadConfig({ env: { ...ILS_ACCOUNT_ENV, PAIA_SIP2_HOST: 'ils.example.org', PAIA_SIP2_PORT: '6001' } });

describe('sip2Options', () => {
  it('in demo mode: no target, the embedded simulator with demo.*, its dialect and charset, URIs below the own URL', () => {
    const options = sip2Options(demo, OWN);
    expect(options.target).toBeNull();
    expect(options.demo).toEqual({
      port: demo.demo.sip2Port,
      dialect: demo.demo.dialect,
      charset: demo.demo.charset,
      errorDetection: demo.sip2.errorDetection,
    });
    expect(options.dialect.name).toBe(demo.demo.dialect);
    expect(options.session.charset).toBe(demo.demo.charset);
    expect(options.backend.uris.item).toBe(`${OWN}/item/{barcode}`);
    expect(options.daia.requestLink).toBeDefined();
    expect(options.settings.demo).toEqual({ dialect: demo.demo.dialect, sip2Port: demo.demo.sip2Port });
  });

  it('with sip2.host: that target, no simulator, the configured URIs, and the terminal password among the secrets', () => {
    const options = sip2Options(ils, OWN);
    expect(options.target).toEqual({ host: 'ils.example.org', port: 6001 });
    expect(options.demo).toBeNull();
    expect(options.settings.demo).toBeNull();
    expect(options.backend.uris.item).toBe('https://lib.example.org/item/{barcode}');
    expect(options.session.loginPassword).toBe('gateway-secret');
    expect(options.secrets).toEqual(['gateway-secret']);
  });

  it('gives the pool and the caches milliseconds, and DAIA the pool bounds it waits with', () => {
    const { sip2, cache, daia } = ils;
    const options = sip2Options(ils, OWN);
    expect(options.pool).toMatchObject({
      min: sip2.pool.min,
      max: sip2.pool.max,
      keepaliveIntervalMs: sip2.pool.keepaliveMs,
      maxLifetimeMs: sip2.pool.maxLifetimeMs,
    });
    expect(options.backend.maxParallel).toBe(sip2.pool.max);
    expect(options.daia.share).toEqual({
      share: daia.poolShare,
      maxConnections: sip2.pool.max,
      maxWaiting: sip2.pool.maxWaiting,
      waitTimeoutMs: sip2.pool.acquireTimeoutMs,
    });
    expect(options.itemCache).toEqual(
      cache.items.enabled ? { ttlMs: cache.items.ttlMs, maxEntries: cache.items.maxEntries } : null,
    );
    expect(options.accountWindow?.windowMs ?? null).toBe(cache.accounts.enabled ? cache.accounts.windowMs : null);
  });

  it('turns the caches off as cache.*.enabled says', () => {
    const off = loadConfig({ env: { PAIA_CACHE_ITEMS_ENABLED: 'false', PAIA_CACHE_ACCOUNTS_ENABLED: 'false' } });
    const options = sip2Options(off, OWN);
    expect(options.itemCache).toBeNull();
    expect(options.accountWindow).toBeNull();
  });
});

describe('stateOptions', () => {
  it('gives the login throttle milliseconds, the call deadline as its attempt lifetime, and no own limits unless set', () => {
    const { auth, http } = demo;
    const { throttle } = stateOptions(demo).auth;
    expect(throttle).toMatchObject({
      baseDelayMs: auth.bruteForce.lockoutBaseMs,
      maxDelayMs: auth.bruteForce.lockoutMaxMs,
      maxSlowdownMs: auth.bruteForce.maxSlowdownMs,
      attemptTtlMs: http.requestTimeoutMs,
    });
    expect(throttle.trusted).toEqual({ freeAttemptsPerAddress: undefined, attemptsPerSecond: undefined });
  });

  it("builds the trusted clients from the secrets the loader read, not from this process's environment", async () => {
    const secret = 'a-client-secret-only-the-loader-saw';
    const variable = 'PAIA_TEST_PARTS_CLIENT_SECRET';
    expect(process.env[variable]).toBeUndefined();
    const client = { id: 'vufind', secretEnv: variable, allowedAddresses: ['192.0.2.10'] };
    const config = loadConfig({ env: { PAIA_AUTH_CLIENTS: JSON.stringify([client]), [variable]: secret } });
    const clients = await TrustedClients.fromSettings(stateOptions(config).auth.clients);
    expect(await clients.find('vufind')?.verify(secret)).toBe(true);
    expect(await clients.find('vufind')?.verify('a-guess-of-the-same-length-000000')).toBe(false);
  });
});

describe('appSettings and httpSettings', () => {
  it('send HSTS only over TLS or behind a trusted proxy, and bound DAIA ids by paia.maxDocs unless daia.maxIds is set', () => {
    expect(appSettings(demo).hsts).toBe(false);
    const proxied = loadConfig({
      env: { PAIA_HTTP_TRUSTED_PROXY: 'true', PAIA_HTTP_PUBLIC_URL: 'https://x.example/p' },
    });
    expect(appSettings(proxied)).toMatchObject({ hsts: true, trustedProxy: true });
    expect(appSettings(demo).daia.maxIds).toBe(demo.daia.maxIds ?? demo.paia.maxDocs);
    expect(appSettings(loadConfig({ env: { PAIA_DAIA_MAX_IDS: '7' } })).daia.maxIds).toBe(7);
  });

  it('serve /metrics only when metrics are on', () => {
    expect(appSettings(loadConfig({ env: { PAIA_METRICS_ENABLED: 'false' } })).metrics).toBeNull();
    expect(appSettings(loadConfig({ env: { PAIA_METRICS_ENABLED: 'true' } })).metrics).toEqual({
      allowedClients: demo.metrics.allowedClients,
    });
  });

  it('know the own URL before listening: http.publicUrl, else the address in brackets when it is IPv6', () => {
    expect(configuredOwnUrl(loadConfig({ env: { PAIA_HTTP_HOST: '::1', PAIA_HTTP_PORT: '8080' } }))).toBe(
      `http://[::1]:8080${demo.http.basePath}`,
    );
    const behind = loadConfig({
      env: { PAIA_HTTP_TRUSTED_PROXY: 'true', PAIA_HTTP_PUBLIC_URL: 'https://x.example/p' },
    });
    expect(configuredOwnUrl(behind)).toBe('https://x.example/p');
    expect(httpSettings(behind).publicUrl).toBe('https://x.example/p');
  });
});

describe('recordOptions', () => {
  it('map records with the demo mapping in demo mode without a source, and with nothing in front of a real ILS', () => {
    expect(recordOptions(demo).file?.path).toBe(DEMO_RECORD_MAPPING);
    expect(recordOptions(demo).http).toBeNull();
    expect(recordOptions(ils)).toEqual({ file: null, http: null });
  });
});
