import { afterEach, describe, expect, it, vi } from 'vitest';
import { FreshAnswers } from '../../../src/backend/fresh-answers.js';

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

  it('keeps a compact copy of an answer: equal to it, not the object the read returned', async () => {
    const answers = new FreshAnswers<{ items: string[] }>({ ttlMs: 1_000, maxEntries: 10 });
    const answer = { items: ['bi-00001-7'] };
    expect(await answers.read('a', async () => answer)).toBe(answer);
    expect(answers.cached('a')).toEqual(answer);
    expect(answers.cached('a')).not.toBe(answer);
  });
});
