import type { Context, Hono } from 'hono';
import { ClientAllowlist } from '../../auth/client-allowlist.js';
import type { RecordSource } from '../../backend/daia/records/source.js';
import type { Config } from '../../config/index.js';
import { createApp, lastForwardedHop, socketAddressOf } from '../../http/app.js';
import { DaiaAddressLimit } from '../../http/daia-limit.js';
import type { ReadinessState } from '../../http/routes/health.js';
import type { Logger } from '../../log.js';
import type { GatewayMetrics } from '../../metrics/gateway.js';
import type { StateStore } from '../../state/index.js';
import { openProblem } from '../ils-advice.js';
import type { Ils, Sip2Services } from './sip2.js';
import type { AuthParts } from './state.js';

/**
 * The app side: the Hono app over the built parts, with /readyz and
 * /metrics; appSettings reads the configuration once.
 */

/** The Hono app's settings. */
export interface AppSettings {
  basePath: string;
  maxDocs: number;
  maxBodyBytes: number;
  maxUrlBytes: number;
  requestTimeoutMs: number;
  logoutAllSessions: boolean;
  corsOrigins: readonly string[];
  /** Behind a trusted proxy: the client is the last X-Forwarded-For hop, and only HTTPS is taken. */
  trustedProxy: boolean;
  /** HSTS only where the gateway really is reached over HTTPS. */
  hsts: boolean;
  daia: { maxIds: number; idsPerMinute: number; exempt: readonly string[] };
  /** metrics.*; null: off (no /metrics, nothing recorded). */
  metrics: { allowedClients: readonly string[] } | null;
}

export function appSettings(config: Config): AppSettings {
  const { http, paia, daia, auth, metrics } = config;
  return {
    basePath: http.basePath,
    maxDocs: paia.maxDocs,
    maxBodyBytes: http.maxBodyBytes,
    maxUrlBytes: http.maxUrlBytes,
    requestTimeoutMs: http.requestTimeoutMs,
    logoutAllSessions: auth.logoutAllSessions,
    corsOrigins: http.corsOrigins,
    trustedProxy: http.trustedProxy,
    hsts: http.tls !== null || http.trustedProxy,
    daia: {
      maxIds: daia.maxIds ?? paia.maxDocs,
      idsPerMinute: daia.idsPerMinutePerAddress,
      exempt: daia.exemptClients,
    },
    metrics: metrics.enabled ? { allowedClients: metrics.allowedClients } : null,
  };
}

/** What the app serves: every part built before it. */
export interface AppParts {
  /** The gateway's base URL: every link it writes starts with it. */
  ownUrl: string;
  ils: Ils;
  services: Sip2Services;
  store: StateStore;
  auth: AuthParts;
  records: RecordSource | null;
  metrics: GatewayMetrics | null;
  logger: Logger;
}

/**
 * The client of a request. Behind a trusted proxy every request comes from the proxy: login throttling,
 * auth.allowedClients and metrics.allowedClients need the client it forwarded for.
 */
export function clientAddressOf(trustedProxy: boolean): (c: Context) => string | undefined {
  return (c) => (trustedProxy ? lastForwardedHop(c.req.header('x-forwarded-for')) : socketAddressOf(c.env));
}

/** The Hono app over the parts, with /readyz and /metrics; markShuttingDown turns /readyz to 503; readiness is what /readyz decides from. */
export function buildApp(
  settings: AppSettings,
  parts: AppParts,
): { app: Hono; markShuttingDown(): void; readiness(): ReadinessState } {
  const { ils, services, store, auth, metrics, logger } = parts;
  const { pool, target } = ils;
  const { sessions } = store;
  const daiaLimit = new DaiaAddressLimit(store, {
    idsPerMinute: settings.daia.idsPerMinute,
    exempt: settings.daia.exempt,
    logger: logger.child({ component: 'daia' }),
  });
  metrics?.watch({
    pool: () => pool.stats(),
    logins: () => auth.loginThrottle.stats(),
    sessions: () => sessions.size(),
    stateUp: () => store.health().problem === null,
    itemCache: () => services.itemCache?.stats() ?? null,
    accountWindow: () => services.accountWindow?.stats() ?? null,
    maintenance: () => pool.currentPause !== null,
    recordLookupFailures: () => parts.records?.failures ?? 0,
  });

  const clientAddress = clientAddressOf(settings.trustedProxy);
  let shuttingDown = false;
  const readiness = (): ReadinessState => {
    const { problem, warning } = store.health();
    return {
      shuttingDown,
      loggedIn: pool.hasReadyConnection,
      sip2Problem: pool.hasReadyConnection || pool.openFailure === null ? null : openProblem(pool.openFailure, target),
      connections: pool.stats().connections,
      online: pool.acsStatus?.onlineStatus ?? null,
      store: { kind: store.kind, problem, warning },
      maintenance: pool.currentPause,
    };
  };

  const app = createApp({
    backend: services.backend,
    sessions,
    login: auth.login,
    clientLogin: auth.clientLogin,
    basePath: settings.basePath,
    publicUrl: parts.ownUrl,
    maxDocs: settings.maxDocs,
    maxBodyBytes: settings.maxBodyBytes,
    rateLimit: auth.rateLimit,
    logoutAllSessions: settings.logoutAllSessions,
    maxUrlBytes: settings.maxUrlBytes,
    requestTimeoutMs: settings.requestTimeoutMs,
    logger: logger.child({ component: 'http' }),
    daia: { service: services.daia, maxIds: settings.daia.maxIds, limit: daiaLimit },
    corsOrigins: settings.corsOrigins,
    hsts: settings.hsts,
    // Behind a TLS-terminating proxy, a request it did not get over HTTPS is refused (the health endpoints stay open).
    requireForwardedHttps: settings.trustedProxy,
    clientAddress,
    // /healthz, /readyz and /metrics at the root whatever the base path; with metrics off /metrics is an unknown URL (404).
    health: { readiness, logger: logger.child({ component: 'health' }) },
    ...(metrics && settings.metrics
      ? {
          metrics: metrics.http,
          metricsEndpoint: {
            metrics,
            allowedClients: new ClientAllowlist(settings.metrics.allowedClients),
            clientAddress,
            logger: logger.child({ component: 'metrics' }),
          },
        }
      : {}),
  });
  return {
    app,
    readiness,
    markShuttingDown: () => {
      shuttingDown = true;
    },
  };
}
