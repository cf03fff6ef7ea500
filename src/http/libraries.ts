import { type ErrorHandler, Hono } from 'hono';
import type { Logger } from '../log.js';
import type { HttpMetrics } from '../metrics/gateway.js';
import { notFound, translateError } from './errors.js';
import { accessLog } from './middleware/access-log/index.js';
import { httpMetrics } from './middleware/metrics/index.js';
import { paiaFormatStep } from './middleware/paia-format/index.js';
import { requestIdStep, requestLog } from './middleware/request-id/index.js';
import { type RequestStep, requestFrame } from './middleware/request-steps/index.js';
import { parseRequestUrl } from './middleware/request-url/index.js';
import { responsePolicy, responsePolicyStep } from './middleware/response-policy/index.js';
import { respondError } from './respond.js';
import { type HealthRouteOptions, mountHealth } from './routes/health.js';
import { type MetricsRouteOptions, mountMetrics } from './routes/metrics.js';

/**
 * Several libraries behind one gateway (issue 29): one HTTP server, one app
 * per library at {basePath}/{id} (each a whole createApp() with its own base
 * path, tokens, limits and access lines), and this in front of them. A
 * request whose first segment below the base path is a library's id goes to
 * that library's app as it came; /healthz, /readyz (every library) and
 * /metrics (every library's, labelled) are answered here; anything else,
 * an unknown library first of all, is PAIA's not_found (404) before any token
 * is looked at, so that nothing about a library or a patron leaks.
 */

/** What answers one request: a library's app, or this. */
type Fetch = (request: Request, env: unknown) => Response | Promise<Response>;

export interface LibrariesAppOptions {
  /** http.basePath: "" or a path such as "/paia"; the libraries are at {basePath}/{id}. */
  basePath: string;
  /** The library of an id, served now (the set changes on reload); undefined when there is none. */
  library: (id: string) => Fetch | undefined;
  /** Where the access lines of requests no library takes go. */
  logger: Logger;
  corsOrigins?: readonly string[];
  hsts?: boolean;
  health: HealthRouteOptions;
  /** /metrics; not served when left out (metrics.enabled false). */
  metricsEndpoint?: MetricsRouteOptions;
  /** Where the requests no library takes are counted (route "other"); none when metrics are off. */
  requestMetrics?: Pick<HttpMetrics, 'record'>;
}

/** The gateway's fetch with several libraries: each library's requests to its app, the rest here. */
export function librariesFetch(options: LibrariesAppOptions): Fetch {
  const prefix = `${options.basePath}/`;
  const root = rootApp(options);
  return (request, env) => {
    const library = options.library(librarySegment(request.url, prefix));
    return library === undefined ? root.fetch(request, env) : library(request, env);
  };
}

/** The first path segment below `prefix` ("/paia/" or "/"), percent-decoded; "" when the path is not below it. */
export function librarySegment(url: string, prefix: string): string {
  // The URL's path starts at the first "/" after "scheme://host"; undici hands absolute URLs only.
  const pathStart = url.indexOf('/', url.indexOf('//') + 2);
  if (pathStart < 0 || !url.startsWith(prefix, pathStart)) return '';
  const start = pathStart + prefix.length;
  let end = start;
  while (end < url.length && url[end] !== '/' && url[end] !== '?' && url[end] !== '#') end++;
  const segment = url.slice(start, end);
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return '';
  }
}

/** The operations endpoints for all libraries, and not_found for every other URL, with the frame every PAIA answer has. */
function rootApp(options: LibrariesAppOptions): Hono {
  const app = new Hono();
  mountHealth(app, options.health);
  if (options.metricsEndpoint) mountMetrics(app, options.metricsEndpoint);
  const realm = 'PAIA';
  const onError: ErrorHandler = (thrown, c) => {
    const { error, kind } = translateError(thrown, c.get('requestId') ?? '-');
    if (kind === 'bug') (requestLog(c) ?? options.logger).error({ err: thrown }, 'unexpected error');
    return respondError(c, error, { realm });
  };
  // An auth URL of a library that is not here ({basePath}/{id}/auth/...) answers as PAIA auth does, as it would at a library.
  const authOfAnyLibrary: RequestStep = (c) => {
    if (c.req.path.slice(options.basePath.length).split('/')[2] === 'auth') c.get('format').api = 'auth';
  };
  app.use(
    '*',
    requestFrame(
      [
        // As in a library's app: first, so that every answer here is counted, and with no route but "other".
        ...(options.requestMetrics ? [httpMetrics({ metrics: options.requestMetrics, routes: new Map() })] : []),
        accessLog({ logger: options.logger.child({}, { redact: { paths: [] } }) }),
        parseRequestUrl,
        responsePolicyStep(responsePolicy({ corsOrigins: options.corsOrigins, hsts: options.hsts })),
        requestIdStep({ logger: options.logger }),
        paiaFormatStep({ authPrefix: `${options.basePath}/auth` }),
        authOfAnyLibrary,
      ],
      onError,
    ),
  );
  const unknown = () =>
    notFound('unknown URL: no library of this gateway here (the URLs are {basePath}/{library}/...)');
  app.all('*', () => {
    throw unknown();
  });
  app.notFound((c) => respondError(c, unknown(), { realm }));
  app.onError(onError);
  return app;
}
