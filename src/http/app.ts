import type { Context } from 'hono';
import { Hono } from 'hono';
import type { ClientAllowlist } from '../auth/client-allowlist.js';
import { LoginThrottle } from '../auth/login-throttle.js';
import { DEFAULT_PASSWORD_POLICY, PasswordPolicy } from '../auth/password-policy.js';
import type { PatronIds } from '../auth/patron-ids.js';
import { RequestLimiter } from '../auth/request-limit.js';
import type { SessionStore } from '../auth/session-store.js';
import type { Backend } from '../backend/types.js';
import type { DaiaService } from '../daia/service.js';
import type { Logger } from '../log.js';
import type { HttpMetrics } from '../metrics/gateway.js';
import { routeTable } from '../metrics/routes.js';
import type { PaiaEnv } from './env.js';
import { notFound, translateError, uriTooLong } from './errors.js';
import { accessLog } from './middleware/access-log/index.js';
import { deadline } from './middleware/deadline/index.js';
import { requireForwardedHttps } from './middleware/forwarded-proto/index.js';
import { paiaFormat } from './middleware/paia-format/index.js';
import { httpMetrics } from './middleware/metrics/index.js';
import { requestId, requestLog } from './middleware/request-id/index.js';
import { respondError } from './respond.js';
import { mountAuth } from './routes/auth.js';
import { mountCore } from './routes/core.js';
import { mountDaia } from './routes/daia.js';
import { responsePolicy, responsePolicyMiddleware } from './security.js';

/** The options left out take these; the configuration's settings of the same names default to them. */
export const APP_DEFAULTS = Object.freeze({ requestsPerMinute: 120, logoutAllSessions: false, requestTimeoutMs: 30_000, maxUrlBytes: 2048 });

export interface AppOptions {
  backend: Backend;
  sessions: SessionStore;
  patronIds: PatronIds;
  /** "" or a path such as "/paia": core methods live at {basePath}/core, auth at {basePath}/auth. */
  basePath: string;
  /** Most documents in one renew, request or cancel. */
  maxDocs: number;
  /** Largest POST body, in bytes. */
  maxBodyBytes: number;
  /** Lifetime of an access token (expires_in). */
  tokenLifetimeSeconds: number;
  logger: Logger;
  /** Realm in WWW-Authenticate. Default "PAIA". */
  realm?: string;
  /** Brute-force protection for login. Default: a LoginThrottle with its default limits. */
  loginThrottle?: LoginThrottle;
  /** Weak passwords get no token. Default: DEFAULT_PASSWORD_POLICY. */
  passwordPolicy?: PasswordPolicy;
  /** Requests per minute per access token (429 beyond). */
  requestsPerMinute?: number;
  /** Logout ends every session of the patron; false: only the token used. */
  logoutAllSessions?: boolean;
  /** Bound on one whole call, in milliseconds (504 beyond; its unsent SIP2 work is dropped). */
  requestTimeoutMs?: number;
  /** Longest request target (path and query), in bytes (414 beyond). */
  maxUrlBytes?: number;
  /**
   * The client address used for login throttling. Default: the socket's
   * remote address under @hono/node-server (undefined in app.request()).
   * Behind a trusted proxy, pass a function that reads X-Forwarded-For.
   */
  clientAddress?: (c: Context<PaiaEnv>) => string | undefined;
  /**
   * Clients (by clientAddress) that may log in; others get 403 access_denied.
   * Default: any client. Core methods stay open to every holder of a token.
   */
  allowedClients?: ClientAllowlist;
  /**
   * DAIA availability at {basePath}/daia; not served when left out.
   * maxIds: most request identifiers per request (default maxDocs).
   */
  daia?: { service: DaiaService; maxIds?: number };
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
}

