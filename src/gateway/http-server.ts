import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo, Server as NetServer, Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { LiveList } from '../live-list.js';
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
 * The gateway's HTTP(S) server: the Hono app's fetch on node:http or
 * node:https, requests in flight tracked for a graceful shutdown, and the
 * HTTPS certificate reloadable (SIGHUP) without dropping connections. It
 * listens itself (listenHttp), or, in a worker of several, serves the
 * connections the primary accepted and hands it (serveHandedConnections).
 */

export interface HttpServerOptions {
  fetch: Parameters<typeof getRequestListener>[0];
  /** HTTPS with these PEM files; plain HTTP when null. */
  tls: { cert: string; key: string } | null;
  /** Largest request head; Node answers 431 beyond it. */
  maxHeaderBytes: number;
  /** Timeouts and connection caps of the server itself (connection-limits.ts). */
  limits: ConnectionLimits;
  logger: Logger;
}

export interface ListenOptions extends HttpServerOptions {
  host: string;
  port: number;
}

export interface ListeningServer {
  /** Where clients reach it (scheme, host, port; without the base path). */
  readonly url: string;
  /** Requests in flight right now. */
  readonly inFlight: number;
  /** Requests received since the server started. */
  readonly requests: number;
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

/** A worker's server (serve --workers N): it never listens; the primary hands it the connections it accepted. */
export interface HandedServer extends ListeningServer {
  /** Serves a connection the primary accepted (a TCP socket nothing has read from yet; over HTTPS before its handshake). */
  accept(socket: Socket): void;
}

/** The parts of a server that do not depend on where its connections come from. */
interface ServerCore {
  /** https.Server is an http.Server for everything but the certificate. */
  readonly server: HttpServer;
  readonly inFlight: Pick<LiveList<ServerResponse>, 'size'>;
  /** Requests received so far. */
  readonly requests: number;
  /** From now on every response carries Connection: close, and a connection goes once its response is done. */
  startDraining(): void;
  reloadTls(): boolean;
}

function createServerCore(options: HttpServerOptions): ServerCore {
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
  // A LiveList, not a Set: one in and out per request (live-list.ts).
  const inFlight = new LiveList<ServerResponse>();
  let draining = false;
  let requests = 0;
  httpServer.on('request', (_request: IncomingMessage, response: ServerResponse) => {
    requests += 1;
    const place = inFlight.add(response);
    if (draining) response.setHeader('Connection', 'close');
    response.once('close', () => {
      place.leave();
      if (draining) setImmediate(() => httpServer.closeIdleConnections());
    });
  });

  return {
    server: httpServer,
    inFlight,
    get requests() {
      return requests;
    },
    startDraining() {
      draining = true;
      // Clients of requests in flight are told to close the connection after the answer.
      for (const response of inFlight.values()) if (!response.headersSent) response.setHeader('Connection', 'close');
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

export async function listenHttp(options: ListenOptions): Promise<ListeningServer> {
  const core = createServerCore(options);
  const httpServer = core.server;
  const address = await listen(httpServer, options.host, options.port);

  let closed: Promise<void> | null = null;
  /** Stops accepting connections; resolves once every HTTP connection has ended. */
  const closeListener = () =>
    (closed ??= new Promise<void>((resolve) => {
      httpServer.close(() => resolve());
    }));

  return {
    url: urlOf(address, options.tls !== null),
    get inFlight() {
      return core.inFlight.size;
    },
    get requests() {
      return core.requests;
    },
    drain() {
      core.startDraining();
      const done = closeListener();
      // Idle keep-alive connections go now.
      httpServer.closeIdleConnections();
      return done;
    },
    destroy() {
      core.startDraining();
      void closeListener();
      httpServer.closeAllConnections();
    },
    reloadTls: () => core.reloadTls(),
  };
}

/**
 * A worker's server: the same app, limits and drain as listenHttp's, fed
 * with the connections the primary hands over (cluster/worker.ts). `url` is
 * where the primary listens.
 */
export function serveHandedConnections(options: HttpServerOptions & { url: string }): HandedServer {
  const core = createServerCore(options);
  const httpServer = core.server;
  // Node's http server tracks its connections (headersTimeout, requestTimeout, closeIdleConnections) from its
  // 'listening' event on; this one never listens, so it is told so itself. Without it a slow request head
  // would never get its 408.
  httpServer.emit('listening');

  // server.close() waits only for connections the server accepted itself, so a drain waits for these.
  const open = new LiveList<Socket>();
  let state: 'serving' | 'draining' | 'drained' = 'serving';
  let drained: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    drained = resolve;
  });
  const settle = () => {
    if (state === 'draining' && open.size === 0) {
      state = 'drained';
      drained();
    }
  };

  return {
    url: options.url,
    get inFlight() {
      return core.inFlight.size;
    },
    get requests() {
      return core.requests;
    },
    accept(socket) {
      // The drain is over and the process exits next: the client sees the connection close, as with a closed listener.
      if (state === 'drained') {
        socket.destroy();
        return;
      }
      // One handed over while the drain runs (the primary had not heard of it yet) is served, with Connection: close.
      const place = open.add(socket);
      socket.once('close', () => {
        place.leave();
        settle();
      });
      httpServer.emit('connection', socket);
    },
    drain() {
      if (state === 'serving') {
        state = 'draining';
        core.startDraining();
        // Idle keep-alive connections go now.
        httpServer.closeIdleConnections();
        settle();
      }
      return done;
    },
    destroy() {
      if (state === 'serving') {
        state = 'draining';
        core.startDraining();
      }
      for (const socket of open.values()) socket.destroy();
      settle();
    },
    reloadTls: () => core.reloadTls(),
  };
}

/** Where a listener can be reached: scheme, host (IPv6 in brackets) and port. */
export function urlOf(address: AddressInfo, tls: boolean): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `${tls ? 'https' : 'http'}://${host}:${address.port}`;
}

/** Listens on host:port; rejects with a readable reason (the port taken, the address not local). */
export function listen(server: NetServer, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(`cannot listen on ${host}:${port} (${error.code ?? error.message})`)),
    );
    server.listen(port, host, () => resolve(server.address() as AddressInfo));
  });
}
