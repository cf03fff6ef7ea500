import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer, type ServerType } from '@hono/node-server';
import { acsSupportsHoldsOf, Sip2Backend } from './backend/sip2-backend.js';
import { LruSessionStore } from './auth/session-store.js';
import { PatronIds } from './auth/patron-ids.js';
import type { Config } from './config/index.js';
import { createApp } from './http/app.js';
import type { Logger } from './log.js';
import { loadDialect, terminatorOf } from './sip2/dialect.js';
import { Sip2Pool } from './sip2/pool.js';
import { Sip2Requests } from './sip2/requests.js';

export interface RunningGateway {
  /** Where the gateway listens (scheme, host, port; without the base path). */
  url: string;
  /** Set when the SIP2 simulator runs embedded (no sip2.host configured). */
  demo: { sip2: string } | null;
  pool: Sip2Pool;
  stop(): Promise<void>;
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
      errorDetection: config.sip2.errorDetection,
      logger: logger.child({ component: 'simulator' }),
    });
    sip2Host = simulator.host;
    sip2Port = simulator.port;
    dialectName = config.demo.dialect;
    stopSimulator = () => simulator.stop();
  }

  const dialect = loadDialect(dialectName);
  const pool = new Sip2Pool({
    connection: {
      host: sip2Host,
      port: sip2Port,
      tls: config.sip2.tls ? tlsOptions(config.sip2.tls) : undefined,
      charset: config.sip2.charset ?? dialect.charset,
      terminator: terminatorOf(dialect),
      errorDetection: config.sip2.errorDetection,
      loginUserId: config.sip2.terminal.user,
      loginPassword: config.sip2.terminal.password,
      locationCode: config.sip2.terminal.location,
      connectTimeoutMs: config.sip2.timeouts.connectMs,
      responseTimeoutMs: config.sip2.timeouts.responseMs,
      maxResends: config.sip2.maxResends,
    },
    min: config.sip2.pool.min,
    max: config.sip2.pool.max,
    acquireTimeoutMs: config.sip2.pool.acquireTimeoutMs,
    maxWaiting: config.sip2.pool.maxWaiting,
    keepaliveIntervalMs: config.sip2.pool.keepaliveSeconds * 1000,
    maxLifetimeMs: config.sip2.pool.maxLifetimeSeconds * 1000,
    backoff: { initialMs: 250, maxMs: 30_000 },
    logger: logger.child({ component: 'sip2' }),
  });
  await pool.start();

  const requests = new Sip2Requests({
    institutionId: config.sip2.institution,
    terminalPassword: config.sip2.terminalPasswordInMessages ? config.sip2.terminal.password : undefined,
  });
  const backend = new Sip2Backend({
    send: (message) => pool.request(message),
    requests,
    dialect,
    pageSize: config.sip2.pageSize ?? dialect.pageSize,
    currency: config.sip2.currency,
    uris: {
      item: config.paia.itemUri,
      edition: config.paia.editionUri,
      storage: config.paia.storageUri,
      patronType: config.paia.patronTypeUri,
    },
    acsSupportsHolds: () => acsSupportsHoldsOf(pool.acsStatus),
    logger: logger.child({ component: 'backend' }),
  });
  const sessions = new LruSessionStore({ maxSessions: config.auth.maxSessions });
  const app = createApp({
    backend,
    sessions,
    patronIds: new PatronIds(config.paia.patronId, config.paia.patronIdSecret),
    basePath: config.http.basePath,
    maxDocs: config.paia.maxDocs,
    maxBodyBytes: config.http.maxBodyBytes,
    tokenLifetimeSeconds: config.auth.tokenLifetimeSeconds,
    logger: logger.child({ component: 'http' }),
    // Behind a trusted proxy every request comes from the proxy: brute-force counting needs the client it forwarded for.
    ...(config.http.trustedProxy ? { clientAddress: (c) => c.req.header('x-forwarded-for')?.split(',').at(-1)?.trim() } : {}),
  });

  const server = config.http.tls
    ? createAdaptorServer({
        fetch: app.fetch,
        createServer: createHttpsServer,
        serverOptions: { cert: readFileSync(config.http.tls.cert), key: readFileSync(config.http.tls.key) },
      })
    : createAdaptorServer({ fetch: app.fetch });
  const address = await listen(server, config.http.host, config.http.port).catch(async (error: unknown) => {
    pool.destroy();
    await stopSimulator?.();
    throw error;
  });
  const scheme = config.http.tls ? 'https' : 'http';
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `${scheme}://${host}:${address.port}`;
  logger.info({ url, sip2: `${sip2Host}:${sip2Port}`, dialect: dialect.name, demo: stopSimulator !== null }, 'paia-sip2 started');

  return {
    url,
    demo: stopSimulator ? { sip2: `${sip2Host}:${sip2Port}` } : null,
    pool,
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.close(5000);
      await stopSimulator?.();
    },
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

function tlsOptions(tls: NonNullable<Config['sip2']['tls']>) {
  return {
    ca: tls.ca ? readFileSync(tls.ca) : undefined,
    cert: tls.cert ? readFileSync(tls.cert) : undefined,
    key: tls.key ? readFileSync(tls.key) : undefined,
    rejectUnauthorized: tls.rejectUnauthorized,
    servername: tls.servername,
  };
}