/** The socket's remote address of a request under @hono/node-server (its fetch `env`), if any. */
export function socketAddressOf(env: unknown): string | undefined {
  return (env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress;
}

export { lastForwardedHop } from './forwarded.js';

/** The socket address under @hono/node-server, if any. */
function socketAddress(c: Context<PaiaEnv>): string | undefined {
  return socketAddressOf(c.env);
}

/**
 * The PAIA core + auth HTTP app. Every response, errors included, is made by
 * respond()/respondError(); every thrown error goes through the one onError.
 */
export function createApp(options: AppOptions): Hono<PaiaEnv> {
  const basePath = normalizeBasePath(options.basePath);
  for (const [name, value] of [
    ['maxDocs', options.maxDocs],
    ['maxBodyBytes', options.maxBodyBytes],
    ['tokenLifetimeSeconds', options.tokenLifetimeSeconds],
    ['requestsPerMinute', options.requestsPerMinute ?? APP_DEFAULTS.requestsPerMinute],
    ['maxUrlBytes', options.maxUrlBytes ?? APP_DEFAULTS.maxUrlBytes],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${value}`);
  }
  const realm = options.realm ?? 'PAIA';
  const corePrefix = `${basePath}/core`;
  const authPrefix = `${basePath}/auth`;
  const daiaPath = `${basePath}/daia`;
  const maxIds = options.daia?.maxIds ?? options.maxDocs;
  if (!Number.isInteger(maxIds) || maxIds < 1) throw new Error(`daia.maxIds must be a positive integer, got ${maxIds}`);

  const policy = responsePolicy({ corsOrigins: options.corsOrigins, hsts: options.hsts });

  // The access line carries fixed fields only (never a header, body or query string): no redaction pass.
  const accessLogger = options.logger.child({}, { redact: { paths: [] } });
  const app = new Hono<PaiaEnv>();
  const maxUrlBytes = options.maxUrlBytes ?? APP_DEFAULTS.maxUrlBytes;
  // First of all, so that the time covers every other middleware and every refusal is counted.
  if (options.metrics) {
    app.use('*', httpMetrics({ metrics: options.metrics, routes: routeTable({ corePrefix, authPrefix, daiaPath: options.daia ? daiaPath : null }) }));
  }
  app.use('*', responsePolicyMiddleware(policy), requestId({ logger: options.logger }), accessLog({ logger: accessLogger }), paiaFormat({ authPrefix, ...(options.daia ? { daiaPath } : {}) }), async (c, next) => {
    // Path and query are percent-encoded ASCII once parsed, so characters are bytes.
    const url = new URL(c.req.url);
    if (url.pathname.length + url.search.length > maxUrlBytes) throw uriTooLong(maxUrlBytes);
    await next();
  });
  if (options.requireForwardedHttps) app.use('*', requireForwardedHttps());
  app.use('*', deadline({ timeoutMs: options.requestTimeoutMs ?? APP_DEFAULTS.requestTimeoutMs }));

  const perMinute = options.requestsPerMinute ?? APP_DEFAULTS.requestsPerMinute;
  const limiter = { limiter: new RequestLimiter({ perMinute }), perMinute };

  mountCore(app, {
    backend: options.backend,
    sessions: options.sessions,
    prefix: corePrefix,
    maxDocs: options.maxDocs,
    maxBodyBytes: options.maxBodyBytes,
    limiter,
  });
  mountAuth(app, {
    backend: options.backend,
    sessions: options.sessions,
    patronIds: options.patronIds,
    throttle: options.loginThrottle ?? new LoginThrottle(),
    clientAddress: options.clientAddress ?? socketAddress,
    ...(options.allowedClients && !options.allowedClients.open ? { allowedClients: options.allowedClients } : {}),
    prefix: authPrefix,
    maxBodyBytes: options.maxBodyBytes,
    tokenLifetimeSeconds: options.tokenLifetimeSeconds,
    passwordPolicy: options.passwordPolicy ?? new PasswordPolicy(DEFAULT_PASSWORD_POLICY),
    logoutAllSessions: options.logoutAllSessions ?? APP_DEFAULTS.logoutAllSessions,
    limiter,
  });

  if (options.daia) mountDaia(app, { service: options.daia.service, path: daiaPath, maxIds });

  const unknownUrl = () => notFound('unknown URL: no PAIA method here');
  app.all('*', () => {
    throw unknownUrl();
  });
  app.notFound((c) => respondError(c, unknownUrl(), { realm }));

  app.onError((thrown, c) => {
    const requestIdValue = c.get('requestId') ?? '-';
    const { error, kind } = translateError(thrown, requestIdValue);
    const log = requestLog(c) ?? options.logger;
    if (kind === 'backend') {
      const code = (thrown as { code?: unknown }).code;
      log.warn({ err: { type: thrown.name, code, message: thrown.message } }, 'backend failure');
    } else if (kind === 'bug') {
      log.error({ err: thrown }, 'unexpected error');
    }
    return respondError(c, error, { realm });
  });

  return app;
}

function normalizeBasePath(basePath: string): string {
  const trimmed = basePath.trim().replace(/\/+$/, '');
  if (trimmed === '') return '';
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(trimmed)) throw new Error(`basePath must be "" or a path like "/paia", got ${JSON.stringify(basePath)}`);
  return trimmed;
}
