import type { ServerResponse } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import { Cancellation, type CancelSignal } from '../../../cancel-signal.js';
import { TimeoutLine } from '../../../timeout-line.js';

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
  callSignal: CancelSignal;
}

declare module 'hono' {
  interface ContextVariableMap extends DeadlineVariables {}
}

export interface DeadlineOptions {
  /** Milliseconds a whole call may take. */
  timeoutMs: number;
}

/** The node:http response under @hono/node-server (its fetch `env`); undefined under app.request(). */
function outgoingOf(env: unknown): ServerResponse | undefined {
  return (env as { outgoing?: ServerResponse } | undefined)?.outgoing;
}

export function deadline(options: DeadlineOptions): MiddlewareHandler {
  if (!Number.isInteger(options.timeoutMs) || options.timeoutMs < 1)
    throw new RangeError('timeoutMs must be a positive integer');
  // Every call has the same bound: one timer for all of them, not one each (timeout-line.ts).
  const calls = new TimeoutLine<Cancellation, Cancellation>(options.timeoutMs, (call) => call.abort('deadline'));
  return async (c, next) => {
    // Not an AbortController: one per request, with the listeners the pool and the backend add and remove on it,
    // cost some 5 µs of CPU per call; Cancellation does the same for the gateway's own layers (cancel-signal.ts).
    const controller = new Cancellation();
    calls.start(controller, controller);
    const onClientGone = () => controller.abort('client-gone');
    // Under @hono/node-server the response's 'close' before it finished is the client going away, the
    // same test the server uses to abort c.req.raw.signal. Listening there spares every request the
    // AbortController and EventTarget listener that reading c.req.raw.signal makes (bench/README.md, CPU profile).
    const outgoing = outgoingOf(c.env);
    const onClose = () => {
      if (!outgoing?.writableFinished) onClientGone();
    };
    const client = outgoing === undefined ? c.req.raw.signal : undefined;
    if (outgoing !== undefined) outgoing.once('close', onClose);
    else client?.addEventListener('abort', onClientGone, { once: true });
    c.set('callSignal', controller);
    try {
      await next();
    } finally {
      calls.end(controller);
      if (outgoing !== undefined) outgoing.off('close', onClose);
      else client?.removeEventListener('abort', onClientGone);
      controller.abort('call-over');
    }
  };
}
