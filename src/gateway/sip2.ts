import { readFileSync } from 'node:fs';
import type tls from 'node:tls';
import { AccountWindow } from '../backend/account-window.js';
import type { RecordSource } from '../backend/daia/records/source.js';
import { RequestLink } from '../backend/daia/request-link.js';
import { DaiaService } from '../backend/daia/service.js';
import { ItemInfoCache } from '../backend/item-cache.js';
import { PoolShare, shareOf } from '../backend/pool-share.js';
import { SharedReads } from '../backend/shared-reads.js';
import { acsSupportsOf, Sip2Backend } from '../backend/sip2-backend.js';
import type { Backend } from '../backend/types.js';
import { compileUriTemplates, type UriTemplatesConfig } from '../backend/uris.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../log.js';
import {
  type AcsStatus,
  type AnomalyLog,
  type Charset,
  type ConnectionOptions,
  type Dialect,
  loadDialect,
  maintenancePause,
  Sip2Messages,
  Sip2Pool,
  sip2Sessions,
  terminatorOf,
} from '../sip2/index.js';
import { KeyedHash } from '../state/keyed-hash.js';
import { demoStarter, type EmbeddedSimulator } from './demo.js';

/**
 * The SIP2 side of the gateway, from the configuration: where the ILS is,
 * how a session talks to it, the pool, the message builders, the PAIA
 * backend and DAIA over the pool. The gateway runs exactly this, and the
 * doctor checks exactly this.
 */

/** Where sessions go: the configured ILS, or the embedded simulator once it runs. */
export interface Sip2Target {
  host: string;
  port: number;
}

/** What watches a session: where it logs, and the metrics and anomaly hooks when there are any. */
interface SessionHooks {
  logger?: Logger | undefined;
  anomalies?: AnomalyLog | undefined;
  onRoundTrip?: ConnectionOptions['onRoundTrip'];
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
  pool: { max: number; maxWaiting: number; acquireTimeoutMs: number; keepaliveSeconds: number };
  circuit: { failureThreshold: number };
  pageSize: number;
  maxListEntries: number;
  /** The embedded simulator's settings while sip2.host is not set. */
  demo: { dialect: string; sip2Port: number } | null;
  /** paia.expiresWhenUnknown: the `expires` of active accounts whose ILS sends no expiry date; null: none. */
  expiresWhenUnknown: string | null;
}

export interface Sip2Setup {
  readonly dialect: Dialect;
  /** The configured ILS; null in demo mode, where the embedded simulator's listener is the target. */
  readonly target: Sip2Target | null;
  /** Demo mode (no sip2.host): starts the embedded simulator, the target of every session; null with a real ILS. */
  readonly startDemo: ((logger: Logger) => Promise<EmbeddedSimulator>) | null;
  readonly settings: Sip2Settings;
  /** Values that must never be printed (the terminal password), for those who print. */
  readonly secrets: readonly string[];
  /** The SIP2 request messages (institution and terminal password filled in). */
  readonly messages: Sip2Messages;
  /** One session's settings towards `target`: charset, terminal account, timeouts, TLS. */
  session(target: Sip2Target, hooks?: SessionHooks): Omit<ConnectionOptions, 'id'>;
  /**
   * The pool as the gateway runs it (sip2.pool, the refill backoff,
   * sip2.circuit). The doctor overrides `min` (0: sessions only as its checks
   * need them) and the keepalive (off: it runs for seconds, not hours).
   */
  pool(
    target: Sip2Target,
    hooks: SessionHooks & { logger: Logger },
    overrides?: { min?: number; keepaliveIntervalMs?: number },
  ): Sip2Pool;
  /** The PAIA backend over a pool; `acsStatus` (default: the pool's) tells whether the ILS supports holds and renewals (cancancel, canrenew). */
  backend(
    pool: Sip2Pool,
    options?: { acsStatus?: () => AcsStatus | null; logger?: Logger; itemCache?: ItemInfoCache | null },
  ): Sip2Backend;
  /** DAIA over a pool, holding at most daia.poolShare of its connections at once; records from `records` (none: unknown documents). */
  daia(pool: Sip2Pool, itemCache: ItemInfoCache | null, records?: RecordSource | null): DaiaService;
  /**
   * The account window of cache.accounts in front of `backend`, null when it
   * is off; `onWrite` tells other instances of each patron (by digest) whose
   * reads a write on this one dropped.
   */
  accountWindow(
    backend: Backend,
    onWrite?: (patron: string, outcomeUnknown: boolean) => Promise<void>,
  ): AccountWindow | null;
  /** The item-information cache of cache.items, null when it is off; `onInvalidate` tells other instances of each item this one drops. */
  itemCache(onInvalidate?: (item: string, outcomeUnknown: boolean) => void): ItemInfoCache | null;
  /**
   * Another instance wrote `item`, or an account it names by digest only
   * (`anyPatron`): reads of it in flight over `pool` are joined by no later
   * read (SharedReads.forget).
   */
  forgetReads(pool: Sip2Pool, subject: { item: string } | { anyPatron: true }): void;
}

