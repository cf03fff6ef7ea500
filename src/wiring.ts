import { readFileSync } from 'node:fs';
import type tls from 'node:tls';
import { ItemInfoCache } from './backend/item-cache.js';
import { acsSupportsHoldsOf, Sip2Backend } from './backend/sip2-backend.js';
import type { Config } from './config/index.js';
import type { Charset } from './sip2/charset.js';
import type { Logger } from './log.js';
import type { AnomalyLog } from './sip2/anomalies.js';
import { type ConnectionOptions, sip2Sessions } from './sip2/connection.js';
import { type Dialect, terminatorOf } from './sip2/dialect.js';
import { Sip2Pool } from './sip2/pool.js';
import { Sip2Requests } from './sip2/requests.js';
import type { AcsStatus } from './sip2/spec.js';

/**
 * The pieces the gateway and the doctor build from the configuration in the
 * same way, so that what the doctor checks is exactly what the gateway runs.
 */

/** TLS options towards the ILS: CA, client certificate, name check. */
export function sip2TlsOptions(config: NonNullable<Config['sip2']['tls']>): tls.ConnectionOptions {
  return {
    ca: config.ca ? readFileSync(config.ca) : undefined,
    cert: config.cert ? readFileSync(config.cert) : undefined,
    key: config.key ? readFileSync(config.key) : undefined,
    rejectUnauthorized: config.rejectUnauthorized,
    servername: config.servername,
  };
}

/** One SIP2 session's settings: where, how (dialect, charset, TLS), who (terminal account) and how long to wait. */
export function sip2ConnectionOptions(
  config: Config,
  dialect: Dialect,
  target: { host: string; port: number },
  tlsOptions: tls.ConnectionOptions | undefined,
): Omit<ConnectionOptions, 'id' | 'logger'> {
  const { sip2 } = config;
  return {
    host: target.host,
    port: target.port,
    tls: tlsOptions,
    charset: sip2Charset(config, dialect),
    terminator: terminatorOf(dialect),
    errorDetection: sip2.errorDetection,
    loginUserId: sip2.terminal.user,
    loginPassword: sip2.terminal.password,
    locationCode: sip2.terminal.location,
    connectTimeoutMs: sip2.timeouts.connectMs,
    responseTimeoutMs: sip2.timeouts.responseMs,
    maxResends: sip2.maxResends,
  };
}

/** The wire charset: the demo's while the simulator is embedded, else sip2.charset, else the dialect's. */
export function sip2Charset(config: Config, dialect: Dialect): Charset {
  if (config.sip2.host === null) return config.demo.charset;
  return config.sip2.charset ?? dialect.charset;
}

/** What watches the pool's sessions: where they log, and the metrics and anomaly hooks when there are any. */
export interface Sip2PoolHooks {
  logger: Logger;
  anomalies?: AnomalyLog | undefined;
  onRoundTrip?: ConnectionOptions['onRoundTrip'];
}

/**
 * The SIP2 pool as the gateway runs it: sessions as sip2ConnectionOptions
 * says (TLS from sip2.tls), sip2.pool, the refill backoff and sip2.circuit.
 * The doctor overrides `min` (0: sessions only as its checks need them) and
 * the keepalive (off: it runs for seconds, not hours).
 */
export function sip2Pool(
  config: Config,
  dialect: Dialect,
  target: { host: string; port: number },
  hooks: Sip2PoolHooks,
  overrides: { min?: number; keepaliveIntervalMs?: number } = {},
): Sip2Pool {
  const { sip2 } = config;
  return new Sip2Pool({
    connect: sip2Sessions({
      ...sip2ConnectionOptions(config, dialect, target, sip2.tls ? sip2TlsOptions(sip2.tls) : undefined),
      onRoundTrip: hooks.onRoundTrip,
      logger: hooks.logger,
      anomalies: hooks.anomalies,
    }),
    min: overrides.min ?? sip2.pool.min,
    max: sip2.pool.max,
    acquireTimeoutMs: sip2.pool.acquireTimeoutMs,
    maxWaiting: sip2.pool.maxWaiting,
    keepaliveIntervalMs: overrides.keepaliveIntervalMs ?? sip2.pool.keepaliveSeconds * 1000,
    maxLifetimeMs: sip2.pool.maxLifetimeSeconds * 1000,
    backoff: { initialMs: 250, maxMs: 30_000 },
    circuit: {
      failureThreshold: sip2.circuit.failureThreshold,
      coolDownMs: { initial: sip2.circuit.coolDownMs, max: sip2.circuit.maxCoolDownMs },
    },
    logger: hooks.logger,
  });
}

export function sip2Requests(config: Config): Sip2Requests {
  return new Sip2Requests({
    institutionId: config.sip2.institution,
    terminalPassword: config.sip2.terminalPasswordInMessages ? config.sip2.terminal.password : undefined,
  });
}

export function uriTemplatesOf(config: Config) {
  return {
    item: config.paia.itemUri,
    edition: config.paia.editionUri,
    storage: config.paia.storageUri,
    patronType: config.paia.patronTypeUri,
  };
}

/** The PAIA backend over a pool; `acsStatus` tells whether the ILS supports holds (cancancel). */
export function sip2Backend(
  config: Config,
  dialect: Dialect,
  pool: Sip2Pool,
  options: { requests?: Sip2Requests; acsStatus?: () => AcsStatus | null; logger?: Logger; itemCache?: ItemInfoCache | null } = {},
): Sip2Backend {
  return new Sip2Backend({
    send: (message, callOptions) => pool.request(message, callOptions),
    requests: options.requests ?? sip2Requests(config),
    dialect,
    pageSize: config.sip2.pageSize ?? dialect.pageSize,
    currency: config.sip2.currency,
    uris: uriTemplatesOf(config),
    acsSupportsHolds: () => acsSupportsHoldsOf(options.acsStatus?.() ?? pool.acsStatus),
    logger: options.logger,
    itemCache: options.itemCache,
    // More requests of one call than there are connections would only wait in the pool's queue,
    // where a few large calls at once could fill sip2.pool.maxWaiting and turn others away (503).
    maxParallel: config.sip2.pool.max,
    maxListEntries: config.sip2.maxListEntries,
  });
}

/** The item-information cache of cache.items; null when it is switched off. */
export function itemInfoCache(config: Config): ItemInfoCache | null {
  const { items } = config.cache;
  return items.enabled ? new ItemInfoCache({ ttlMs: items.ttlSeconds * 1000, maxEntries: items.maxEntries }) : null;
}
