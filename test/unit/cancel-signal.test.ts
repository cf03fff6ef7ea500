import { describe, expect, it, vi } from 'vitest';
import { Cancellation, delay } from '../../src/cancel-signal.js';
import { cancelled } from '../../src/sip2/errors.js';

describe('the light cancellation signal', () => {
  it('runs each listener once, in the order added, with the reason readable, and is aborted for good', () => {
    const signal = new Cancellation();
    const heard: string[] = [];
    signal.addEventListener('abort', () => heard.push(`first ${String(signal.reason)}`));
    signal.addEventListener('abort', () => heard.push('second'));
    expect(signal.aborted).toBe(false);
    signal.abort('deadline');
    signal.abort('client-gone');
    expect(heard).toEqual(['first deadline', 'second']);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('deadline');
    expect(cancelled(signal, false)).toMatchObject({ reason: 'deadline', requestSent: false });
  });

  it('never runs a listener removed before the abort, nor one added after it', () => {
    const signal = new Cancellation();
    const heard: string[] = [];
    const removed = () => heard.push('removed');
    signal.addEventListener('abort', removed);
    signal.removeEventListener('abort', removed);
    signal.abort('call-over');
    signal.addEventListener('abort', () => heard.push('late'));
    expect(heard).toEqual([]);
  });

  it('lets the other listeners run when one throws, and reports the error as uncaught', async () => {
    const signal = new Cancellation();
    const heard: string[] = [];
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    const listeners = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    process.on('uncaughtException', onUncaught);
    try {
      signal.addEventListener('abort', () => {
        throw new Error('listener failed');
      });
      signal.addEventListener('abort', () => heard.push('second'));
      signal.abort('deadline');
      expect(heard).toEqual(['second']);
      await new Promise((resolve) => setImmediate(resolve));
      expect(uncaught).toHaveLength(1);
      expect((uncaught[0] as Error).message).toBe('listener failed');
    } finally {
      process.off('uncaughtException', onUncaught);
      for (const listener of listeners) process.on('uncaughtException', listener);
    }
  });
});

describe('a wait its call may cut short', () => {
  it('resolves after its time, or as soon as the signal aborts, and leaves no listener behind', async () => {
    vi.useFakeTimers();
    try {
      const signal = new Cancellation();
      let waited = false;
      const wait = delay(1000, signal).then(() => {
        waited = true;
      });
      await vi.advanceTimersByTimeAsync(999);
      expect(waited).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await wait;
      expect(waited).toBe(true);

      let cut = false;
      const cutShort = delay(60_000, signal).then(() => {
        cut = true;
      });
      signal.abort('deadline');
      await vi.advanceTimersByTimeAsync(0);
      await cutShort;
      expect(cut).toBe(true);
      expect(vi.getTimerCount()).toBe(0);
      await delay(60_000, signal); // already aborted: at once
    } finally {
      vi.useRealTimers();
    }
  });

  it('takes its listener off the signal when the time is up', async () => {
    const signal = new Cancellation();
    const added: Array<() => void> = [];
    const removed: Array<() => void> = [];
    const spy = {
      get aborted() {
        return signal.aborted;
      },
      get reason() {
        return signal.reason;
      },
      addEventListener: (_type: 'abort', listener: () => void) => added.push(listener),
      removeEventListener: (_type: 'abort', listener: () => void) => removed.push(listener),
    };
    await delay(1, spy);
    expect(added).toHaveLength(1);
    expect(removed).toEqual(added);
  });
});
