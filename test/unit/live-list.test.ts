import { describe, expect, it } from 'vitest';
import { LiveList } from '../../src/live-list.js';

describe('LiveList', () => {
  it('holds what was put in, oldest first, until it leaves, and counts it', () => {
    const list = new LiveList<string>();
    const [a, b, c] = ['a', 'b', 'c'].map((item) => list.add(item));
    expect(list.values()).toEqual(['a', 'b', 'c']);
    expect(list.size).toBe(3);
    expect(b!.leave()).toBe(true);
    expect(list.values()).toEqual(['a', 'c']);
    expect(c!.leave()).toBe(true);
    expect(a!.leave()).toBe(true);
    expect(list.values()).toEqual([]);
    expect(list.size).toBe(0);
    expect(list.add('d') && list.values()).toEqual(['d']);
  });

  it('lets an item leave once: a second leave() is false and changes nothing', () => {
    const list = new LiveList<string>();
    const a = list.add('a');
    list.add('b');
    expect(a.leave()).toBe(true);
    expect(a.leave()).toBe(false);
    expect(list.values()).toEqual(['b']);
    expect(list.size).toBe(1);
  });

  it('keeps the same item put in twice as two places, each leaving on its own', () => {
    const list = new LiveList<string>();
    const first = list.add('a');
    list.add('a');
    first.leave();
    expect(list.values()).toEqual(['a']);
  });

  it('shows and takes out the oldest item; clear() takes out all, and their places are then out', () => {
    const list = new LiveList<number>();
    const one = list.add(1);
    const two = list.add(2);
    list.add(3);
    expect(list.first()).toBe(1);
    expect(list.shift()).toBe(1);
    expect(one.leave()).toBe(false);
    expect(list.first()).toBe(2);
    list.clear();
    expect(list.size).toBe(0);
    expect(list.first()).toBeUndefined();
    expect(list.shift()).toBeUndefined();
    expect(two.leave()).toBe(false);
  });

  it('lets items leave while its values are gone through (they are a copy)', () => {
    const list = new LiveList<number>();
    const places = [1, 2, 3].map((n) => list.add(n));
    const seen: number[] = [];
    for (const n of list.values()) {
      seen.push(n);
      for (const place of places) place.leave();
    }
    expect(seen).toEqual([1, 2, 3]);
    expect(list.size).toBe(0);
  });
});
