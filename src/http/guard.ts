import { abortable } from '../backend/abortable.js';
import { cancelledCall } from '../backend/errors.js';
import type { CancelSignal } from '../cancel-signal.js';

/**
 * Runs a call into a plug-in (backend, session store) so that whatever it
 * throws, synchronously or not, is an Error: Hono passes only Errors to
 * onError.
 */
export async function guarded<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (thrown) {
    throw thrown instanceof Error ? thrown : new Error(`${what} threw a non-Error value (${typeof thrown})`);
  }
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
