import type { Context, Hono } from 'hono';
import type { ClientAllowlist } from '../../auth/client-allowlist.js';
import type { Logger } from '../../log.js';
import { operationsReply } from './operations.js';

/**
 * GET /metrics: the Prometheus text exposition, at the root whatever
 * `http.basePath` is, answered before any PAIA middleware (no token, no PAIA
 * headers, no access-log line per scrape, not counted in the HTTP metrics).
 *
 * - a client outside `metrics.allowedClients`: 403;
 * - a method other than GET or HEAD: 405 with `Allow: GET, HEAD`;
 * - collection failing: 503 (never a 500), logged.
 */

const METRICS_PATH = '/metrics';

export interface MetricsRouteOptions {
  /** What is exposed. */
  metrics: { scrape(): Promise<string>; readonly contentType: string };
  /** Clients that may read the metrics (an empty list: any). */
  allowedClients: ClientAllowlist;
  /** The client's address, as for auth.allowedClients (the last X-Forwarded-For hop behind a trusted proxy). */
  clientAddress: (c: Context) => string | undefined;
  logger?: Logger | undefined;
}

export const METRICS_FORBIDDEN = 'this client may not read the metrics (metrics.allowedClients)';
const METRICS_UNAVAILABLE = 'the metrics could not be collected; see the gateway log';

/** Mounts /metrics; register before any middleware, so that scrapes pass none of it. */
export function mountMetrics(app: Hono, options: MetricsRouteOptions): void {
  const failed = (c: Context, error: unknown, what: string): Response => {
    options.logger?.error({ err: { message: error instanceof Error ? error.message : String(error) } }, what);
    return operationsReply(c, 503, { status: 'error', error: METRICS_UNAVAILABLE });
  };
  app.get(METRICS_PATH, async (c) => {
    let allowed: boolean;
    try {
      allowed = options.allowedClients.allows(options.clientAddress(c));
    } catch (error) {
      return failed(c, error, 'metrics request failed');
    }
    if (!allowed) return operationsReply(c, 403, { status: 'error', error: METRICS_FORBIDDEN });
    let text: string;
    try {
      text = await options.metrics.scrape();
    } catch (error) {
      return failed(c, error, 'metrics collection failed');
    }
    return new Response(c.req.method === 'HEAD' ? null : text, {
      status: 200,
      headers: { 'Content-Type': options.metrics.contentType, 'Cache-Control': 'no-store' },
    });
  });
  app.all(METRICS_PATH, (c) =>
    operationsReply(
      c,
      405,
      { status: 'error', error: `${c.req.method} is not allowed here; use GET or HEAD` },
      { Allow: 'GET, HEAD' },
    ),
  );
}
