import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../../../log.js';
import type { PaiaEnv } from '../../env.js';

export interface RequestIdOptions {
  /** Parent logger; each request gets a child bound to `reqId`. */
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
 * Request id middleware: takes a sane incoming `X-Request-Id` or makes one,
 * stores it as `requestId` and a child logger as `log`. The renderer echoes
 * it in the response header.
 *
 * @example
 * app.use(requestId({ logger }))
 */
export function requestId(options: RequestIdOptions): MiddlewareHandler<PaiaEnv> {
  const headerName = options.headerName ?? 'X-Request-Id';
  const generate = options.generate ?? randomUUID;
  const isValid = options.isValid ?? ((id: string) => SANE_ID.test(id));
  return async function requestIdMiddleware(c, next) {
    const incoming = c.req.header(headerName)?.trim();
    const id = incoming !== undefined && isValid(incoming) ? incoming : generate();
    c.set('requestId', id);
    c.set('log', options.logger.child({ reqId: id }));
    await next();
  };
}
