import type { Socket } from 'node:net';
import type { Config } from '../config/index.js';
import { startIdleTrim } from '../idle-trim.js';
import { createLogger, type Logger } from '../log.js';
import type { GatewayMetrics } from '../metrics/gateway.js';
import { type BuildOptions, buildComponents, type Served, servedParts } from './components.js';
import { type ListeningServer, listenHttp, serveHandedConnections } from './http-server.js';
import { buildLibraries, type LibrariesReload, type ServedLibraries } from './libraries.js';
import { type HttpSettings, httpSettings } from './parts/http.js';

/** For `paia-sip2 hash-secret`: how auth.clients secrets are hashed, and the shortest one taken. */
export { hashSecret } from '../auth/client-secret.js';
export { MIN_PLAIN_SECRET_LENGTH } from '../auth/trusted-clients.js';
export type { LibrariesReload } from './libraries.js';
/**
 * The composition root: the only reader of the configuration outside
 * src/config/. startGateway() turns a validated Config into running parts
 * (components.ts) and serves them (http-server.ts); sip2Setup() is the SIP2
 * side alone, which the doctor checks as the gateway would run it.
 */
export { type Sip2Setup, sip2Setup } from './parts/sip2-build.js';
export type { Sip2Settings } from './parts/sip2-options.js';
/** For the doctor: the state store as the gateway would find it at start. */
export { checkStateStore, type StateStoreCheck } from './state-check.js';

/** What `serve` runs under signals: one gateway (RunningGateway), or the primary of several workers (cluster/primary.ts). */
export interface Serving {
  /** Where the gateway listens (scheme, host, port; without the base path). */
  url: string;
  /** url with http.basePath: where the PAIA methods are. */
  baseUrl: string;
  /** http.shutdownTimeoutMs: how long stop() lets the gateway drain. */
  shutdownTimeoutMs: number;
  /** Set in demo mode (no sip2.host configured): where the embedded SIP2 simulator listens. */
  demo: { sip2: string } | null;
  /** Graceful shutdown bounded by `timeoutMs`: "forced" when something had to be dropped. A second call returns the first call's promise. */
  stop(timeoutMs?: number): Promise<'graceful' | 'forced'>;
  /** Drops everything now. For a second signal. */
  forceStop(reason: string): void;
  /** Re-reads http.tls.cert and http.tls.key (SIGHUP) for new connections; never throws. */
  reloadTls(): void;
  /**
   * With a libraries section (one process): applies the configuration read
   * again (SIGHUP; libraries.ts); absent otherwise. Logs what it did and
   * what it could not; never rejects.
   */
  reloadLibraries?(change: LibrariesReload): Promise<void>;
}

export interface RunningGateway extends Serving {
  /** What /metrics exposes; null when metrics.enabled is false, and with several libraries (each has its own). */
  metrics: GatewayMetrics | null;
  /**
   * Graceful shutdown, bounded by `timeoutMs` (default http.shutdownTimeoutMs):
   * /readyz turns 503 at once, the listener closes (new connections are
   * refused), idle keep-alive connections are closed, requests in flight
   * finish (their responses carry Connection: close), then the SIP2 pool
   * drains and closes and the embedded simulator stops: "graceful". If the
   * bound passes first, everything left is dropped (forceStop): "forced".
   * A second call returns the first call's promise.
   */
  stop(timeoutMs?: number): Promise<'graceful' | 'forced'>;
  /** Drops everything now: open HTTP connections, SIP2 connections and queued work. For a second signal. */
  forceStop(reason: string): void;
  /**
   * Re-reads http.tls.cert and http.tls.key (SIGHUP) and uses them for new
   * TLS connections; open connections keep theirs. On any failure the old
   * certificate stays in use and the reason is logged; never throws. On plain
   * HTTP it only logs that there is nothing to reload. Returns whether a new
   * certificate is in use.
   */
  reloadTls(): boolean;
}

/** The gateway's logger: JSON lines (or pretty ones, log.format) on stdout at log.level. */
export function gatewayLogger(config: Config): Logger {
  return createLogger({ level: config.log.level, name: 'paia-sip2', format: config.log.format });
}

/**
 * Starts the gateway from a validated configuration; the order of stop() is
 * the reverse. `options.sharedSimulator`: a worker in demo mode uses the
 * primary's embedded simulator instead of starting one. With a libraries
 * section, one set of parts per library behind the one server (libraries.ts).
 */
