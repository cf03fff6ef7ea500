import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TimeoutLine } from '../../src/timeout-line.js';

beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] }));
afterEach(() => vi.useRealTimers());

describe('TimeoutLine', () => {
  it('tells each wait that lasted the timeout once, oldest first, and never one that ended in time', () => {
    const told: string[] = [];
    const line = new TimeoutLine<string, string>(100, (value, key) => told.push(`${key}=${value}`));
    line.start('a', 'A');
    vi.advanceTimersByTime(30);
    line.start('b', 'B');
    line.start('c', 'C');
    vi.advanceTimersByTime(10);
    expect(line.end('b')).toBe(true);
    vi.advanceTimersByTime(59);
    expect(told).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(told).toEqual(['a=A']);
    vi.advanceTimersByTime(29);
    expect(told).toEqual(['a=A']);
    vi.advanceTimersByTime(1);
    expect(told).toEqual(['a=A', 'c=C']);
    vi.advanceTimersByTime(1000);
    expect(told).toEqual(['a=A', 'c=C']);
    expect(line.values()).toEqual([]);
    expect(line.end('a')).toBe(false);
  });

  it('keeps one timer for any number of waits', () => {
    const line = new TimeoutLine<number, null>(100, () => {});
    for (let i = 0; i < 50; i++) {
      line.start(i, null);
      vi.advanceTimersByTime(1);
    }
    expect(vi.getTimerCount()).toBe(1);
    for (let i = 0; i < 50; i++) line.end(i);
    vi.advanceTimersByTime(100);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('puts a key started again at the end of the line, timed from its new start', () => {
    const told: string[] = [];
    const line = new TimeoutLine<string, string>(100, (_value, key) => told.push(key));
    line.start('a', 'first');
    vi.advanceTimersByTime(50);
    line.start('b', 'b');
    line.start('a', 'again');
    vi.advanceTimersByTime(60);
    expect(told).toEqual([]);
    vi.advanceTimersByTime(40);
    expect(told).toEqual(['b', 'a']);
  });

  it('lets onTimeout start and end other waits', () => {
    const told: string[] = [];
    const line: TimeoutLine<string, string> = new TimeoutLine(100, (_value, key) => {
      told.push(key);
      if (key === 'a') {
        line.end('b');
        line.start('retry', 'r');
      }
    });
    line.start('a', 'a');
    line.start('b', 'b');
    vi.advanceTimersByTime(100);
    // b had lasted its time as well, but a's callback ended it first: it is never told.
    expect(told).toEqual(['a']);
    vi.advanceTimersByTime(100);
    expect(told).toEqual(['a', 'retry']);
  });

  it('never tells the old value of a wait a callback started again: the new one waits its full time', () => {
    const told: string[] = [];
    const line: TimeoutLine<string, string> = new TimeoutLine(100, (value, key) => {
      told.push(`${key}=${value}`);
      if (key === 'a') line.start('b', 'new');
    });
    line.start('a', 'A');
    line.start('b', 'old');
    vi.advanceTimersByTime(100);
    expect(told).toEqual(['a=A']);
    vi.advanceTimersByTime(99);
    expect(told).toEqual(['a=A']);
    vi.advanceTimersByTime(1);
    expect(told).toEqual(['a=A', 'b=new']);
  });

  it('lists the values oldest first, and clear() tells nobody and stops the timer', () => {
    const onTimeout = vi.fn();
    const line = new TimeoutLine<string, number>(100, onTimeout);
    line.start('x', 1);
    line.start('y', 2);
    expect(line.values()).toEqual([1, 2]);
    line.clear();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(1000);
    expect(onTimeout).not.toHaveBeenCalled();
  });

  it('shift() ends the oldest wait and returns its value: the line is also the order waits are served in', () => {
    const told: string[] = [];
    const line = new TimeoutLine<string, string>(100, (_value, key) => told.push(key));
    line.start('a', 'A');
    line.start('b', 'B');
    line.start('c', 'C');
    expect(line.size).toBe(3);
    expect(line.shift()).toBe('A');
    line.end('b');
    expect(line.shift()).toBe('C');
    expect(line.shift()).toBeUndefined();
    expect(line.size).toBe(0);
    vi.advanceTimersByTime(1000);
    expect(told).toEqual([]);
  });

  it('refuses a timeout that is not positive', () => {
    expect(() => new TimeoutLine(0, () => {})).toThrow(RangeError);
    expect(() => new TimeoutLine(Number.NaN, () => {})).toThrow(RangeError);
  });
});
