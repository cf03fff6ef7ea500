import type { CancelSignal } from '../cancel-signal.js';

/**
 * The outcome of `promise`, unless `signal` aborts first: then the error
 * `onAbort` returns (it may also let go of what the caller held), and the
 * promise goes on without this waiter. The abort listener is removed either
 * way, so a long-lived signal does not collect listeners.
 */
export function abortable<T>(promise: Promise<T>, signal: CancelSignal, onAbort: () => unknown): Promise<T> {
  // A listener added to an aborted signal never runs.
  if (signal.aborted) return Promise.reject(onAbort());
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(onAbort());
    signal.addEventListener('abort', abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(error);
      },
    );
  });
}
