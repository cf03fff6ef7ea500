import { readFileSync } from 'node:fs';
import type tls from 'node:tls';
import { RequestLink } from '../../backend/daia/request-link.js';
import type { DaiaServiceOptions } from '../../backend/daia/service.js';
import type { ItemCacheOptions } from '../../backend/item-cache.js';
import type { Sip2BackendOptions } from '../../backend/sip2-backend.js';
import { compileUriTemplates, type UriTemplates, type UriTemplatesConfig } from '../../backend/uris.js';
import type { Config } from '../../config/index.js';
import {
  type Charset,
  type ConnectionOptions,
  type Dialect,
  loadDialect,
  maintenancePause,
  type PoolOptions,
  Sip2Messages,
  terminatorOf,
} from '../../sip2/index.js';
import { type DemoOptions, demoOptions } from '../demo.js';

/**
 * The SIP2 side as plain options, read from the configuration once
 * (sip2Options): the gateway and the doctor build their sessions, pool,
 * backend and DAIA from these and never look at the configuration again.
 */

/** Where sessions go: the configured ILS, or the embedded simulator once it runs. */
export interface Sip2Target {
  host: string;
  port: number;
}

/**
 * The settings the doctor reports and advises on, named as in the
 * configuration file. A view the gateway makes, so nothing outside it reads
 * the configuration itself.
 */
export interface Sip2Settings {
  /** null: the embedded simulator (demo mode). */
  host: string | null;
  port: number;
  tls: boolean;
  charset: Charset;
  errorDetection: boolean;
  terminal: { user: string; location: string };
  institution: string;
  timeouts: { connectMs: number; responseMs: number };
  pool: { max: number; maxWaiting: number; acquireTimeoutMs: number; keepaliveMs: number };
  circuit: { failureThreshold: number };
  pageSize: number;
  maxListEntries: number;
  /** The embedded simulator's settings while sip2.host is not set. */
  demo: { dialect: string; sip2Port: number } | null;
  /** paia.expiresWhenUnknown: the `expires` of active accounts whose ILS sends no expiry date; null: none. */
  expiresWhenUnknown: string | null;
}

/** One session's settings but where it goes and who watches it (charset, terminal account, timeouts, TLS). */
type SessionSettings = Omit<ConnectionOptions, 'id' | 'host' | 'port' | 'logger' | 'anomalies' | 'onRoundTrip'>;

/** The pool's settings but how it opens sessions and where it logs (the Sip2Pool constructor's options). */
type PoolSettings = Omit<PoolOptions, 'connect' | 'logger'>;

/** What every PAIA backend over the pool is built with. */
type BackendSettings = Pick<
  Sip2BackendOptions,
  'messages' | 'dialect' | 'pageSize' | 'currency' | 'uris' | 'expiresWhenUnknown' | 'maxParallel' | 'maxListEntries'
>;

/** What DAIA over the pool is built with. */
interface DaiaSettings {
  uris: UriTemplates;
  institution: string;
  /** daia.poolShare, and the pool's bounds its requests wait with. */
  share: { share: number; maxConnections: number; maxWaiting: number; waitTimeoutMs: number };
  /** daia.department, without the library's name (the pool's latest 98 gives that). */
  department: NonNullable<DaiaServiceOptions['department']>;
  /** daia.requestUrl, compiled. */
  requestLink: RequestLink;
  /** daia.shelfRequests. */
  onShelf: boolean;
  /** daia.records.idPrefix. */
  recordIdPrefix: string | null;
}

/** cache.accounts, when on. */
interface AccountWindowSettings {
  windowMs: number;
  maxPatrons: number;
  /** paia.patronIdSecret: keys the patrons' digests, the same on every instance. */
  keySecret: string | null;
}

export interface Sip2Options {
  readonly dialect: Dialect;
  /** The configured ILS; null in demo mode, where the embedded simulator's listener is the target. */
  readonly target: Sip2Target | null;
  /** Demo mode (no sip2.host): the embedded simulator to start; null with a real ILS. */
  readonly demo: DemoOptions | null;
  readonly session: SessionSettings;
  readonly pool: PoolSettings;
  /** The SIP2 request messages (institution and terminal password filled in). */
  readonly messages: Sip2Messages;
  readonly backend: BackendSettings;
  readonly daia: DaiaSettings;
  /** cache.items; null: off. */
  readonly itemCache: Omit<ItemCacheOptions, 'onInvalidate'> | null;
  /** cache.accounts; null: off. */
  readonly accountWindow: AccountWindowSettings | null;
  readonly settings: Sip2Settings;
  /** Values that must never be printed (the terminal password), for those who print. */
  readonly secrets: readonly string[];
}

/**
 * Reads the SIP2 settings once (the dialect file, the TLS files); throws with
 * a readable reason. `ownUrl`: the gateway's base URL, which the demo's item
 * and edition URIs start with when paia.itemUri / paia.editionUri are not set
 * (demo mode only: with sip2.host they are required), and the default
 * daia.requestUrl.
 */
