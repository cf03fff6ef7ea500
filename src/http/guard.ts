import { abortable } from '../backend/abortable.js';
import { cancelledCall } from '../backend/errors.js';
import type { CancelSignal } from '../cancel-signal.js';

/**
 * Runs a call into a plug-in (backend, session store) so that whatever it
 * throws, synchronously or not, is an Error: Hono passes only Errors to
 * onError.
 */
export function guarded<T>(what: string, call: () => Promise<T>): Promise<T> {
  // Not an async function: on every request's session check, rate limit and read, its frame and await cost more
  // than the one catch handler here (bench/README.md, CPU per request).
  try {
    return call().catch((thrown: unknown) => {
      throw asError(what, thrown);
    });
  } catch (thrown) {
    return Promise.reject(asError(what, thrown));
  }
}

function asError(what: string, thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(`${what} threw a non-Error value (${typeof thrown})`);
}

/**
 * A read from the backend, answered no later than its call's signal aborts:
 * the backend drops the call's unsent SIP2 work, and the client gets its 504
 * at the deadline even if something below were slow to notice.
 */
export function readUntil<T>(signal: CancelSignal, what: string, call: () => Promise<T>): Promise<T> {
  if (signal.aborted) return Promise.reject(cancelledCall(signal));
  return abortable(guarded(what, call), signal, () => cancelledCall(signal));
}