export async function startGateway(
  config: Config,
  logger: Logger,
  options: BuildOptions = {},
): Promise<RunningGateway> {
  const http = httpSettings(config);
  // Listening comes first: the port (http.port 0 picks one) is part of the gateway's own URL, which
  // links and the demo's item URIs start with. Until the parts run, requests get 503.
  let served: Served | null = null;
  let libraries: ServedLibraries | null = null;
  const server = await listenHttp({
    fetch: (request, env) => (served === null ? startingResponse() : served.fetch(request, env)),
    host: http.host,
    port: http.port,
    ...http.server,
    logger: logger.child({ component: 'tls' }),
  });
  const baseUrl = `${server.url}${http.basePath}`;
  const ownUrl = http.publicUrl ?? baseUrl;
  try {
    if (config.libraries === null) served = servedParts(await buildComponents(config, logger, { ...options, ownUrl }));
    else served = libraries = await buildLibraries(config, config.libraries, logger, ownUrl);
  } catch (error) {
    server.destroy();
    throw error;
  }
  const gateway = running(http, logger, served, server, baseUrl);
  if (libraries === null) return gateway;
  const reload = libraries.reload;
  return {
    ...gateway,
    reloadLibraries: (change) =>
      reload(change).catch((error: unknown) =>
        logger.error({ component: 'reload', err: error }, 'reload: failed; the libraries serve as before'),
      ),
  };
}

/** A worker's gateway: it takes the connections the primary accepted. */
export interface WorkerGateway extends RunningGateway {
  /** Serves a connection the primary accepted and handed over (nothing has read from it yet). */
  accept(socket: Socket): void;
}

/**
 * Starts one worker's gateway (serve --workers N): the primary listens on
 * `options.url` and hands it connections (accept). Its parts are built
 * before it has a server, so no connection ever meets a gateway that is
 * still starting: the primary hands it none until it says it is ready.
 */
export async function startWorkerGateway(
  config: Config,
  logger: Logger,
  options: { url: string; sharedSimulator: BuildOptions['sharedSimulator'] },
): Promise<WorkerGateway> {
  const http = httpSettings(config);
  const baseUrl = `${options.url}${http.basePath}`;
  const parts = await buildComponents(config, logger, {
    sharedSimulator: options.sharedSimulator,
    ownUrl: http.publicUrl ?? baseUrl,
  });
  const served = servedParts(parts);
  const server = serveHandedConnections({
    fetch: (request, env) => served.fetch(request, env),
    url: options.url,
    ...http.server,
    logger: logger.child({ component: 'tls' }),
  });
  return { ...running(http, logger, served, server, baseUrl), accept: (socket) => server.accept(socket) };
}

/** The running gateway over its parts and its server: the shutdown in order, and the forced one. */
function running(
  http: HttpSettings,
  logger: Logger,
  parts: Served,
  server: ListeningServer,
  baseUrl: string,
): RunningGateway {
  logger.info({ url: baseUrl, ...parts.started }, 'paia-sip2 started');
  const trim = startIdleTrim({
    activity: () => ({ requests: server.requests, inFlight: server.inFlight }),
    logger: logger.child({ component: 'memory' }),
  });

  const log = logger.child({ component: 'shutdown' });
  const drain = async (deadline: number): Promise<void> => {
    trim?.stop();
    parts.markShuttingDown();
    const httpDone = server.drain();
    log.info(
      { inFlight: server.inFlight },
      'shutdown 1/4: not ready any more, listener closed; waiting for requests in flight',
    );
    await httpDone;
    await parts.close(deadline, log);
    log.info('shutdown 4/4: done');
  };
  const forceStop = (reason: string): void => {
    trim?.stop();
    parts.markShuttingDown();
    log.warn(
      { reason, inFlight: server.inFlight, sip2: parts.sip2Stats() },
      'shutdown: forced; dropping open HTTP connections and SIP2 work',
    );
    server.destroy();
    parts.destroy();
  };

  let stopping: Promise<'graceful' | 'forced'> | null = null;
  return {
    url: server.url,
    baseUrl,
    shutdownTimeoutMs: http.shutdownTimeoutMs,
    demo: parts.demo,
    metrics: parts.metrics,
    reloadTls: () => server.reloadTls(),
    forceStop,
    stop(timeoutMs = http.shutdownTimeoutMs) {
      stopping ??= (async () => {
        const deadline = Date.now() + timeoutMs;
        let timer: NodeJS.Timeout | undefined;
        const bound = new Promise<'forced'>((resolve) => (timer = setTimeout(() => resolve('forced'), timeoutMs)));
        let outcome: 'graceful' | 'forced';
        try {
          outcome = await Promise.race([drain(deadline).then(() => 'graceful' as const), bound]);
        } finally {
          clearTimeout(timer);
        }
        if (outcome === 'forced') forceStop(`not done within http.shutdownTimeoutMs (${timeoutMs} ms)`);
        return outcome;
      })();
      return stopping;
    },
  };
}

/** The answer while the gateway has its port but not yet its parts (a few milliseconds at start). */
function startingResponse(): Response {
  return new Response(
    JSON.stringify({ error: 'service_unavailable', code: 503, error_description: 'the gateway is starting' }),
    { status: 503, headers: { 'Content-Type': 'application/json; charset=utf-8', 'Retry-After': '1' } },
  );
}
