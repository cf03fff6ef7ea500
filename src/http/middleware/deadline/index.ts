import type { ServerResponse } from 'node:http';
import type { Context } from 'hono';
import { Cancellation, type CancelSignal } from '../../../cancel-signal.js';
import { TimeoutLine, type Wait } from '../../../timeout-line.js';
import type { RequestLayer } from '../request-steps/index.js';

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
  /** The call as this layer keeps it until the response. */
  deadlineCall: BoundCall;
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

/** One call: its signal, and what tells it that its client went away. */
class BoundCall {
  // Not an AbortController: one per request, with the listeners the pool and the backend add and remove on it,
  // cost CPU on every call (figures: bench/README.md); Cancellation does the same for the gateway's own layers (cancel-signal.ts).
  readonly signal = new Cancellation();
  /** Its place in the line of calls timed for their deadline. */
  wait: Wait | null = null;
  /**
   * Under @hono/node-server the response's 'close' before it finished is the client going away, the same test
   * the server uses to abort c.req.raw.signal. Listening there spares every request the AbortController and
   * EventTarget listener that reading c.req.raw.signal makes (bench/README.md, CPU profile). Under
   * app.request() (no node response), the request's own signal tells.
   */
  readonly outgoing: ServerResponse | undefined;
  readonly client: AbortSignal | undefined;
  readonly onGone = () => {
    if (!this.outgoing?.writableFinished) this.signal.abort('client-gone');
  };

  constructor(c: Context) {
    this.outgoing = outgoingOf(c.env);
    // A 'close' comes once: on(), not once(), which wraps the listener in one more closure per call.
    if (this.outgoing !== undefined) this.outgoing.on('close', this.onGone);
    else {
      this.client = c.req.raw.signal;
      this.client.addEventListener('abort', this.onGone, { once: true });
    }
  }

  /** The call is answered: no more listening, and its work left waiting is dropped ('call-over'). */
  end(): void {
    if (this.outgoing !== undefined) this.outgoing.off('close', this.onGone);
    else this.client?.removeEventListener('abort', this.onGone);
    this.signal.abort('call-over');
  }
}

/** A layer of the request frame (request-steps): the call's signal from the steps to its response. */
export function deadline(options: DeadlineOptions): RequestLayer {
  if (!Number.isInteger(options.timeoutMs) || options.timeoutMs < 1)
    throw new RangeError('timeoutMs must be a positive integer');
  // Every call has the same bound: one timer for all of them, not one each (timeout-line.ts).
  const calls = new TimeoutLine<Cancellation>(options.timeoutMs, (call) => call.abort('deadline'));
  return {
    start(c: Context) {
      const call = new BoundCall(c);
      call.wait = calls.start(call.signal);
      c.set('deadlineCall', call);
      c.set('callSignal', call.signal);
    },
    finish(c: Context) {
      const call = c.get('deadlineCall');
      call.wait?.leave();
      call.end();
    },
  };
}
