/**
 * What the pool and the backend need of a signal that cancels a call: an
 * AbortSignal has it, and so has the lighter Cancellation below.
 */
export interface CancelSignal {
  readonly aborted: boolean;
  /** What abort() was given: 'deadline', 'client-gone', 'call-over' or an error. */
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * A cancellation signal and its controller in one small object, for the
 * signals the gateway makes for itself on every call: the call's own (the
 * deadline middleware: deadline, client gone, call over) and the work shared
 * by identical reads (SharedCalls). Node's AbortController builds an
 * EventTarget, and each listener added or removed goes through its checks:
 * under B1's load createAbortSignal alone was 3% of the gateway's CPU
 * profile, and the signals were a good part of what the garbage collector
 * reclaimed; what an AbortController with one listener costs is in
 * bench/README.md. No Node API takes a Cancellation:
 * waits that a call may cut short use delay() below.
 *
 * As with an AbortSignal, listeners run synchronously and once, in the order
 * they were added, and a listener added after abort() never runs. Unlike
 * EventTarget, a listener removed by another listener during abort() still
 * runs: every listener in the gateway tolerates that (each stops waiting once).
 */
export class Cancellation implements CancelSignal {
  #aborted = false;
  #reason: unknown;
  #listeners: Array<() => void> = [];

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    // Every listener the gateway adds is a once-listener; an aborted signal never fires again.
    if (!this.#aborted) this.#listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const index = this.#listeners.lastIndexOf(listener);
    if (index !== -1) this.#listeners.splice(index, 1);
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    const listeners = this.#listeners;
    this.#listeners = [];
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        // As EventTarget does: one failing listener neither stops the others nor the caller of abort().
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}

/** Resolves after `ms`, or as soon as `signal` aborts (a wait its call no longer needs); never rejects. */
export function delay(ms: number, signal?: CancelSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
