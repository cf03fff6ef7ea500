import type { ClientAllowlist } from '../auth/client-allowlist.js';
import type { Logger } from '../log.js';

/**
 * GET /metrics: the Prometheus text exposition, at the root whatever
 * `http.basePath` is, outside the PAIA app (no token, no PAIA headers, no
 * access-log line per scrape, not counted in the HTTP metrics).
 *
 * - a client outside `metrics.allowedClients`: 403;
 * - a method other than GET or HEAD: 405 with `Allow: GET, HEAD`;
 * - collection failing: 503 (never a 500), logged.
 */

export const METRICS_PATH = '/metrics';

export interface MetricsHandlerOptions {
  /** What is exposed. */
  metrics: { scrape(): Promise<string>; readonly contentType: string };
  /** Clients that may read the metrics (an empty list: any). */
  allowedClients: ClientAllowlist;
  /** The client's address, as for auth.allowedClients (the last X-Forwarded-For hop behind a trusted proxy). */
  clientAddress: (request: Request, env: unknown) => string | undefined;
  logger?: Logger | undefined;
}

/** A Response (or its promise) for /metrics, undefined for every other URL. */
export type MetricsHandler = (request: Request, env?: unknown) => Response | Promise<Response> | undefined;

export const METRICS_FORBIDDEN = 'this client may not read the metrics (metrics.allowedClients)';
export const METRICS_UNAVAILABLE = 'the metrics could not be collected; see the gateway log';

export function createMetricsHandler(options: MetricsHandlerOptions): MetricsHandler {
  const json = (request: Request, status: number, error: string, headers: Record<string, string> = {}): Response =>
    new Response(request.method === 'HEAD' ? null : JSON.stringify({ status: 'error', error }), {
      status,
      headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers },
    });

  const scrape = async (request: Request): Promise<Response> => {
    try {
      const text = await options.metrics.scrape();
      return new Response(request.method === 'HEAD' ? null : text, {
        status: 200,
        headers: { 'Content-Type': options.metrics.contentType, 'Cache-Control': 'no-store' },
      });
    } catch (error) {
      options.logger?.error({ err: { message: error instanceof Error ? error.message : String(error) } }, 'metrics collection failed');
      return json(request, 503, METRICS_UNAVAILABLE);
    }
  };

  return (request, env) => {
    if (!isMetricsPath(request.url)) return undefined;
    try {
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        return json(request, 405, `${request.method} is not allowed here; use GET or HEAD`, { Allow: 'GET, HEAD' });
      }
      if (!options.allowedClients.allows(options.clientAddress(request, env))) return json(request, 403, METRICS_FORBIDDEN);
      return scrape(request);
    } catch (error) {
      options.logger?.error({ err: { message: error instanceof Error ? error.message : String(error) } }, 'metrics request failed');
      return json(request, 503, METRICS_UNAVAILABLE);
    }
  };
}

function isMetricsPath(url: string): boolean {
  // Cheap before URL parsing: almost every request is a PAIA one.
  if (!url.includes(METRICS_PATH)) return false;
  try {
    return new URL(url).pathname === METRICS_PATH;
  } catch {
    return false;
  }
}
