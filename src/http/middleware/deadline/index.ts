import type { MiddlewareHandler } from 'hono';

/**
 * One bound on a whole call (http.requestTimeoutMs), however many SIP2
 * messages it takes, and an end to its SIP2 work when its client goes away.
 * Handlers pass `callSignal` to the backend: work not yet sent to the ILS is
 * dropped when it aborts, with the reason 'deadline' or 'client-gone'. It
 * also aborts ('call-over') once the call is answered, so work a failed call
 * left waiting (the other pages of a list whose first page failed) is
 * dropped too rather than sent for nobody.
 */

/** What this middleware hands to the handlers after it. */
interface DeadlineVariables {
  /** Aborts when the call's time is up ('deadline'), its client went away ('client-gone'), or it was answered ('call-over'). */
  callSignal: AbortSignal;
}

declare module 'hono' {
  interface ContextVariableMap extends DeadlineVariables {}
}

export interface DeadlineOptions {
  /** Milliseconds a whole call may take. */
  timeoutMs: number;
}

export function deadline(options: DeadlineOptions): MiddlewareHandler {
  if (!Number.isInteger(options.timeoutMs) || options.timeoutMs < 1)
    throw new RangeError('timeoutMs must be a positive integer');
  return async (c, next) => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort('deadline'), options.timeoutMs);
    // @hono/node-server aborts the request's signal when the client closes the connection before the answer.
    const client = c.req.raw.signal;
    const onClientGone = () => controller.abort('client-gone');
    client.addEventListener('abort', onClientGone, { once: true });
    c.set('callSignal', controller.signal);
    try {
      await next();
    } finally {
      clearTimeout(timer);
      client.removeEventListener('abort', onClientGone);
      controller.abort('call-over');
    }
  };
}
