import { afterEach, describe, expect, it, vi } from 'vitest';
import { FreshAnswers } from '../../../src/backend/fresh-answers.js';
import { decodeFrame } from '../../../src/sip2/index.js';

describe('FreshAnswers', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('drops expired answers within one TTL of their expiry without being asked, and stops sweeping once none is kept', async () => {
    vi.useFakeTimers();
    // Not 0: lru-cache reads a start time of 0 as "no TTL" (performance.now() never is).
    let now = 10_000;
    const answers = new FreshAnswers<string>({ ttlMs: 1_000, maxEntries: 10, now: () => now });
    await answers.read('a', async () => 'A');
    await answers.read('b', async () => 'B');
    expect(answers.size).toBe(2);
    expect(vi.getTimerCount()).toBe(1);
    now = 10_500;
    await answers.read('c', async () => 'C'); // kept until 11,500
    now = 11_001;
    vi.advanceTimersByTime(1_000);
    expect(answers.size).toBe(1);
    expect(answers.cached('c')).toBe('C');
    now = 12_001;
    vi.advanceTimersByTime(1_000);
    expect(answers.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('gives every caller an answer of its own, equal to the one read: changing one changes no other', async () => {
    const answers = new FreshAnswers<{ items: string[] }>({ ttlMs: 1_000, maxEntries: 10 });
    const answer = { items: ['bi-00001-7'] };
    expect(await answers.read('a', async () => answer)).toBe(answer);
    const first = answers.cached('a')!;
    expect(first).toEqual(answer);
    expect(first).not.toBe(answer);
    first.items.push('changed by a caller');
    answer.items.push('changed after it was kept');
    expect(answers.cached('a')).toEqual({ items: ['bi-00001-7'] });
  });

  it('keeps a decoded 18 exactly: every field, its dates, flags, nulls and extra fields in order', async () => {
    const text =
      '1803000120261121    172931CF0|AH20261221    235900|ABbi-00001-7|AJBencher, A Long Title of a Book|AQMAIN|APMAIN|CSBX 0001 2|ZZsomething else|';
    const decoded = decodeFrame(Buffer.from(text, 'latin1'), { charset: 'cp850', errorDetection: false });
    if (decoded.kind !== 'message') throw new Error('not decoded');
    const answers = new FreshAnswers<typeof decoded.message>({ ttlMs: 1_000, maxEntries: 10 });
    await answers.read('bi-00001-7', async () => decoded.message);
    expect(answers.cached('bi-00001-7')).toStrictEqual(decoded.message);
  });

  it('leaves out properties whose value is undefined, as a JSON answer does', async () => {
    const answers = new FreshAnswers<{ status: number; about?: string; item: string }>({
      ttlMs: 1_000,
      maxEntries: 10,
    });
    await answers.read('a', async () => ({ status: 1, about: undefined, item: 'http://x/item/1' }));
    expect(answers.cached('a')).toStrictEqual({ status: 1, item: 'http://x/item/1' });
  });
});
