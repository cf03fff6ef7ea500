import type { Context } from 'hono';
import type { Logger } from '../../../log.js';
import type { RequestLayer } from '../request-steps/index.js';

/** What the access line reads besides the request id: set by the renderer on error responses. */
interface AccessLogVariables {
  /** The PAIA error code of an error response. */
  errorCode: string;
  /** When the request started, by the layer's clock. */
  accessLogStart: number;
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
 * Headers and bodies are never logged. A layer of the request frame
 * (request-steps), outside the steps, so that a request they refuse gets its
 * line too.
 *
 * The line is made when the response is, and written on the next turn of the
 * event loop (setImmediate), after the response has gone to the socket: the
 * log's write is a system call, and making it before the response made every
 * request slower at low load (B3; bench/README.md, CPU profile). The lines of
 * one turn go out together on the next, in the order their responses were
 * made: one setImmediate per turn, not one per request.
 *
 * @example
 * app.use(requestFrame([accessLog({ logger }), requestIdStep({ logger })], onError))
 */
export function accessLog(options: AccessLogOptions): RequestLayer {
  const level = options.level ?? 'info';
  const logger = options.logger;
  const now = options.now ?? (() => performance.now());
  let waiting: object[] = [];
  const writeWaiting = () => {
    const lines = waiting;
    waiting = [];
    for (const line of lines) logger[level](line, 'request');
  };
  return {
    start(c: Context) {
      c.set('accessLogStart', now());
    },
    finish(c: Context) {
      // A request whose error could not be rendered has no response, and no line (as when this was a middleware).
      if (!c.finalized) return;
      let path = c.req.path;
      if (path.length > 512) path = `${path.slice(0, 512)}...`;
      const reqId = c.get('requestId');
      const method = c.req.method;
      const status = c.res.status;
      const errorCode = c.get('errorCode');
      const ms = Math.round((now() - c.get('accessLogStart')) * 10) / 10;
      // The fields in this order, `error` only on an error response: the line's bytes are its contract.
      const line =
        errorCode !== undefined
          ? { reqId, method, path, status, error: errorCode, ms }
          : { reqId, method, path, status, ms };
      if (waiting.length === 0) setImmediate(writeWaiting);
      waiting.push(line);
    },
  };
}
