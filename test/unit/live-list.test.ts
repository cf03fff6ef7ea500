import { describe, expect, it } from 'vitest';
import { LiveList } from '../../src/live-list.js';

describe('LiveList', () => {
  it('holds what was put in until its way out is taken, newest first, and counts it', () => {
    const list = new LiveList<string>();
    const outA = list.add('a');
    const outB = list.add('b');
    const outC = list.add('c');
    expect(list.values()).toEqual(['c', 'b', 'a']);
    expect(list.size).toBe(3);
    outB();
    expect(list.values()).toEqual(['c', 'a']);
    outC();
    expect(list.values()).toEqual(['a']);
    outA();
    expect(list.values()).toEqual([]);
    expect(list.size).toBe(0);
  });

  it('takes an item out once: a second call changes nothing', () => {
    const list = new LiveList<string>();
    const outA = list.add('a');
    list.add('b');
    outA();
    outA();
    expect(list.values()).toEqual(['b']);
    expect(list.size).toBe(1);
  });

  it('keeps the same item put in twice as two entries, each with its own way out', () => {
    const list = new LiveList<string>();
    const first = list.add('a');
    list.add('a');
    first();
    expect(list.values()).toEqual(['a']);
  });

  it('lets items go while its values are gone through (they are a copy)', () => {
    const list = new LiveList<number>();
    const outs = [1, 2, 3].map((n) => list.add(n));
    const seen: number[] = [];
    for (const n of list.values()) {
      seen.push(n);
      for (const out of outs) out();
    }
    expect(seen).toEqual([3, 2, 1]);
    expect(list.size).toBe(0);
  });
});
