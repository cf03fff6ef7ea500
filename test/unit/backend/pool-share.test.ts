import { afterEach, describe, expect, it, vi } from 'vitest';
import { BackendFailure } from '../../../src/backend/errors.js';
import { PoolShare, type PoolShareOptions, shareOf } from '../../../src/backend/pool-share.js';
import { CallCancelled } from '../../../src/sip2/errors.js';

/** A request the test finishes by hand, with a count of how many such requests are running. */
function requests() {
  let running = 0;
  let peak = 0;
  const finishers: Array<() => void> = [];
  const request = (value: string) => () => {
    running += 1;
    peak = Math.max(peak, running);
    return new Promise<string>((resolve) => {
      finishers.push(() => {
        running -= 1;
        resolve(value);
      });
    });
  };
  return {
    request,
    /** Finishes the oldest running request. */
    finishOne: () => finishers.shift()?.(),
    get running() {
      return running;
    },
    get peak() {
      return peak;
    },
  };
}

const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

function share(options: Partial<PoolShareOptions> = {}): PoolShare {
  return new PoolShare({
    name: 'DAIA',
    share: 0.5,
    connections: () => 4,
    maxWaiting: 100,
    waitTimeoutMs: 5000,
    ...options,
  });
}

afterEach(() => {
  vi.useRealTimers();
});

describe('shareOf', () => {
  it('is the fraction of the connections rounded down, at least one, at most all', () => {
    expect(shareOf(4, 0.5)).toBe(2);
    expect(shareOf(5, 0.5)).toBe(2);
    expect(shareOf(10, 0.25)).toBe(2);
    expect(shareOf(1, 0.5)).toBe(1);
    expect(shareOf(3, 0.1)).toBe(1);
    expect(shareOf(4, 1)).toBe(4);
  });
});

describe('PoolShare', () => {
  it('runs at most its share of the connections at once, the rest in order as slots free up', async () => {
    const work = requests();
    const gate = share();
    const order: string[] = [];
    const results = ['a', 'b', 'c', 'd', 'e'].map((name) =>
      gate.run(work.request(name)).then((value) => order.push(value)),
    );
    await flush();
    expect(work.running).toBe(2);
    expect(gate.stats()).toMatchObject({ running: 2, waiting: 3, concurrency: 2 });
    for (let i = 0; i < 5; i += 1) {
      work.finishOne();
      await flush();
      expect(work.running).toBeLessThanOrEqual(2);
    }
    await Promise.all(results);
    expect(order).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(work.peak).toBe(2);
    expect(gate.stats()).toMatchObject({ running: 0, waiting: 0, refused: 0 });
  });

  it('refuses at once, as busy, a request beyond maxWaiting; one that can start now is never refused', async () => {
    const work = requests();
    const gate = share({ maxWaiting: 1 });
    const first = gate.run(work.request('a'));
    const second = gate.run(work.request('b'));
    const third = gate.run(work.request('c'));
    const fourth = gate.run(work.request('d'));
    await expect(fourth).rejects.toSatisfy(
      (error: unknown) => error instanceof BackendFailure && error.kind === 'busy' && error.reason === 'share-full',
    );
    expect(gate.stats()).toMatchObject({ running: 2, waiting: 1, refused: 1 });
    work.finishOne();
    work.finishOne();
    await flush();
    work.finishOne();
    await expect(Promise.all([first, second, third])).resolves.toEqual(['a', 'b', 'c']);
  });

  it('gives up on a request that waits longer than waitTimeoutMs (busy, Retry-After 1 s); it never runs', async () => {
    vi.useFakeTimers();
    const work = requests();
    const gate = share({ connections: () => 1, waitTimeoutMs: 300 });
    const first = gate.run(work.request('a'));
    const late = gate.run(work.request('late'));
    const outcome = late.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(299);
    expect(gate.stats().waiting).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    const error = await outcome;
    expect(error).toBeInstanceOf(BackendFailure);
    expect(error).toMatchObject({ kind: 'busy', reason: 'share-timeout', retryAfterSeconds: 1 });
    expect(gate.stats()).toMatchObject({ waiting: 0, refused: 1 });
    work.finishOne();
    await expect(first).resolves.toBe('a');
    await vi.advanceTimersByTimeAsync(1000);
    expect(work.peak).toBe(1);
    expect(work.running).toBe(0);
  });

  it('stops waiting at once when the caller gives up, and the request never runs', async () => {
    const work = requests();
    const gate = share({ connections: () => 1 });
    const first = gate.run(work.request('a'));
    const caller = new AbortController();
    const waiting = gate.run(work.request('never'), caller.signal);
    caller.abort();
    await expect(waiting).rejects.toSatisfy(
      (error: unknown) => error instanceof CallCancelled && error.requestSent === false,
    );
    expect(gate.stats().waiting).toBe(0);
    work.finishOne();
    await expect(first).resolves.toBe('a');
    await flush();
    expect(work.peak).toBe(1);
    expect(work.running).toBe(0);
    // An already aborted signal: refused before anything is queued.
    await expect(gate.run(work.request('never'), caller.signal)).rejects.toBeInstanceOf(CallCancelled);
  });

  it('answers a caller that gives up while its request runs at once, but keeps the slot until the request ends', async () => {
    const work = requests();
    const gate = share({ connections: () => 1 });
    const caller = new AbortController();
    const running = gate.run(work.request('a'), caller.signal);
    const next = gate.run(work.request('b'));
    await flush();
    caller.abort();
    await expect(running).rejects.toSatisfy(
      (error: unknown) => error instanceof CallCancelled && error.requestSent === true,
    );
    await flush();
    // The abandoned request still holds the only slot: the next one has not started.
    expect(work.running).toBe(1);
    expect(gate.stats()).toMatchObject({ running: 1, waiting: 1 });
    work.finishOne();
    await flush();
    expect(work.running).toBe(1);
    work.finishOne();
    await expect(next).resolves.toBe('b');
    expect(work.peak).toBe(1);
  });

  it('passes a failure of the request on as it is', async () => {
    const gate = share();
    await expect(gate.run(() => Promise.reject(new Error('ILS down')))).rejects.toThrow('ILS down');
    expect(gate.stats()).toMatchObject({ running: 0, refused: 0 });
  });

  it('follows the connections the pool has now (the ILS serving fewer sessions than sip2.pool.max)', async () => {
    let connections = 8;
    const work = requests();
    const gate = share({ connections: () => connections });
    expect(gate.concurrency).toBe(4);
    connections = 2;
    const all = ['a', 'b', 'c'].map((name) => gate.run(work.request(name)));
    await flush();
    expect(work.running).toBe(1);
    work.finishOne();
    await flush();
    work.finishOne();
    await flush();
    work.finishOne();
    await expect(Promise.all(all)).resolves.toEqual(['a', 'b', 'c']);
    expect(work.peak).toBe(1);
  });

  it('refuses settings that make no share', () => {
    expect(() => share({ share: 0 })).toThrow(RangeError);
    expect(() => share({ share: 1.5 })).toThrow(RangeError);
    expect(() => share({ maxWaiting: -1 })).toThrow(RangeError);
    expect(() => share({ waitTimeoutMs: 0 })).toThrow(RangeError);
  });
});