export function sip2Options(config: Config, ownUrl: string): Sip2Options {
  const { sip2, paia, daia, cache } = config;
  const demo = demoOptions(config);
  const dialect = loadDialect(demo ? demo.dialect : sip2.dialect);
  const tlsOptions = sip2.tls ? tlsOptionsOf(sip2.tls) : undefined;
  const charset = demo ? demo.charset : (sip2.charset ?? dialect.charset);
  const messages = new Sip2Messages({
    institutionId: sip2.institution,
    terminalPassword: sip2.terminalPasswordInMessages ? sip2.terminal.password : undefined,
  });
  const uris: UriTemplatesConfig = {
    item: paia.itemUri ?? `${ownUrl}/item/{barcode}`,
    edition: paia.editionUri ?? `${ownUrl}/title/{title}`,
    storage: paia.storageUri,
    patronType: paia.patronTypeUri,
  };
  const pageSize = sip2.pageSize ?? dialect.pageSize;
  const { accounts, items } = cache;

  return {
    dialect,
    target: sip2.host === null ? null : { host: sip2.host, port: sip2.port },
    demo,
    session: {
      tls: tlsOptions,
      charset,
      terminator: terminatorOf(dialect),
      errorDetection: sip2.errorDetection,
      loginUserId: sip2.terminal.user,
      loginPassword: sip2.terminal.password,
      locationCode: sip2.terminal.location,
      connectTimeoutMs: sip2.timeouts.connectMs,
      responseTimeoutMs: sip2.timeouts.responseMs,
      maxResends: sip2.maxResends,
    },
    pool: {
      min: sip2.pool.min,
      max: sip2.pool.max,
      acquireTimeoutMs: sip2.pool.acquireTimeoutMs,
      maxWaiting: sip2.pool.maxWaiting,
      keepaliveIntervalMs: sip2.pool.keepaliveMs,
      maxLifetimeMs: sip2.pool.maxLifetimeMs,
      circuit: {
        failureThreshold: sip2.circuit.failureThreshold,
        coolDownMs: { initial: sip2.circuit.coolDownMs, max: sip2.circuit.maxCoolDownMs },
      },
      pause: maintenancePause(sip2.maintenance),
    },
    messages,
    backend: {
      messages,
      dialect,
      pageSize,
      currency: sip2.currency,
      uris,
      expiresWhenUnknown: paia.expiresWhenUnknown,
      // More requests of one call than there are connections would only wait in the pool's queue,
      // where a few large calls at once could fill sip2.pool.maxWaiting and turn others away (503).
      maxParallel: sip2.pool.max,
      maxListEntries: sip2.maxListEntries,
    },
    daia: {
      uris: compileUriTemplates(uris),
      institution: sip2.institution,
      // DAIA's requests wait for their share as requests wait for a connection, with the pool's bounds.
      share: {
        share: daia.poolShare,
        maxConnections: sip2.pool.max,
        maxWaiting: sip2.pool.maxWaiting,
        waitTimeoutMs: sip2.pool.acquireTimeoutMs,
      },
      department: { ...daia.department },
      // Where a patron asks for a copy; by default this gateway's own DAIA answer for it, a real URL built as its others are.
      requestLink: new RequestLink(daia.requestUrl ?? `${ownUrl}/daia?id={item}&format=json`),
      onShelf: daia.shelfRequests,
      recordIdPrefix: daia.records.idPrefix,
    },
    itemCache: items.enabled ? { ttlMs: items.ttlMs, maxEntries: items.maxEntries } : null,
    accountWindow: accounts.enabled
      ? { windowMs: accounts.windowMs, maxPatrons: accounts.maxPatrons, keySecret: paia.patronIdSecret }
      : null,
    settings: {
      host: sip2.host,
      port: sip2.port,
      tls: tlsOptions !== undefined,
      charset,
      errorDetection: sip2.errorDetection,
      terminal: { user: sip2.terminal.user, location: sip2.terminal.location },
      institution: sip2.institution,
      timeouts: { ...sip2.timeouts },
      pool: {
        max: sip2.pool.max,
        maxWaiting: sip2.pool.maxWaiting,
        acquireTimeoutMs: sip2.pool.acquireTimeoutMs,
        keepaliveMs: sip2.pool.keepaliveMs,
      },
      circuit: { failureThreshold: sip2.circuit.failureThreshold },
      pageSize,
      maxListEntries: sip2.maxListEntries,
      demo: demo ? { dialect: demo.dialect, sip2Port: demo.port } : null,
      expiresWhenUnknown: paia.expiresWhenUnknown,
    },
    secrets: [sip2.terminal.password],
  };
}

/** TLS options towards the ILS: CA, client certificate, name check. */
function tlsOptionsOf(settings: NonNullable<Config['sip2']['tls']>): tls.ConnectionOptions {
  return {
    ca: settings.ca ? readFileSync(settings.ca) : undefined,
    cert: settings.cert ? readFileSync(settings.cert) : undefined,
    key: settings.key ? readFileSync(settings.key) : undefined,
    rejectUnauthorized: settings.rejectUnauthorized,
    servername: settings.servername,
  };
}
