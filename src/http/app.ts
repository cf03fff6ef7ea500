import type { Context, ErrorHandler } from 'hono';
import { Hono } from 'hono';
import type { ClientCredentialsLogin } from '../auth/client-login.js';
import type { LoginService } from '../auth/login.js';
import type { TokenRateLimit } from '../auth/token-rate-limit.js';
import type { DaiaService } from '../backend/daia/service.js';
import type { BackendFailure } from '../backend/errors.js';
import type { Backend } from '../backend/types.js';
import type { Logger } from '../log.js';
import type { HttpMetrics } from '../metrics/gateway.js';
import { routeTable } from '../metrics/routes.js';
import type { SessionStore } from '../state/sessions.js';
import type { DaiaAddressLimit } from './daia-limit.js';
import { APP_DEFAULTS } from './defaults.js';
import { notFound, translateError, uriTooLong } from './errors.js';
import { accessLog } from './middleware/access-log/index.js';
import { deadline } from './middleware/deadline/index.js';
import { requireForwardedHttps } from './middleware/forwarded-proto/index.js';
import { httpMetrics } from './middleware/metrics/index.js';
import { paiaFormatStep } from './middleware/paia-format/index.js';
import { requestIdStep, requestLog } from './middleware/request-id/index.js';
import { type RequestStep, requestFrame } from './middleware/request-steps/index.js';
import { parseRequestUrl } from './middleware/request-url/index.js';
import { responsePolicy, responsePolicyStep } from './middleware/response-policy/index.js';
import { respondError } from './respond.js';
import { mountAuth } from './routes/auth.js';
import { mountCore } from './routes/core.js';
import { mountDaia } from './routes/daia.js';
import { mountDocs } from './routes/docs.js';
import { type HealthRouteOptions, mountHealth } from './routes/health.js';
import { type MetricsRouteOptions, mountMetrics } from './routes/metrics.js';

/** The options left out take these; the configuration's settings of the same names default to them. */

export interface AppOptions {
  backend: Backend;
  sessions: SessionStore;
  /** Decides logins (allowlist, password policy, brute-force throttle, the ILS, scopes, the session). */
  login: LoginService;
  /** The client credentials grant for auth.clients; undefined: off (only password logins). */
  clientLogin?: ClientCredentialsLogin | undefined;
  /** "" or a path such as "/paia": core methods live at {basePath}/core, auth at {basePath}/auth. */
  basePath: string;
  /**
   * The base URL clients use, base path included ("https://lib.example.org/paia"):
   * links the gateway writes (DAIA's Link rel="next") start with it. Default:
   * each request's own URL, which is right only when clients reach the gateway
   * directly (behind a proxy it names the address the proxy forwards to).
   */
  publicUrl?: string | null;
  /** Most documents in one renew, request or cancel. */
  maxDocs: number;
  /** Largest POST body, in bytes. */
  maxBodyBytes: number;
  logger: Logger;
  /** Realm in WWW-Authenticate. Default "PAIA". */
  realm?: string;
  /** Requests per minute per access token (429 beyond); counted in the state store. Default: none. */
  rateLimit?: TokenRateLimit;
  /** Logout ends every session of the patron; false: only the token used. */
  logoutAllSessions?: boolean;
  /** Bound on one whole call, in milliseconds (504 beyond; its unsent SIP2 work is dropped). */
  requestTimeoutMs?: number;
  /** Longest request target (path and query), in bytes (414 beyond). */
  maxUrlBytes?: number;
  /**
   * The client address the login service checks (allowlist, throttling).
   * Default: the socket's remote address under @hono/node-server (undefined
   * in app.request()). Behind a trusted proxy, pass a function that reads
   * X-Forwarded-For.
   */
  clientAddress?: (c: Context) => string | undefined;
  /**
   * DAIA availability at {basePath}/daia; not served when left out.
   * maxIds: most request identifiers per request (default maxDocs).
   * limit: ids per client address per minute (429 beyond); default none.
   */
  daia?: { service: DaiaService; maxIds?: number; limit?: DaiaAddressLimit };
  /**
   * Origins whose scripts may read responses (CORS): ["*"] (the default, any
   * origin) or exact origins such as "https://opac.lib.example.org"; other
   * origins get no Access-Control-* headers.
   */
  corsOrigins?: readonly string[];
  /**
   * Send Strict-Transport-Security on requests that came over HTTPS (an
   * https URL, or X-Forwarded-Proto: https). Default false; turn it on when
   * the gateway serves TLS or sits behind a trusted TLS-terminating proxy.
   */
  hsts?: boolean;
  /** Behind a TLS-terminating proxy: refuse (400) requests whose X-Forwarded-Proto is not https. Default false. */
  requireForwardedHttps?: boolean;
  /** Count and time every request (paia_http_* metrics); nothing is recorded when left out. */
  metrics?: Pick<HttpMetrics, 'record'>;
  /** /healthz and /readyz at the root; not served when left out. */
  health?: HealthRouteOptions;
  /** /metrics at the root; not served when left out (metrics.enabled false). */
  metricsEndpoint?: MetricsRouteOptions;
}

