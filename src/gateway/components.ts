import { resolve } from 'node:path';
import type { Context, Hono } from 'hono';
import { ClientAllowlist } from '../auth/client-allowlist.js';
import { ClientCredentialsLogin } from '../auth/client-login.js';
import { LoginService } from '../auth/login.js';
import { LoginThrottle } from '../auth/login-throttle.js';
import { PasswordPolicy } from '../auth/password-policy.js';
import { PatronIds } from '../auth/patron-ids.js';
import { TokenRateLimit } from '../auth/token-rate-limit.js';
import { TrustedClients } from '../auth/trusted-clients.js';
import type { RecordSource } from '../backend/daia/records/source.js';
import type { Config } from '../config/index.js';
import { createApp, lastForwardedHop, socketAddressOf } from '../http/app.js';
import { DaiaAddressLimit } from '../http/daia-limit.js';
import type { ReadinessState } from '../http/routes/health.js';
import type { Logger } from '../log.js';
import { GatewayMetrics } from '../metrics/gateway.js';
import { AnomalyLog, type Sip2Pool } from '../sip2/index.js';
import { createStateStore, type StateStore, type StateStoreSettings } from '../state/index.js';
import type { EmbeddedSimulator } from './demo.js';
import { explainOpen, openProblem } from './ils-advice.js';
import { recordSource } from './records.js';
import { configuredOwnUrl, type Sip2Setup, type Sip2Target, sip2Setup } from './sip2.js';

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
  /** Where DAIA's records come from (daia.records); null: none. Closed on shutdown (it checks its file). */
  readonly records: RecordSource | null;
  readonly loginThrottle: LoginThrottle;
  /** Sessions, limits and lockouts (state.store). */
  readonly store: StateStore;
  /** What /metrics exposes; null when metrics.enabled is false. */
  readonly metrics: GatewayMetrics | null;
  readonly app: Hono;
  /** /readyz turns 503 from now on: the gateway drains. */
  markShuttingDown(): void;
}

export interface BuildOptions {
  /**
   * Demo mode with several workers: the embedded simulator the primary
   * process runs, shared by every worker so that all of them see one
   * library; this gateway then starts none of its own.
   */
  sharedSimulator?: Sip2Target | null | undefined;
  /**
   * The gateway's base URL (base path included) once it listens:
   * http.publicUrl, or where it listens. Every link it writes starts with it
   * (never with a client's Host header), and so do the demo's item and
   * edition URIs. Default: as configured (configuredOwnUrl).
   */
  ownUrl?: string | undefined;
}

