import type { Hono } from 'hono';
import type { LoginThrottle } from '../auth/login-throttle.js';
import type { Config } from '../config/index.js';
import type { ReadinessState } from '../http/routes/health.js';
import type { Logger } from '../log.js';
import { GatewayMetrics } from '../metrics/gateway.js';
import type { Sip2Pool } from '../sip2/index.js';
import type { StateStore } from '../state/index.js';
import { appSettings, buildApp } from './parts/app.js';
import { configuredOwnUrl } from './parts/http.js';
import { sip2Services, startIls } from './parts/sip2.js';
import { type Sip2Target, sip2Options } from './parts/sip2-options.js';
import { authParts, openStore, stateOptions } from './parts/state.js';
import { recordOptions, recordSource } from './records.js';

/**
 * The composition root: the configuration is read once, here, into plain
 * options per side (sip2Options, stateOptions, appSettings, recordOptions);
 * the sides are built in order from those options and the parts built before
 * them (parts/sip2.ts, parts/state.ts, parts/app.ts), and nothing below looks
 * anything up again. Everything but the HTTP listener, which index.ts owns.
 */
export interface Components {
  /** Where the SIP2 sessions go. */
  readonly target: Sip2Target;
  /** Demo mode (no sip2.host): the embedded simulator is the ILS, this gateway's or the primary's. */
  readonly demoMode: boolean;
  /** The dialect's name, for the start-up line. */
  readonly dialect: string;
  readonly pool: Sip2Pool;
  readonly loginThrottle: LoginThrottle;
  /** What /metrics exposes; null when metrics.enabled is false. */
  readonly metrics: GatewayMetrics | null;
  readonly app: Hono;
  /** /readyz turns 503 from now on: the gateway drains. */
  markShuttingDown(): void;
  /** What /readyz decides from, now (with several libraries, the root's /readyz asks each library). */
  readiness(): ReadinessState;
  /**
   * Once no request is in flight: the record source, the SIP2 pool (drained
   * until `deadline`, epoch ms), the state store (unless it was lent,
   * BuildOptions.store), the embedded simulator, in that order, logged on
   * `log` as the shutdown's steps 2 and 3.
   */
  close(deadline: number, log: Logger): Promise<void>;
  /** Drops everything now, in the same order (a forced stop). */
  destroy(): void;
}

/**
 * What the HTTP server serves and how it stops (index.ts): one library's
 * components (servedParts), or several libraries' behind one fetch
 * (libraries.ts).
 */
export interface Served {
  fetch(request: Request, env: unknown): Response | Promise<Response>;
  /** What /metrics exposes for one library; null when metrics.enabled is false, and with several libraries. */
  readonly metrics: GatewayMetrics | null;
  /** The start-up line's fields after the URL. */
  readonly started: Record<string, unknown>;
  /** Demo mode: where the embedded SIP2 simulator listens. */
  readonly demo: { sip2: string } | null;
  /** The SIP2 side now, for the forced stop's log line. */
  sip2Stats(): unknown;
  markShuttingDown(): void;
  close(deadline: number, log: Logger): Promise<void>;
  destroy(): void;
}

/** One library's components as the server serves them. */
export function servedParts(parts: Components): Served {
  const sip2 = `${parts.target.host}:${parts.target.port}`;
  const { app, pool } = parts;
  return {
    fetch: (request, env) => app.fetch(request, env),
    metrics: parts.metrics,
    started: { sip2, dialect: parts.dialect, demo: parts.demoMode },
    demo: parts.demoMode ? { sip2 } : null,
    sip2Stats: () => pool.stats(),
    markShuttingDown: () => parts.markShuttingDown(),
    close: (deadline, log) => parts.close(deadline, log),
    destroy: () => parts.destroy(),
  };
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
  /**
   * Whether its metrics include the process's own (memory, CPU, event loop;
   * default true). False for a library of several: the process's metrics are
   * the gateway's, reported once (metrics/libraries.ts).
   */
  processMetrics?: boolean | undefined;
  /**
   * A pool whose first login fails fails the build (default false: it keeps
   * trying, as at start). True for a library a reload puts in: the running
   * library, or none, is kept instead of one that cannot serve.
   */
  requireLogin?: boolean | undefined;
  /**
   * A state store the parts use but do not close: its owner does. A
   * library's memory store (libraries.ts) outlives its parts, since it holds
   * `{state.dir}/{id}` and its sessions for the parts built after them.
   * Default: the parts open their own from the configuration and close it.
   */
  store?: StateStore | undefined;
}

export async function buildComponents(config: Config, logger: Logger, options: BuildOptions = {}): Promise<Components> {
  const ownUrl = options.ownUrl ?? configuredOwnUrl(config);
  const sip2 = sip2Options(config, ownUrl);
  const state = stateOptions(config);
  const web = appSettings(config);
  const recordsFrom = recordOptions(config);

  // One registry per gateway (never prom-client's global one); nothing is recorded when metrics are off.
  const metrics = web.metrics ? new GatewayMetrics({ defaultMetrics: options.processMetrics ?? true }) : null;
  const ils = await startIls(sip2, {
    logger,
    metrics,
    sharedSimulator: options.sharedSimulator,
    requireLogin: options.requireLogin,
  });
  const lent = options.store ?? null;
  // A part that does not start after the pool is up must not leave its sessions open: with several
  // libraries the process lives on (a reload) or has other pools to close.
  let store: StateStore | null = lent;
  let records: ReturnType<typeof recordSource> = null;
  let services: ReturnType<typeof sip2Services>;
  let auth: Awaited<ReturnType<typeof authParts>>;
  try {
    store ??= await openStore(state.store, logger);
    // A lent store reports to these parts' metrics from now on (one observer).
    store.observe((operation, seconds, ok) => metrics?.state.operation(operation, seconds, ok));
    // Read now: a mapping file that cannot serve stops the start.
    records = recordSource(recordsFrom, logger.child({ component: 'daia-records' }));
    services = sip2Services(sip2, ils.pool, { store, records, logger });
    auth = await authParts(state.auth, store, services.backend);
  } catch (error) {
    records?.close();
    ils.pool.destroy();
    if (lent === null) await store?.close().catch(() => {});
    await ils.demo?.stop().catch(() => {});
    throw error;
  }
  const { app, markShuttingDown, readiness } = buildApp(web, {
    ownUrl,
    ils,
    services,
    store,
    auth,
    records,
    metrics,
    logger,
  });

  const { pool, demo } = ils;
  return {
    target: ils.target,
    demoMode: sip2.demo !== null,
    dialect: sip2.dialect.name,
    pool,
    loginThrottle: auth.loginThrottle,
    metrics,
    app,
    markShuttingDown,
    readiness,
    async close(deadline, log) {
      log.info({ sip2: pool.stats() }, 'shutdown 2/4: requests finished; draining the SIP2 pool');
      records?.close();
      await pool.close(Math.max(1, deadline - Date.now()));
      log.info('shutdown 3/4: SIP2 connections closed');
      if (lent === null) await store.close();
      await demo?.stop();
    },
    destroy() {
      records?.close();
      pool.destroy();
      if (lent === null) store.close().catch(() => {});
      // The process exits next; the embedded simulator's sockets go with it.
      demo?.stop().catch(() => {});
    },
  };
}
