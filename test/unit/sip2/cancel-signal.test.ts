import { describe, expect, it } from 'vitest';
import { Cancellation } from '../../../src/sip2/cancel-signal.js';
import { cancelled } from '../../../src/sip2/errors.js';

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