/**
 * The gateway's own base URL (base path included, no trailing slash) as the
 * configuration knows it before the listener runs: http.publicUrl, or the
 * configured address and port. The running gateway passes where it really
 * listens (http.port 0 picks a free port).
 */
export function configuredOwnUrl(config: Config): string {
  const { http } = config;
  if (http.publicUrl !== null) return http.publicUrl;
  const host = http.host.includes(':') ? `[${http.host}]` : http.host;
  return `${http.tls ? 'https' : 'http'}://${host}:${http.port}${http.basePath}`;
}

/**
 * Reads the SIP2 settings once (the dialect file, the TLS files); throws with
 * a readable reason. `ownUrl`: the gateway's base URL, which the demo's item
 * and edition URIs start with when paia.itemUri / paia.editionUri are not set
 * (demo mode only: with sip2.host they are required).
 */
export function sip2Setup(config: Config, ownUrl: string = configuredOwnUrl(config)): Sip2Setup {
  const { sip2 } = config;
  const demo = sip2.host === null;
  const dialect = loadDialect(demo ? config.demo.dialect : sip2.dialect);
  const tlsOptions = sip2.tls ? tlsOptionsOf(sip2.tls) : undefined;
  const charset = demo ? config.demo.charset : (sip2.charset ?? dialect.charset);
  const messages = new Sip2Messages({
    institutionId: sip2.institution,
    terminalPassword: sip2.terminalPasswordInMessages ? sip2.terminal.password : undefined,
  });
  // The backend and DAIA over one pool share identical reads in flight (one 17 for an item both ask about).
  const sharedReads = new WeakMap<Sip2Pool, SharedReads>();
  const sharedReadsOf = (pool: Sip2Pool): SharedReads => {
    let reads = sharedReads.get(pool);
    if (reads === undefined) {
      reads = new SharedReads();
      sharedReads.set(pool, reads);
    }
    return reads;
  };
  const uris: UriTemplatesConfig = {
    item: config.paia.itemUri ?? `${ownUrl}/item/{barcode}`,
    edition: config.paia.editionUri ?? `${ownUrl}/title/{title}`,
    storage: config.paia.storageUri,
    patronType: config.paia.patronTypeUri,
  };
  const templates = compileUriTemplates(uris);
  const pageSize = sip2.pageSize ?? dialect.pageSize;
  // Where a patron asks for a copy; by default this gateway's own DAIA answer for it, a real URL built as its others are.
  const requestLink = new RequestLink(config.daia.requestUrl ?? `${ownUrl}/daia?id={item}&format=json`);

  const session = (target: Sip2Target, hooks: SessionHooks = {}): Omit<ConnectionOptions, 'id'> => ({
    host: target.host,
    port: target.port,
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
    logger: hooks.logger,
    anomalies: hooks.anomalies,
    onRoundTrip: hooks.onRoundTrip,
  });

  return {
    dialect,
    target: sip2.host === null ? null : { host: sip2.host, port: sip2.port },
    startDemo: demoStarter(config),
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
        keepaliveSeconds: sip2.pool.keepaliveSeconds,
      },
      circuit: { failureThreshold: sip2.circuit.failureThreshold },
      pageSize,
      maxListEntries: sip2.maxListEntries,
      demo: demo ? { dialect: config.demo.dialect, sip2Port: config.demo.sip2Port } : null,
      expiresWhenUnknown: config.paia.expiresWhenUnknown,
    },
    secrets: [sip2.terminal.password],
    messages,
    session,
    pool: (target, hooks, overrides = {}) =>
      new Sip2Pool({
        connect: sip2Sessions(session(target, hooks)),
        min: overrides.min ?? sip2.pool.min,
        max: sip2.pool.max,
        acquireTimeoutMs: sip2.pool.acquireTimeoutMs,
        maxWaiting: sip2.pool.maxWaiting,
        keepaliveIntervalMs: overrides.keepaliveIntervalMs ?? sip2.pool.keepaliveSeconds * 1000,
        maxLifetimeMs: sip2.pool.maxLifetimeSeconds * 1000,
        circuit: {
          failureThreshold: sip2.circuit.failureThreshold,
          coolDownMs: { initial: sip2.circuit.coolDownMs, max: sip2.circuit.maxCoolDownMs },
        },
        pause: maintenancePause(sip2.maintenance),
        logger: hooks.logger,
      }),
    backend: (pool, options = {}) =>
      new Sip2Backend({
        sharedReads: sharedReadsOf(pool),
        send: (message, callOptions) => pool.send(message, callOptions),
        messages,
        dialect,
        pageSize,
        currency: sip2.currency,
        uris,
        acsStatus: () => options.acsStatus?.() ?? pool.acsStatus,
        expiresWhenUnknown: config.paia.expiresWhenUnknown,
        logger: options.logger,
        itemCache: options.itemCache,
        // More requests of one call than there are connections would only wait in the pool's queue,
        // where a few large calls at once could fill sip2.pool.maxWaiting and turn others away (503).
        maxParallel: sip2.pool.max,
        maxListEntries: sip2.maxListEntries,
      }),
    daia: (pool, itemCache, records = null) =>
      new DaiaService({
        sharedReads: sharedReadsOf(pool),
        send: (message, callOptions) => pool.send(message, callOptions),
        messages,
        dialect,
        uris: templates,
        institution: sip2.institution,
        itemCache,
        // DAIA's requests wait for their share as requests wait for a connection, with the pool's bounds.
        share: new PoolShare({
          name: 'DAIA',
          share: config.daia.poolShare,
          connections: () => Math.min(sip2.pool.max, pool.stats().sessionLimit ?? sip2.pool.max),
          maxWaiting: sip2.pool.maxWaiting,
          waitTimeoutMs: sip2.pool.acquireTimeoutMs,
        }),
        // More 17s of one request than its share can run would only queue, ahead of other DAIA requests.
        maxParallel: shareOf(sip2.pool.max, config.daia.poolShare),
        department: { ...config.daia.department, libraryName: () => pool.acsStatus?.libraryName },
        requests: {
          link: requestLink,
          acsSupportsHolds: () => acsSupportsOf(pool.acsStatus, 'hold'),
          onShelf: config.daia.shelfRequests,
        },
        // A record's copies go the same way: the same share, the same bound per request.
        records: records && {
          source: records,
          ids: { edition: templates.edition, idPrefix: config.daia.records.idPrefix },
        },
      }),
    forgetReads: (pool, subject) => sharedReadsOf(pool).forget(subject),
    accountWindow: (backend, onWrite) => {
      const { accounts } = config.cache;
      if (!accounts.enabled) return null;
      // The same patron has the same key on every instance, and the barcode never reaches the store's channel.
      const keys = new KeyedHash(config.paia.patronIdSecret);
      return new AccountWindow({
        backend,
        windowMs: accounts.windowSeconds * 1000,
        maxPatrons: accounts.maxPatrons,
        keyOf: (barcode) => keys.digest(`account-window:${barcode}`).toString('base64url'),
        onWrite,
      });
    },
    itemCache: (onInvalidate) => {
      const { items } = config.cache;
      if (!items.enabled) return null;
      return new ItemInfoCache({
        ttlMs: items.ttlSeconds * 1000,
        maxEntries: items.maxEntries,
        ...(onInvalidate ? { onInvalidate } : {}),
      });
    },
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
