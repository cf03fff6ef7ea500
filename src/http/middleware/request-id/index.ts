import { randomUUID } from 'node:crypto';
import type { Context } from 'hono';
import type { Logger } from '../../../log.js';
import type { RequestStep } from '../request-steps/index.js';

/** What this middleware hands to the handlers after it. */
interface RequestIdVariables {
  /** The id echoed in X-Request-Id and bound to every log line of the request. */
  requestId: string;
  /** The app's logger, from which requestLog(c) makes the request's child on first use. */
  appLog: Logger;
  /** The request's child logger (bound to its id), made by requestLog(c) when something is logged. */
  log: Logger;
}

declare module 'hono' {
  interface ContextVariableMap extends RequestIdVariables {}
}

export interface RequestIdOptions {
  /** Parent logger; requestLog(c) gives a request a child bound to `reqId`. */
  logger: Logger;
  /** Request header carrying an id from a proxy or client. Default `X-Request-Id`. */
  headerName?: string;
  /** Generates an id when the request brings none or a bad one. Default: random UUID. */
  generate?: () => string;
  /** Which incoming ids are accepted. Default: 1 to 128 of `A-Z a-z 0-9 . _ : + / = -` (nothing that could forge a log line). */
  isValid?: (id: string) => boolean;
}

const SANE_ID = /^[A-Za-z0-9._:+/=-]{1,128}$/;

/**
 * Request id, a request step of the request frame (request-steps): takes a sane incoming
 * `X-Request-Id` or makes one and stores it as `requestId` (the renderer
 * echoes it in the response header); requestLog(c) gives the request's logger.
 *
 * @example
 * app.use(requestFrame([requestIdStep({ logger })], onError))
 */
export function requestIdStep(options: RequestIdOptions): RequestStep {
  const headerName = options.headerName ?? 'X-Request-Id';
  const generate = options.generate ?? randomUUID;
  const isValid = options.isValid ?? ((id: string) => SANE_ID.test(id));
  return function assignRequestId(c) {
    const incoming = c.req.header(headerName)?.trim();
    const id = incoming !== undefined && isValid(incoming) ? incoming : generate();
    c.set('requestId', id);
    // The child logger is made only when the request logs something besides its access line:
    // making one per request cost more than the rest of the line (a pino child redacts its bindings).
    c.set('appLog', options.logger);
  };
}

/** The request's logger, bound to its id; made on first use. Undefined before request-id ran. */
export function requestLog(c: Context): Logger | undefined {
  const made: Logger | undefined = c.get('log');
  if (made !== undefined) return made;
  const appLog: Logger | undefined = c.get('appLog');
  if (appLog === undefined) return undefined;
  const log = appLog.child({ reqId: c.get('requestId') });
  c.set('log', log);
  return log;
}
