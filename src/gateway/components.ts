import type { Hono } from 'hono';
import type { LoginThrottle } from '../auth/login-throttle.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../log.js';
import { GatewayMetrics } from '../metrics/gateway.js';
import type { Sip2Pool } from '../sip2/index.js';
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
  /**
   * Once no request is in flight: the record source, the SIP2 pool (drained
   * until `deadline`, epoch ms), the state store, the embedded simulator, in
   * that order, logged on `log` as the shutdown's steps 2 and 3.
   */
  close(deadline: number, log: Logger): Promise<void>;
  /** Drops everything now, in the same order (a forced stop). */
  destroy(): void;
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
  const sip2 = sip2Options(config, ownUrl);
  const state = stateOptions(config);
  const web = appSettings(config);
  const recordsFrom = recordOptions(config);

  // One registry per gateway (never prom-client's global one); nothing is recorded when metrics are off.
  const metrics = web.metrics ? new GatewayMetrics() : null;
  const ils = await startIls(sip2, { logger, metrics, sharedSimulator: options.sharedSimulator });
  const store = await openStore(state.store, logger, metrics);
  // Read now: a mapping file that cannot serve stops the start.
  const records = recordSource(recordsFrom, logger.child({ component: 'daia-records' }));
  const services = sip2Services(sip2, ils.pool, { store, records, logger });
  const auth = await authParts(state.auth, store, services.backend);
  const { app, markShuttingDown } = buildApp(web, { ownUrl, ils, services, store, auth, records, metrics, logger });

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
    async close(deadline, log) {
      log.info({ sip2: pool.stats() }, 'shutdown 2/4: requests finished; draining the SIP2 pool');
      records?.close();
      await pool.close(Math.max(1, deadline - Date.now()));
      log.info('shutdown 3/4: SIP2 connections closed');
      await store.close();
      await demo?.stop();
    },
    destroy() {
      records?.close();
      pool.destroy();
      store.close().catch(() => {});
      // The process exits next; the embedded simulator's sockets go with it.
      demo?.stop().catch(() => {});
    },
  };
}
