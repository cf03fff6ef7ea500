import type { Context } from 'hono';
import { routePath } from 'hono/route';
import type { HttpMetrics } from '../../../metrics/gateway.js';
import { classifyRoute, type RouteLabel } from '../../../metrics/routes.js';
import type { RequestLayer } from '../request-steps/index.js';

/** What this layer keeps of a request until its response. */
interface HttpMetricsVariables {
  /** When the request started, by the layer's clock. */
  metricsStart: number;
}

declare module 'hono' {
  interface ContextVariableMap extends HttpMetricsVariables {}
}

export interface HttpMetricsOptions {
  metrics: Pick<HttpMetrics, 'record'>;
  /** Route pattern -> label (routeTable()); anything else is `other`. */
  routes: ReadonlyMap<string, RouteLabel>;
  /** Clock in milliseconds. Default `performance.now`. */
  now?: () => number;
}

/**
 * Counts every request and times it, from before all other middleware to
 * the finished response. The first layer of the request frame
 * (request-steps). The route label comes from the route pattern hono matched
 * last (the handler that answered), so it never contains anything from the
 * URL itself.
 *
 * @example
 * app.use('*', requestFrame([httpMetrics({ metrics: gatewayMetrics.http, routes: routeTable(paths) }), ...], onError))
 */
export function httpMetrics(options: HttpMetricsOptions): RequestLayer {
  const { metrics, routes } = options;
  const now = options.now ?? (() => performance.now());
  return {
    start(c: Context) {
      c.set('metricsStart', now());
    },
    finish(c: Context) {
      // No response: the error handler itself failed, and the client gets a 500.
      const status = c.finalized ? c.res.status : 500;
      metrics.record(c.req.method, classifyRoute(routes, routePath(c)), status, (now() - c.get('metricsStart')) / 1000);
    },
  };
}
