import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { HttpMetrics } from '../../../metrics/gateway.js';
import { classifyRoute, type RouteLabel } from '../../../metrics/routes.js';

export interface HttpMetricsOptions {
  metrics: Pick<HttpMetrics, 'record'>;
  /** Route pattern -> label (routeTable()); anything else is `other`. */
  routes: ReadonlyMap<string, RouteLabel>;
  /** Clock in milliseconds. Default `performance.now`. */
  now?: () => number;
}

/**
 * Counts every request and times it, from before all other middleware to
 * the finished response. Goes first. The route label comes from the route
 * pattern hono matched last (after next(), the handler that answered), so
 * it never contains anything from the URL itself.
 *
 * @example
 * app.use('*', httpMetrics({ metrics: gatewayMetrics.http, routes: routeTable(paths) }), ...)
 */
export function httpMetrics(options: HttpMetricsOptions): MiddlewareHandler {
  const { metrics, routes } = options;
  const now = options.now ?? (() => performance.now());
  return async function httpMetricsMiddleware(c, next) {
    const start = now();
    let status = 500;
    try {
      await next();
      status = c.res.status;
    } finally {
      metrics.record(c.req.method, classifyRoute(routes, routePath(c)), status, (now() - start) / 1000);
    }
  };
}
