import type { Config } from '../../config/index.js';
import type { HttpServerOptions } from '../http-server.js';

/**
 * The HTTP side of the configuration: the gateway's own URL, where the
 * server listens and its limits (httpSettings reads the configuration once).
 */

/**
 * The gateway's own base URL (base path included, no trailing slash) as the
 * configuration knows it before the listener runs: http.publicUrl, or the
 * configured address and port. The running gateway passes where it really
 * listens (http.port 0 picks a free port).
 */
export function configuredOwnUrl(config: Config): string {
  const { http } = config;
  if (http.publicUrl !== null) return http.publicUrl;
  const host = http.host.includes(':') ? `[${http.host}]` : http.host;
  return `${http.tls ? 'https' : 'http'}://${host}:${http.port}${http.basePath}`;
}

/** The HTTP server: where it listens, how long it drains, its limits (whether it listens itself or is handed connections). */
export interface HttpSettings {
  host: string;
  port: number;
  basePath: string;
  /** http.publicUrl; null: where it listens. */
  publicUrl: string | null;
  shutdownTimeoutMs: number;
  server: Omit<HttpServerOptions, 'fetch' | 'logger'>;
}

export function httpSettings(config: Config): HttpSettings {
  const { http } = config;
  return {
    host: http.host,
    port: http.port,
    basePath: http.basePath,
    publicUrl: http.publicUrl,
    shutdownTimeoutMs: http.shutdownTimeoutMs,
    server: {
      tls: http.tls,
      maxHeaderBytes: http.maxHeaderBytes,
      limits: {
        headersTimeoutMs: http.headersTimeoutMs,
        receiveTimeoutMs: http.receiveTimeoutMs,
        keepAliveTimeoutMs: http.keepAliveTimeoutMs,
        maxConnections: http.maxConnections,
        maxConnectionsPerAddress: http.maxConnectionsPerAddress,
      },
    },
  };
}