export async function buildComponents(config: Config, logger: Logger, options: BuildOptions = {}): Promise<Components> {
  const ownUrl = options.ownUrl ?? configuredOwnUrl(config);
  const sip2 = sip2Setup(config, ownUrl);
  const shared = sip2.startDemo ? (options.sharedSimulator ?? null) : null;
  const demo =
    sip2.startDemo && shared === null ? await sip2.startDemo(logger.child({ component: 'simulator' })) : null;
  const target = shared ?? demo?.target ?? sip2.target;
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
  // The pool keeps retrying in the background; a sysadmin starting the gateway must see at once why it cannot serve.
  if (!pool.hasReadyConnection && pool.openFailure !== null) {
    const advice = explainOpen(
      pool.openFailure,
      { settings: sip2.settings, dialect: sip2.dialect, tls: sip2.settings.tls, target },
      new Set(),
    );
    sip2Logger.error(
      { ils: `${target.host}:${target.port}`, problem: openProblem(pool.openFailure, target) },
      `cannot log in to the ILS at start: ${advice}. The gateway keeps trying; until it succeeds /readyz answers 503 and calls get 503 or 502. \`paia-sip2 doctor\` checks the connection step by step`,
    );
  }

  const store = await createStateStore(stateStoreSettings(config), logger.child({ component: 'state' }));
  await connectStore(store, config, logger);
  store.observe((operation, seconds, ok) => metrics?.state.operation(operation, seconds, ok));

  // A renew, request or cancel on this instance drops the item on every other one too.
  const itemCache = sip2.itemCache((item, outcomeUnknown) => {
    store.publishInvalidation({ item, outcomeUnknown }).catch((error: unknown) => {
      logger.warn({ item, error: (error as Error).message }, 'could not tell other instances to drop an item');
    });
  });
  const sip2Backend = sip2.backend(pool, { itemCache, logger: logger.child({ component: 'backend' }) });
  // A renew, request or cancel on this instance drops the patron's account reads on every other one too.
  const accountWindow = sip2.accountWindow(sip2Backend, (patron, outcomeUnknown) =>
    store.publishInvalidation({ patron, outcomeUnknown }).catch((error: unknown) => {
      // The write happened; other instances show it once their window has passed.
      logger.warn(
        { error: (error as Error).message },
        "could not tell other instances to drop a patron's account reads",
      );
    }),
  );
  store.onInvalidation((invalidation) => {
    const { outcomeUnknown } = invalidation;
    if (invalidation.item !== undefined) {
      sip2.forgetReads(pool, { item: invalidation.item });
      itemCache?.invalidate(invalidation.item, { outcomeUnknown, fromPeer: true });
    } else {
      sip2.forgetReads(pool, { anyPatron: true });
      accountWindow?.forget(invalidation.patron, { outcomeUnknown });
    }
  });
  const backend = accountWindow ?? sip2Backend;
  // Anonymous DAIA: its share of the pool is the DAIA service's (sip2.ts); its ids per address are counted in the store.
  // A record counts as one id there; its copies are bounded by daia.records.maxItemsPerRecord and go through the share.
  const records = recordSource(config, logger.child({ component: 'daia-records' }));
  const daia = sip2.daia(pool, itemCache, records);
  const daiaLimit = new DaiaAddressLimit(store, {
    idsPerMinute: config.daia.idsPerMinutePerAddress,
    exempt: config.daia.exemptClients,
    logger: logger.child({ component: 'daia' }),
  });

  const { auth } = config;
  const sessions = store.sessions;
  const rateLimit = new TokenRateLimit(store, auth.requestsPerMinute);
  const allowedClients = new ClientAllowlist(auth.allowedClients);
  const loginThrottle = new LoginThrottle(store, {
    freeAttemptsPerUser: auth.bruteForce.freeFailuresPerUser,
    freeAttemptsPerAddress: auth.bruteForce.freeFailuresPerAddress,
    baseDelayMs: auth.bruteForce.lockoutBaseSeconds * 1000,
    maxDelayMs: auth.bruteForce.lockoutMaxSeconds * 1000,
    maxSlowdownMs: auth.bruteForce.maxSlowdownSeconds * 1000,
    maxAttemptsPerSecond: auth.maxLoginsPerSecond,
    // No login outlives its call's deadline: an attempt in flight stops counting then, even if its process died.
    attemptTtlMs: config.http.requestTimeoutMs,
    // Usernames and barcodes in the store and the log as keyed hashes: the same key on every instance.
    keySecret: config.paia.patronIdSecret,
    // Own limits only for addresses the sysadmin named; an empty allowlist names none.
    trusted: {
      includes: (address) => !allowedClients.open && allowedClients.allows(address),
      freeAttemptsPerAddress: auth.allowedClientLimits.freeFailuresPerAddress ?? undefined,
      attemptsPerSecond: auth.allowedClientLimits.loginsPerSecond ?? undefined,
    },
  });
  const patronIds = new PatronIds(config.paia.patronId, config.paia.patronIdSecret);
  const login = new LoginService({
    backend,
    sessions,
    patronIds,
    throttle: loginThrottle,
    passwordPolicy: new PasswordPolicy(auth.passwordPolicy),
    allowedClients,
    tokenLifetimeSeconds: auth.tokenLifetimeSeconds,
  });
  // Off unless auth.clients names a client; the secrets from the environment were checked at load.
  const clientLogin =
    auth.clients.length === 0
      ? undefined
      : new ClientCredentialsLogin({
          clients: await TrustedClients.fromSettings(auth.clients, process.env),
          backend,
          sessions,
          patronIds,
          throttle: loginThrottle,
          tokenLifetimeSeconds: auth.tokenLifetimeSeconds,
        });
  metrics?.watch({
    pool: () => pool.stats(),
    logins: () => loginThrottle.stats(),
    sessions: () => sessions.size(),
    stateUp: () => store.health().problem === null,
    itemCache: () => itemCache?.stats() ?? null,
    accountWindow: () => accountWindow?.stats() ?? null,
    maintenance: () => pool.currentPause !== null,
    recordLookupFailures: () => records?.failures ?? 0,
  });

  // Behind a trusted proxy every request comes from the proxy: login throttling, auth.allowedClients and
  // metrics.allowedClients need the client it forwarded for.
  const clientAddress = (c: Context): string | undefined =>
    config.http.trustedProxy ? lastForwardedHop(c.req.header('x-forwarded-for')) : socketAddressOf(c.env);
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
    backend,
    sessions,
    login,
    clientLogin,
    basePath: config.http.basePath,
    publicUrl: ownUrl,
    maxDocs: config.paia.maxDocs,
    maxBodyBytes: config.http.maxBodyBytes,
    rateLimit,
    logoutAllSessions: auth.logoutAllSessions,
    maxUrlBytes: config.http.maxUrlBytes,
    requestTimeoutMs: config.http.requestTimeoutMs,
    logger: logger.child({ component: 'http' }),
    daia: { service: daia, maxIds: config.daia.maxIds ?? config.paia.maxDocs, limit: daiaLimit },
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
    records,
    loginThrottle,
    store,
    metrics,
    app,
    markShuttingDown: () => {
      shuttingDown = true;
    },
  };
}

/** The state store's settings: state.*, the session bounds, and the key of the hashes in its key names. */
export function stateStoreSettings(config: Config): StateStoreSettings {
  const { dir } = config.state;
  return {
    ...config.state,
    // Still relative only when it is the default: the working directory's, where `npm start` runs.
    dir: dir === null ? null : resolve(dir),
    maxSessions: config.auth.maxSessions,
    maxSessionsPerPatron: config.auth.maxSessionsPerPatron,
    keySecret: config.paia.patronIdSecret,
  };
}

/**
 * Connects the state store before the gateway takes calls. A Redis that does
 * not answer is not fatal: the gateway starts, says why in the log and in
 * /readyz, answers calls that need it with 503, and is ready as soon as the
 * store comes back (ioredis keeps reconnecting).
 */
async function connectStore(store: StateStore, config: Config, logger: Logger): Promise<void> {
  if (store.kind !== 'redis' || config.state.redis.url === null) return;
  try {
    await store.ready(config.state.redis.connectTimeoutMs);
  } catch (error) {
    logger.error(
      { component: 'state', error: (error as Error).message, problem: store.health().problem },
      'the Redis state store does not answer: logins and calls with a token get 503 until it does. Check that Redis runs and that state.redis.url (host, port, password, rediss:// for TLS) is right',
    );
  }
}
