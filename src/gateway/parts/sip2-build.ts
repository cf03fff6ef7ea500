import type { RecordSource } from '../../backend/daia/records/source.js';
import { DaiaService } from '../../backend/daia/service.js';
import type { ItemInfoCache } from '../../backend/item-cache.js';
import { PoolShare, shareOf } from '../../backend/pool-share.js';
import { SharedReads } from '../../backend/shared-reads.js';
import { acsSupportsOf, Sip2Backend } from '../../backend/sip2-backend.js';
import type { Config } from '../../config/index.js';
import type { Logger } from '../../log.js';
import {
  type AcsStatus,
  type AnomalyLog,
  type ConnectionOptions,
  type Dialect,
  type Sip2Messages,
  Sip2Pool,
  sip2Sessions,
} from '../../sip2/index.js';
import { type EmbeddedSimulator, startDemo } from '../demo.js';
import { configuredOwnUrl } from './http.js';
import { type Sip2Options, type Sip2Settings, type Sip2Target, sip2Options } from './sip2-options.js';

/**
 * The SIP2 parts built from their options (sip2-options.ts): sessions, the
 * pool, the PAIA backend and DAIA over it. The gateway runs exactly these
 * (sip2.ts), and the doctor checks exactly these (sip2Setup).
 */

/** What watches a session: where it logs, and the metrics and anomaly hooks when there are any. */
interface SessionHooks {
  logger?: Logger | undefined;
  anomalies?: AnomalyLog | undefined;
  onRoundTrip?: ConnectionOptions['onRoundTrip'];
}

/** One session's settings towards `target`: charset, terminal account, timeouts, TLS. */
function sessionOf(options: Sip2Options, target: Sip2Target, hooks: SessionHooks = {}): Omit<ConnectionOptions, 'id'> {
  return {
    host: target.host,
    port: target.port,
    ...options.session,
    logger: hooks.logger,
    anomalies: hooks.anomalies,
    onRoundTrip: hooks.onRoundTrip,
  };
}

/**
 * The pool as the gateway runs it (sip2.pool, the refill backoff,
 * sip2.circuit, sip2.maintenance): the one place a Sip2Pool is made. The
 * doctor overrides `min` (0: sessions only as its checks need them) and the
 * keepalive (off: it runs for seconds, not hours).
 */
export function newPool(
  options: Sip2Options,
  target: Sip2Target,
  hooks: SessionHooks & { logger: Logger },
  overrides: { min?: number; keepaliveIntervalMs?: number } = {},
): Sip2Pool {
  return new Sip2Pool({
    ...options.pool,
    min: overrides.min ?? options.pool.min,
    keepaliveIntervalMs: overrides.keepaliveIntervalMs ?? options.pool.keepaliveIntervalMs,
    connect: sip2Sessions(sessionOf(options, target, hooks)),
    logger: hooks.logger,
  });
}

/** What a PAIA backend over a pool takes besides its settings. */
interface BackendParts {
  /** Where its reads meet DAIA's over the same pool. */
  sharedReads: SharedReads;
  /** Whether the ILS supports holds and renewals (cancancel, canrenew); default: the pool's latest 98. */
  acsStatus?: (() => AcsStatus | null) | undefined;
  logger?: Logger | undefined;
  itemCache?: ItemInfoCache | null | undefined;
}

export function newBackend(options: Sip2Options, pool: Sip2Pool, parts: BackendParts): Sip2Backend {
  const { acsStatus } = parts;
  return new Sip2Backend({
    ...options.backend,
    sharedReads: parts.sharedReads,
    send: (message, callOptions) => pool.send(message, callOptions),
    acsStatus: () => acsStatus?.() ?? pool.acsStatus,
    logger: parts.logger,
    itemCache: parts.itemCache,
  });
}

/** DAIA over a pool, holding at most daia.poolShare of its connections at once; records from `records` (none: unknown documents). */
export function newDaia(
  options: Sip2Options,
  pool: Sip2Pool,
  parts: { sharedReads: SharedReads; itemCache: ItemInfoCache | null; records: RecordSource | null },
): DaiaService {
  const { daia } = options;
  const { maxConnections, ...share } = daia.share;
  return new DaiaService({
    sharedReads: parts.sharedReads,
    send: (message, callOptions) => pool.send(message, callOptions),
    messages: options.messages,
    dialect: options.dialect,
    uris: daia.uris,
    institution: daia.institution,
    itemCache: parts.itemCache,
    share: new PoolShare({
      name: 'DAIA',
      ...share,
      connections: () => Math.min(maxConnections, pool.stats().sessionLimit ?? maxConnections),
    }),
    // More 17s of one request than its share can run would only queue, ahead of other DAIA requests.
    maxParallel: shareOf(maxConnections, share.share),
    department: { ...daia.department, libraryName: () => pool.acsStatus?.libraryName },
    requests: {
      link: daia.requestLink,
      acsSupportsHolds: () => acsSupportsOf(pool.acsStatus, 'hold'),
      onShelf: daia.onShelf,
    },
    // A record's copies go the same way: the same share, the same bound per request.
    records: parts.records && {
      source: parts.records,
      ids: { edition: daia.uris.edition, idPrefix: daia.recordIdPrefix },
    },
  });
}

// ---------------------------------------------------------------- the doctor's view

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
  session(target: Sip2Target): Omit<ConnectionOptions, 'id'>;
  /** The pool as the gateway runs it; the doctor overrides `min` and the keepalive. */
  pool(
    target: Sip2Target,
    hooks: { logger: Logger },
    overrides?: { min?: number; keepaliveIntervalMs?: number },
  ): Sip2Pool;
  /** The PAIA backend over a pool; `acsStatus` (default: the pool's) tells whether the ILS supports holds and renewals. */
  backend(pool: Sip2Pool, options?: { acsStatus?: () => AcsStatus | null; logger?: Logger }): Sip2Backend;
}

/**
 * The SIP2 side as the gateway would build it, for the doctor: read from the
 * configuration once (sip2Options; throws with a readable reason), built by
 * the same functions as the gateway's.
 */
export function sip2Setup(config: Config, ownUrl: string = configuredOwnUrl(config)): Sip2Setup {
  const options = sip2Options(config, ownUrl);
  const { demo } = options;
  return {
    dialect: options.dialect,
    target: options.target,
    startDemo: demo && ((logger) => startDemo(demo, logger)),
    settings: options.settings,
    secrets: options.secrets,
    messages: options.messages,
    session: (target) => sessionOf(options, target),
    pool: (target, hooks, overrides) => newPool(options, target, hooks, overrides),
    backend: (pool, parts = {}) => newBackend(options, pool, { ...parts, sharedReads: new SharedReads() }),
  };
}
