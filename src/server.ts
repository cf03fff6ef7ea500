import { readFileSync } from 'node:fs';
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { X509Certificate } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer, type ServerType } from '@hono/node-server';
import type { Context } from 'hono';
import { ClientAllowlist } from './auth/client-allowlist.js';
import { LoginService } from './auth/login.js';
import { LoginThrottle } from './auth/login-throttle.js';
import { PasswordPolicy } from './auth/password-policy.js';
import { LruSessionStore } from './auth/session-store.js';
import { PatronIds } from './auth/patron-ids.js';
import type { Config } from './config/index.js';
import { compileUriTemplates } from './backend/uris.js';
import { DaiaService } from './backend/daia/service.js';
import { createApp, lastForwardedHop, socketAddressOf } from './http/app.js';
import type { Logger } from './log.js';
import { GatewayMetrics } from './metrics/gateway.js';
import { loadDialect } from './sip2/dialect.js';
import { AnomalyLog } from './sip2/anomalies.js';
import type { Sip2Pool } from './sip2/pool.js';
import { itemInfoCache, sip2Backend, sip2Pool, sip2Requests, uriTemplatesOf } from './wiring.js';

export interface RunningGateway {
  /** Where the gateway listens (scheme, host, port; without the base path). */
  url: string;
  /** Set when the SIP2 simulator runs embedded (no sip2.host configured). */
  demo: { sip2: string } | null;
  pool: Sip2Pool;
  /** Brute-force protection; stats() has the lockout counter (for metrics). */
  loginThrottle: LoginThrottle;
  /** What /metrics exposes; null when metrics.enabled is false. */
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

/**
 * Wires the gateway from a validated configuration: the embedded simulator
 * when no ILS is configured, the SIP2 pool, the backend, sessions and the
 * HTTP server. The order of stop() is the reverse.
 */
export async function startGateway(config: Config, logger: Logger): Promise<RunningGateway> {
  // Plain HTTP off loopback was refused when the configuration was validated.
  let sip2Host = config.sip2.host;
  let sip2Port = config.sip2.port;
  let dialectName = config.sip2.dialect;
  let stopSimulator: (() => Promise<void>) | null = null;
  if (sip2Host === null) {
    // Demo mode. Imported lazily: a production gateway never loads the simulator.
    const { startSimulator } = await import('../sip2-simulator/src/server.js');
    const simulator = await startSimulator({
      host: '127.0.0.1',
      port: config.demo.sip2Port,
      dialect: config.demo.dialect,
      charset: config.demo.charset,
      errorDetection: config.sip2.errorDetection,
      logger: logger.child({ component: 'simulator' }),
    });
    sip2Host = simulator.host;
    sip2Port = simulator.port;
    dialectName = config.demo.dialect;
    stopSimulator = () => simulator.stop();
  }

  // One registry per gateway (never prom-client's global one); nothing is recorded when metrics are off.
  const metrics = config.metrics.enabled ? new GatewayMetrics() : null;
  const dialect = loadDialect(dialectName);
  const sip2Logger = logger.child({ component: 'sip2' });
  const anomalies = new AnomalyLog({ logger: sip2Logger, onAnomaly: metrics?.sip2.anomaly });
  const pool = sip2Pool(config, dialect, { host: sip2Host, port: sip2Port }, { logger: sip2Logger, anomalies, onRoundTrip: metrics?.sip2.roundTrip });
  await pool.start();

  const requests = sip2Requests(config);
  const itemCache = itemInfoCache(config);
  const backend = sip2Backend(config, dialect, pool, { requests, itemCache, logger: logger.child({ component: 'backend' }) });
  const daia = new DaiaService({
    send: (message, callOptions) => pool.request(message, callOptions),
    requests,
    dialect,
    uris: compileUriTemplates(uriTemplatesOf(config)),
    institution: config.sip2.institution,
    itemCache,
    maxParallel: config.sip2.pool.max,
  });
  const sessions = new LruSessionStore({ maxSessions: config.auth.maxSessions, maxSessionsPerPatron: config.auth.maxSessionsPerPatron });
  const { bruteForce } = config.auth;
  const loginThrottle = new LoginThrottle({
    freeAttemptsPerUser: bruteForce.freeFailuresPerUser,
    freeAttemptsPerAddress: bruteForce.freeFailuresPerAddress,
    baseDelayMs: bruteForce.lockoutBaseSeconds * 1000,
    maxDelayMs: bruteForce.lockoutMaxSeconds * 1000,
    maxAttemptsPerSecond: config.auth.maxLoginsPerSecond,
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
  // Shutdown state, for /readyz.
  let shuttingDown = false;
  const login = new LoginService({
    backend,
    sessions,
    patronIds: new PatronIds(config.paia.patronId, config.paia.patronIdSecret),
    throttle: loginThrottle,
    passwordPolicy: new PasswordPolicy(config.auth.passwordPolicy),
    allowedClients: new ClientAllowlist(config.auth.allowedClients),
    tokenLifetimeSeconds: config.auth.tokenLifetimeSeconds,
  });
  const app = createApp({
    backend,
    sessions,
    login,
    basePath: config.http.basePath,
    maxDocs: config.paia.maxDocs,
    maxBodyBytes: config.http.maxBodyBytes,
    requestsPerMinute: config.auth.requestsPerMinute,
    logoutAllSessions: config.auth.logoutAllSessions,
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
    health: {
      readiness: () => ({
        shuttingDown,
        loggedIn: pool.hasReadyConnection,
        connections: pool.stats().connections,
        online: pool.acsStatus?.onlineStatus ?? null,
      }),
      logger: logger.child({ component: 'health' }),
    },
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
  const fetch = app.fetch;
  const server = config.http.tls
    ? createAdaptorServer({
        fetch,
        createServer: createHttpsServer,
        serverOptions: { cert: readFileSync(config.http.tls.cert), key: readFileSync(config.http.tls.key), maxHeaderSize: config.http.maxHeaderBytes },
      })
    : // Node answers 431 itself to a request head larger than maxHeaderSize.
      createAdaptorServer({ fetch, serverOptions: { maxHeaderSize: config.http.maxHeaderBytes } });
  // Only HTTP/1.1 servers (node:http or node:https) are created above.
  const httpServer = server as unknown as HttpServer;

  // Responses in flight, so that a shutdown can tell their clients to close the connection afterwards.
  const inFlight = new Set<ServerResponse>();
  httpServer.on('request', (_request: IncomingMessage, response: ServerResponse) => {
    inFlight.add(response);
    if (shuttingDown) response.setHeader('Connection', 'close');
    response.once('close', () => {
      inFlight.delete(response);
      if (shuttingDown) setImmediate(() => httpServer.closeIdleConnections());
    });
  });

  const address = await listen(server, config.http.host, config.http.port).catch(async (error: unknown) => {
    pool.destroy();
    await stopSimulator?.();
    throw error;
  });
  const scheme = config.http.tls ? 'https' : 'http';
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `${scheme}://${host}:${address.port}`;
  logger.info({ url, sip2: `${sip2Host}:${sip2Port}`, dialect: dialect.name, demo: stopSimulator !== null }, 'paia-sip2 started');

  const log = logger.child({ component: 'shutdown' });
  let listenerClosed: Promise<void> | null = null;
  /** Stops accepting connections; resolves once every HTTP connection has ended. */
  const closeListener = () =>
    (listenerClosed ??= new Promise<void>((resolve) => {
      httpServer.close(() => resolve());
    }));

  const drain = async (deadline: number): Promise<void> => {
    shuttingDown = true;
    const httpDone = closeListener();
    // Clients of requests in flight are told to close the connection after the answer; idle keep-alive connections go now.
    for (const response of inFlight) if (!response.headersSent) response.setHeader('Connection', 'close');
    httpServer.closeIdleConnections();
    log.info({ inFlight: inFlight.size }, 'shutdown 1/4: not ready any more, listener closed; waiting for requests in flight');
    await httpDone;
    log.info({ sip2: pool.stats() }, 'shutdown 2/4: requests finished; draining the SIP2 pool');
    await pool.close(Math.max(1, deadline - Date.now()));
    log.info('shutdown 3/4: SIP2 connections closed');
    if (stopSimulator) await stopSimulator();
    log.info('shutdown 4/4: done');
  };

  let stopping: Promise<'graceful' | 'forced'> | null = null;
  const forceStop = (reason: string): void => {
    shuttingDown = true;
    log.warn({ reason, inFlight: inFlight.size, sip2: pool.stats() }, 'shutdown: forced; dropping open HTTP connections and SIP2 work');
    void closeListener();
    httpServer.closeAllConnections();
    pool.destroy();
    // The process exits next; the embedded simulator's sockets go with it.
    stopSimulator?.().catch(() => {});
  };

  const tlsLog = logger.child({ component: 'tls' });
  const reloadTls = (): boolean => {
    const files = config.http.tls;
    if (!files) {
      tlsLog.info('SIGHUP: no http.tls configured (plain HTTP); nothing to reload');
      return false;
    }
    let step = `reading ${files.cert}`;
    try {
      const cert = readFileSync(files.cert);
      step = `reading ${files.key}`;
      const key = readFileSync(files.key);
      step = 'checking the certificate and key';
      const certificate = new X509Certificate(cert);
      // Throws when the files are not PEM or the key does not belong to the certificate.
      (server as unknown as HttpsServer).setSecureContext({ cert, key });
      tlsLog.info(
        { cert: files.cert, subject: certificate.subject, validTo: certificate.validTo, fingerprint256: certificate.fingerprint256 },
        'TLS certificate reloaded; new connections use it, open connections keep theirs',
      );
      return true;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      tlsLog.error({ cert: files.cert, key: files.key, reason: `${step}: ${reason}` }, 'TLS certificate NOT reloaded; the previous certificate stays in use');
      return false;
    }
  };

  return {
    url,
    reloadTls,
    demo: stopSimulator ? { sip2: `${sip2Host}:${sip2Port}` } : null,
    pool,
    loginThrottle,
    metrics,
    stop(timeoutMs = config.http.shutdownTimeoutMs) {
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
    forceStop,
  };
}

function listen(server: ServerType, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(`cannot listen on ${host}:${port} (${error.code ?? error.message})`)),
    );
    server.listen(port, host, () => resolve(server.address() as AddressInfo));
  });
}
