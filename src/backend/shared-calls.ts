import { Cancellation, type CancelSignal } from '../cancel-signal.js';
import { Dictionary } from '../dictionary.js';
import { cancelled } from '../sip2/index.js';
import { abortable } from './abortable.js';

interface Call<V> {
  promise: Promise<V>;
  /** Cancels the shared work; used once every caller waiting for it has given up. */
  cancellation: Cancellation;
  /** Callers still waiting for it. */
  waiters: number;
}

/**
 * Work in flight shared by key: a caller asking for a key whose work is
 * already under way waits for that work instead of starting its own. A
 * caller whose `signal` aborts stops waiting at once; the shared work is
 * cancelled (its signal aborted) only when no caller waits for it any more.
 * A caller without a signal cannot give up, so it keeps the work alive.
 * Only work in flight is shared: once settled, the next caller starts anew.
 * Used by SharedReads (identical SIP2 reads of concurrent calls) and by
 * DAIA's HTTP record source (one lookup per record in flight).
 */
export class SharedCalls<V> {
  // Not a Map: an entry goes in and out for every read (dictionary.ts says why that matters).
  private readonly calls = new Dictionary<Call<V>>();

  /** Whether work for `key` is in flight (a run() now would join it). */
  has(key: string): boolean {
    return this.calls.has(key);
  }

  /** The outcome of the work in flight for `key`, else of `start(signal)`, started now. */
  run(key: string, start: (signal: CancelSignal) => Promise<V>, signal?: CancelSignal): Promise<V> {
    if (signal?.aborted) return Promise.reject(cancelled(signal, false));
    let call = this.calls.get(key);
    if (call === undefined) call = this.start(key, start);
    return this.wait(key, call, signal);
  }

  /** The next run() for `key` starts new work; callers of the work in flight still get its outcome. */
  forget(key: string): void {
    this.calls.delete(key);
  }

  /** forget() for every key in flight that `test` accepts (a handful at any time: the calls in flight). */
  forgetWhere(test: (key: string) => boolean): void {
    for (const key of this.calls.keys()) if (test(key)) this.calls.delete(key);
  }

  private start(key: string, start: (signal: CancelSignal) => Promise<V>): Call<V> {
    const cancellation = new Cancellation();
    let promise: Promise<V>;
    try {
      promise = start(cancellation);
    } catch (error) {
      promise = Promise.reject(error);
    }
    const call: Call<V> = { promise, cancellation, waiters: 0 };
    this.calls.set(key, call);
    // Registered before any waiter's: the work is no longer in flight once its callers hear of it.
    const settled = () => {
      // A forgotten call may have been replaced by newer work under its key: leave that alone.
      if (this.calls.get(key) === call) this.calls.delete(key);
    };
    promise.then(settled, settled);
    return call;
  }

  private wait(key: string, call: Call<V>, signal: CancelSignal | undefined): Promise<V> {
    if (signal === undefined) {
      call.waiters = Number.POSITIVE_INFINITY;
      return call.promise;
    }
    call.waiters += 1;
    return abortable(call.promise, signal, () => {
      call.waiters -= 1;
      if (call.waiters <= 0) {
        // Cancelled work is joined by nobody: the next caller starts anew.
        if (this.calls.get(key) === call) this.calls.delete(key);
        call.cancellation.abort(signal.reason);
      }
      return cancelled(signal, false);
    });
  }
}
