import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../../../log.js';

/** What the access line reads besides the request id: set by the renderer on error responses. */
interface AccessLogVariables {
  /** The PAIA error code of an error response. */
  errorCode: string;
}

declare module 'hono' {
  interface ContextVariableMap extends AccessLogVariables {}
}

export interface AccessLogOptions {
  /**
   * Where the lines go. The line's fields are fixed (no headers, no body, no
   * query string), so the app passes a logger without pino's redaction pass,
   * which cost more than the rest of the line (measured).
   */
  logger: Logger;
  /** pino level of the line. Default `info`. */
  level?: 'trace' | 'debug' | 'info';
  /** Clock in milliseconds. Default `performance.now`. */
  now?: () => number;
}

/**
 * One log line per request, after the response is made: method, path
 * (never the query string, which may carry an access token), status, PAIA
 * error code if any, duration, request id (set by `requestIdStep` before
 * the response is made).
 * Headers and bodies are never logged.
 *
 * The line is made when the response is, and written on the next turn of the
 * event loop (setImmediate), after the response has gone to the socket: with
 * the asynchronous log destination, handing a line over wakes a libuv pool
 * thread, and doing that before the response cost a request about 0.05-0.1 ms
 * at low load (B3; bench/README.md, CPU profile).
 *
 * @example
 * app.use(accessLog({ logger }), requestSteps(requestIdStep({ logger })))
 */
export function accessLog(options: AccessLogOptions): MiddlewareHandler {
  const level = options.level ?? 'info';
  const now = options.now ?? (() => performance.now());
  return async function accessLogMiddleware(c, next) {
    const start = now();
    await next();
    let path = c.req.path;
    if (path.length > 512) path = `${path.slice(0, 512)}...`;
    const errorCode = c.get('errorCode');
    const line = {
      reqId: c.get('requestId'),
      method: c.req.method,
      path,
      status: c.res.status,
      ...(errorCode !== undefined ? { error: errorCode } : {}),
      ms: Math.round((now() - start) * 10) / 10,
    };
    setImmediate(() => options.logger[level](line, 'request'));
  };
}
