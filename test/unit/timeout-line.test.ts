import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TimeoutLine, type Wait } from '../../src/timeout-line.js';

beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] }));
afterEach(() => vi.useRealTimers());

describe('TimeoutLine', () => {
  it('tells each wait that lasted the timeout once, oldest first, and never one that ended in time', () => {
    const told: string[] = [];
    const line = new TimeoutLine<string>(100, (value) => told.push(value));
    const a = line.start('A');
    vi.advanceTimersByTime(30);
    const b = line.start('B');
    line.start('C');
    vi.advanceTimersByTime(10);
    expect(b.leave()).toBe(true);
    vi.advanceTimersByTime(59);
    expect(told).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(told).toEqual(['A']);
    vi.advanceTimersByTime(29);
    expect(told).toEqual(['A']);
    vi.advanceTimersByTime(1);
    expect(told).toEqual(['A', 'C']);
    vi.advanceTimersByTime(1000);
    expect(told).toEqual(['A', 'C']);
    expect(line.values()).toEqual([]);
    expect(a.leave()).toBe(false);
    expect(b.leave()).toBe(false);
  });

  it('keeps one timer for any number of waits', () => {
    const line = new TimeoutLine<null>(100, () => {});
    const waits: Wait[] = [];
    for (let i = 0; i < 50; i++) {
      waits.push(line.start(null));
      vi.advanceTimersByTime(1);
    }
    expect(vi.getTimerCount()).toBe(1);
    for (const wait of waits) wait.leave();
    vi.advanceTimersByTime(100);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('ends a wait in the middle of the line and keeps the rest in order', () => {
    const line = new TimeoutLine<string>(100, () => {});
    line.start('a');
    const b = line.start('b');
    line.start('c');
    b.leave();
    expect(line.values()).toEqual(['a', 'c']);
    expect(line.size).toBe(2);
    const d = line.start('d');
    d.leave();
    expect(line.values()).toEqual(['a', 'c']);
    expect(line.shift()).toBe('a');
    expect(line.shift()).toBe('c');
    expect(line.values()).toEqual([]);
    expect(line.start('e') && line.values()).toEqual(['e']);
  });

  it('lets onTimeout start and end other waits', () => {
    const told: string[] = [];
    let b: Wait | undefined;
    const line: TimeoutLine<string> = new TimeoutLine(100, (value) => {
      told.push(value);
      if (value === 'a') {
        b?.leave();
        line.start('retry');
      }
    });
    line.start('a');
    b = line.start('b');
    vi.advanceTimersByTime(100);
    // b had lasted its time as well, but a's callback ended it first: it is never told.
    expect(told).toEqual(['a']);
    vi.advanceTimersByTime(99);
    expect(told).toEqual(['a']);
    vi.advanceTimersByTime(1);
    expect(told).toEqual(['a', 'retry']);
  });

  it('lists the values oldest first, and clear() tells nobody and stops the timer', () => {
    const onTimeout = vi.fn();
    const line = new TimeoutLine<number>(100, onTimeout);
    const x = line.start(1);
    line.start(2);
    expect(line.values()).toEqual([1, 2]);
    line.clear();
    expect(vi.getTimerCount()).toBe(0);
    expect(line.size).toBe(0);
    expect(x.leave()).toBe(false);
    vi.advanceTimersByTime(1000);
    expect(onTimeout).not.toHaveBeenCalled();
  });

  it('shift() ends the oldest wait and returns its value: the line is also the order waits are served in', () => {
    const told: string[] = [];
    const line = new TimeoutLine<string>(100, (value) => told.push(value));
    const a = line.start('A');
    const b = line.start('B');
    line.start('C');
    expect(line.size).toBe(3);
    expect(line.shift()).toBe('A');
    expect(a.leave()).toBe(false);
    b.leave();
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