/** The socket's remote address of a request under @hono/node-server (its fetch `env`), if any. */
export function socketAddressOf(env: unknown): string | undefined {
  return (env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress;
}

export { lastForwardedHop } from './forwarded.js';

/** An endpoint's absolute URL below `publicUrl` (its query and fragment dropped); null without one. Throws on a URL that does not parse. */
function publicEndpoint(publicUrl: string | null | undefined, path: string): URL | null {
  if (!publicUrl) return null;
  const url = new URL(publicUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
  url.search = '';
  url.hash = '';
  return url;
}

/** The socket address under @hono/node-server, if any. */
function socketAddress(c: Context): string | undefined {
  return socketAddressOf(c.env);
}

/**
 * The PAIA core + auth HTTP app. Every response, errors included, is made by
 * respond()/respondError(); every thrown error goes through the one onError.
 */
export function createApp(options: AppOptions): Hono {
  const basePath = normalizeBasePath(options.basePath);
  for (const [name, value] of [
    ['maxDocs', options.maxDocs],
    ['maxBodyBytes', options.maxBodyBytes],
    ['maxUrlBytes', options.maxUrlBytes ?? APP_DEFAULTS.maxUrlBytes],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${value}`);
  }
  const realm = options.realm ?? 'PAIA';
  const corePrefix = `${basePath}/core`;
  const authPrefix = `${basePath}/auth`;
  const daiaPath = `${basePath}/daia`;
  const daiaPublicUrl = publicEndpoint(options.publicUrl, '/daia');
  const maxIds = options.daia?.maxIds ?? options.maxDocs;
  if (!Number.isInteger(maxIds) || maxIds < 1) throw new Error(`daia.maxIds must be a positive integer, got ${maxIds}`);

  const policy = responsePolicy({ corsOrigins: options.corsOrigins, hsts: options.hsts });

  // The access line carries fixed fields only (never a header, body or query string): no redaction pass.
  const accessLogger = options.logger.child({}, { redact: { paths: [] } });
  const app = new Hono();
  const maxUrlBytes = options.maxUrlBytes ?? APP_DEFAULTS.maxUrlBytes;
  // The operations endpoints first: probes and scrapes pass no PAIA middleware and are not counted.
  if (options.health) mountHealth(app, options.health);
  if (options.metricsEndpoint) mountMetrics(app, options.metricsEndpoint);
  const checkUrlLength: RequestStep = (c) => {
    // Path and query are percent-encoded ASCII once parsed, so characters are bytes.
    const url = c.get('url');
    if (url.pathname.length + url.search.length > maxUrlBytes) throw uriTooLong(maxUrlBytes);
  };
  const unknownUrl = () => notFound('unknown URL: no PAIA method here');
  const onError: ErrorHandler = (thrown, c) => {
    const requestIdValue = c.get('requestId') ?? '-';
    const { error, kind } = translateError(thrown, requestIdValue);
    const log = requestLog(c) ?? options.logger;
    if (kind === 'backend') {
      const { kind: failure, reason } = thrown as BackendFailure;
      log.warn({ err: { type: thrown.name, kind: failure, reason, message: thrown.message } }, 'backend failure');
    } else if (kind === 'bug') {
      log.error({ err: thrown }, 'unexpected error');
    }
    return respondError(c, error, { realm });
  };
  app.use(
    '*',
    requestFrame(
      [
        // First of all, so that the time covers every other part and every refusal is counted.
        ...(options.metrics
          ? [
              httpMetrics({
                metrics: options.metrics,
                routes: routeTable({ corePrefix, authPrefix, daiaPath: options.daia ? daiaPath : null }),
              }),
            ]
          : []),
        // Before the steps, so that a request they refuse (bad callback, URL too long) gets its line too;
        // the line is made after the response, when the steps have set the request id.
        accessLog({ logger: accessLogger }),
        parseRequestUrl,
        responsePolicyStep(policy),
        requestIdStep({ logger: options.logger }),
        paiaFormatStep({ authPrefix, ...(options.daia ? { daiaPath } : {}) }),
        checkUrlLength,
        ...(options.requireForwardedHttps ? [requireForwardedHttps()] : []),
        deadline({ timeoutMs: options.requestTimeoutMs ?? APP_DEFAULTS.requestTimeoutMs }),
      ],
      onError,
    ),
  );

  const rateLimit = options.rateLimit;

  mountDocs(app, { basePath, maxDocs: options.maxDocs, daia: options.daia !== undefined });
  mountCore(app, {
    backend: options.backend,
    sessions: options.sessions,
    prefix: corePrefix,
    maxDocs: options.maxDocs,
    maxBodyBytes: options.maxBodyBytes,
    ...(rateLimit ? { rateLimit } : {}),
  });
  mountAuth(app, {
    login: options.login,
    ...(options.clientLogin ? { clientLogin: options.clientLogin } : {}),
    backend: options.backend,
    sessions: options.sessions,
    clientAddress: options.clientAddress ?? socketAddress,
    prefix: authPrefix,
    maxBodyBytes: options.maxBodyBytes,
    logoutAllSessions: options.logoutAllSessions ?? APP_DEFAULTS.logoutAllSessions,
    ...(rateLimit ? { rateLimit } : {}),
  });

  if (options.daia) {
    mountDaia(app, {
      service: options.daia.service,
      path: daiaPath,
      publicUrl: daiaPublicUrl,
      maxIds,
      ...(options.daia.limit ? { limit: options.daia.limit } : {}),
      clientAddress: options.clientAddress ?? socketAddress,
    });
  }

  app.all('*', () => {
    throw unknownUrl();
  });
  app.notFound((c) => respondError(c, unknownUrl(), { realm }));
  app.onError(onError);

  return app;
}

function normalizeBasePath(basePath: string): string {
  const trimmed = basePath.trim().replace(/\/+$/, '');
  if (trimmed === '') return '';
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(trimmed))
    throw new Error(`basePath must be "" or a path like "/paia", got ${JSON.stringify(basePath)}`);
  return trimmed;
}
