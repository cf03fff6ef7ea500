import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import type { Logger } from '../log.js';
import {
  type ConnectionLimits,
  guardServer,
  hostRequired,
  requestErrorResponse,
  serverOptions,
  tooManyConnectionsResponse,
} from './connection-limits.js';

/**
 * The gateway's HTTP(S) listener: the Hono app's fetch on node:http or
 * node:https, requests in flight tracked for a graceful shutdown, and the
 * HTTPS certificate reloadable (SIGHUP) without dropping connections.
 */

export interface HttpServerOptions {
  fetch: Parameters<typeof getRequestListener>[0];
  host: string;
  port: number;
  /** HTTPS with these PEM files; plain HTTP when null. */
  tls: { cert: string; key: string } | null;
  /** Largest request head; Node answers 431 beyond it. */
  maxHeaderBytes: number;
  /** Timeouts and connection caps of the server itself (connection-limits.ts). */
  limits: ConnectionLimits;
  logger: Logger;
}

export interface ListeningServer {
  /** Where it listens (scheme, host, port; without the base path). */
  readonly url: string;
  /** Requests in flight right now. */
  readonly inFlight: number;
  /**
   * Stops taking connections: the listener closes, idle keep-alive
   * connections go now, requests in flight finish (their responses carry
   * Connection: close). Resolves once every connection has ended.
   */
  drain(): Promise<void>;
  /** Drops every open connection at once. */
  destroy(): void;
  /** Re-reads the certificate and key for new TLS connections; never throws; whether a new one is in use. */
  reloadTls(): boolean;
}

export async function listenHttp(options: HttpServerOptions): Promise<ListeningServer> {
  const { tls, logger, limits } = options;
  // Connections beyond the caps (plain HTTP), or answered below the app already: their requests get 503 without
  // reaching the app (guardServer fills it).
  const refused = new WeakSet<Socket>();
  const fetch: HttpServerOptions['fetch'] = (request, env) =>
    refused.has((env as { incoming?: { socket?: Socket } } | undefined)?.incoming?.socket as Socket)
      ? tooManyConnectionsResponse()
      : options.fetch(request, env);
  // Node answers 431 to a request head larger than maxHeaderSize (in JSON: connection-limits.ts).
  const common = { maxHeaderSize: options.maxHeaderBytes, ...serverOptions(limits) };
  // A request Hono's adapter cannot turn into a Request (a bad Host header, a path it refuses) gets a JSON 400 too.
  const listener = hostRequired(getRequestListener(fetch, { errorHandler: requestErrorResponse }));
  const server: HttpServer | HttpsServer = tls
    ? createHttpsServer(
        {
          cert: readFileSync(tls.cert),
          key: readFileSync(tls.key),
          // A TLS handshake is part of the request head's time.
          handshakeTimeout: limits.headersTimeoutMs,
          ...common,
        },
        listener,
      )
    : createHttpServer(common, listener);
  // https.Server is an http.Server for everything below but the certificate.
  const httpServer = server as HttpServer;
  // Over HTTPS a refused connection is a TCP socket before its handshake: it cannot be answered, so it is closed at once.
  guardServer(httpServer, limits, { refused, closeRefusedAtOnce: tls !== null });

  // Responses in flight, so that a shutdown can tell their clients to close the connection afterwards.
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  httpServer.on('request', (_request: IncomingMessage, response: ServerResponse) => {
    inFlight.add(response);
    if (draining) response.setHeader('Connection', 'close');
    response.once('close', () => {
      inFlight.delete(response);
      if (draining) setImmediate(() => httpServer.closeIdleConnections());
    });
  });

  const address = await listen(server, options.host, options.port);
  const scheme = tls ? 'https' : 'http';
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  let closed: Promise<void> | null = null;
  /** Stops accepting connections; resolves once every HTTP connection has ended. */
  const closeListener = () =>
    (closed ??= new Promise<void>((resolve) => {
      httpServer.close(() => resolve());
    }));

  return {
    url: `${scheme}://${host}:${address.port}`,
    get inFlight() {
      return inFlight.size;
    },
    drain() {
      draining = true;
      const done = closeListener();
      // Clients of requests in flight are told to close the connection after the answer; idle keep-alive connections go now.
      for (const response of inFlight) if (!response.headersSent) response.setHeader('Connection', 'close');
      httpServer.closeIdleConnections();
      return done;
    },
    destroy() {
      draining = true;
      void closeListener();
      httpServer.closeAllConnections();
    },
    reloadTls() {
      if (!tls) {
        logger.info('SIGHUP: no http.tls configured (plain HTTP); nothing to reload');
        return false;
      }
      let step = `reading ${tls.cert}`;
      try {
        const cert = readFileSync(tls.cert);
        step = `reading ${tls.key}`;
        const key = readFileSync(tls.key);
        step = 'checking the certificate and key';
        const certificate = new X509Certificate(cert);
        // Throws when the files are not PEM or the key does not belong to the certificate.
        (server as HttpsServer).setSecureContext({ cert, key });
        logger.info(
          {
            cert: tls.cert,
            subject: certificate.subject,
            validTo: certificate.validTo,
            fingerprint256: certificate.fingerprint256,
          },
          'TLS certificate reloaded; new connections use it, open connections keep theirs',
        );
        return true;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        logger.error(
          { cert: tls.cert, key: tls.key, reason: `${step}: ${reason}` },
          'TLS certificate NOT reloaded; the previous certificate stays in use',
        );
        return false;
      }
    },
  };
}

function listen(server: HttpServer | HttpsServer, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(`cannot listen on ${host}:${port} (${error.code ?? error.message})`)),
    );
    server.listen(port, host, () => resolve(server.address() as AddressInfo));
  });
}
