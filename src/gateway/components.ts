import type { Context, Hono } from 'hono';
import { ClientAllowlist } from '../auth/client-allowlist.js';
import { LoginService } from '../auth/login.js';
import { LoginThrottle } from '../auth/login-throttle.js';
import { PasswordPolicy } from '../auth/password-policy.js';
import { PatronIds } from '../auth/patron-ids.js';
import { LruSessionStore } from '../auth/session-store.js';
import type { Config } from '../config/index.js';
import { createApp, lastForwardedHop, socketAddressOf } from '../http/app.js';
import type { ReadinessState } from '../http/routes/health.js';
import type { Logger } from '../log.js';
import { GatewayMetrics } from '../metrics/gateway.js';
import { AnomalyLog } from '../sip2/anomalies.js';
import type { Sip2Pool } from '../sip2/pool.js';
import type { EmbeddedSimulator } from './demo.js';
import { type Sip2Setup, type Sip2Target, sip2Setup } from './sip2.js';

/**
 * The running parts the configuration turns into, everything but the HTTP
 * listener: the embedded simulator (demo mode), the SIP2 pool, the backend
 * and DAIA over it, sessions, the login service, metrics, and the Hono app
 * that serves them. Each part gets its settings here and nowhere else.
 */
export interface Components {
  readonly sip2: Sip2Setup;
  /** Where the SIP2 sessions go. */
  readonly target: Sip2Target;
  /** Demo mode: the embedded simulator; null with a real ILS. */
  readonly demo: EmbeddedSimulator | null;
  readonly pool: Sip2Pool;
  readonly loginThrottle: LoginThrottle;
  /** What /metrics exposes; null when metrics.enabled is false. */
  readonly metrics: GatewayMetrics | null;
  readonly app: Hono;
  /** /readyz turns 503 from now on: the gateway drains. */
  markShuttingDown(): void;
}

export async function buildComponents(config: Config, logger: Logger): Promise<Components> {
  const sip2 = sip2Setup(config);
  const demo = sip2.startDemo ? await sip2.startDemo(logger.child({ component: 'simulator' })) : null;
  const target = demo?.target ?? sip2.target;
  if (target === null) throw new Error('no SIP2 target: neither sip2.host nor the embedded simulator');

  // One registry per gateway (never prom-client's global one); nothing is recorded when metrics are off.
  const metrics = config.metrics.enabled ? new GatewayMetrics() : null;
  const sip2Logger = logger.child({ component: 'sip2' });
  const anomalies = new AnomalyLog({ logger: sip2Logger, onAnomaly: metrics?.sip2.anomaly });
  const pool = sip2.pool(target, { logger: sip2Logger, anomalies, onRoundTrip: metrics?.sip2.roundTrip });
  try {
    await pool.start();
  } catch (error) {
    await demo?.stop();
    throw error;
  }

  const itemCache = sip2.itemCache();
  const backend = sip2.backend(pool, { itemCache, logger: logger.child({ component: 'backend' }) });
  const daia = sip2.daia(pool, itemCache);

  const { auth } = config;
  const sessions = new LruSessionStore({
    maxSessions: auth.maxSessions,
    maxSessionsPerPatron: auth.maxSessionsPerPatron,
  });
  const loginThrottle = new LoginThrottle({
    freeAttemptsPerUser: auth.bruteForce.freeFailuresPerUser,
    freeAttemptsPerAddress: auth.bruteForce.freeFailuresPerAddress,
    baseDelayMs: auth.bruteForce.lockoutBaseSeconds * 1000,
    maxDelayMs: auth.bruteForce.lockoutMaxSeconds * 1000,
    maxAttemptsPerSecond: auth.maxLoginsPerSecond,
  });
  const login = new LoginService({
    backend,
    sessions,
    patronIds: new PatronIds(config.paia.patronId, config.paia.patronIdSecret),
    throttle: loginThrottle,
    passwordPolicy: new PasswordPolicy(auth.passwordPolicy),
    allowedClients: new ClientAllowlist(auth.allowedClients),
    tokenLifetimeSeconds: auth.tokenLifetimeSeconds,
  });
  metrics?.watch({
    pool: () => pool.stats(),
    logins: () => loginThrottle.stats(),
    sessions: () => sessions.size(),
    itemCache: () => itemCache?.stats() ?? null,
  });

  // Behind a trusted proxy every request comes from the proxy: login throttling, auth.allowedClients and
  // metrics.allowedClients need the client it forwarded for.
  const clientAddress = (c: Context): string | undefined =>
    config.http.trustedProxy ? lastForwardedHop(c.req.header('x-forwarded-for')) : socketAddressOf(c.env);
  let shuttingDown = false;
  const readiness = (): ReadinessState => ({
    shuttingDown,
    loggedIn: pool.hasReadyConnection,
    connections: pool.stats().connections,
    online: pool.acsStatus?.onlineStatus ?? null,
  });

  const app = createApp({
    backend,
    sessions,
    login,
    basePath: config.http.basePath,
    publicUrl: config.http.publicUrl,
    maxDocs: config.paia.maxDocs,
    maxBodyBytes: config.http.maxBodyBytes,
    requestsPerMinute: auth.requestsPerMinute,
    logoutAllSessions: auth.logoutAllSessions,
    maxUrlBytes: config.http.maxUrlBytes,
    requestTimeoutMs: config.http.requestTimeoutMs,
    logger: logger.child({ component: 'http' }),
    daia: { service: daia },
    corsOrigins: config.http.corsOrigins,
    // HSTS only where the gateway really is reached over HTTPS.
    hsts: config.http.tls !== null || config.http.trustedProxy,
    // Behind a TLS-terminating proxy, a request it did not get over HTTPS is refused (the health endpoints stay open).
    requireForwardedHttps: config.http.trustedProxy,
    clientAddress,
    // /healthz, /readyz and /metrics at the root whatever the base path; with metrics off /metrics is an unknown URL (404).
    health: { readiness, logger: logger.child({ component: 'health' }) },
    ...(metrics
      ? {
          metrics: metrics.http,
          metricsEndpoint: {
            metrics,
            allowedClients: new ClientAllowlist(config.metrics.allowedClients),
            clientAddress,
            logger: logger.child({ component: 'metrics' }),
          },
        }
      : {}),
  });

  return {
    sip2,
    target,
    demo,
    pool,
    loginThrottle,
    metrics,
    app,
    markShuttingDown: () => {
      shuttingDown = true;
    },
  };
}
