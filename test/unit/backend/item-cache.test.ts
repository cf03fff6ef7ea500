import { describe, expect, it } from 'vitest';
import { ItemInfoCache, itemLookup } from '../../../src/backend/item-cache.js';
import { SharedReads } from '../../../src/backend/shared-reads.js';
import { sip2DateFrom } from '../../../src/sip2/date.js';
import { Sip2Messages } from '../../../src/sip2/messages.js';
import type { ItemInformation, ItemInformationResponse, RequestMessage, ResponseOf } from '../../../src/sip2/spec.js';

function answer(item: string, dueDate = 'one'): ItemInformationResponse {
  return {
    code: '18',
    circulationStatus: 4,
    securityMarker: 2,
    feeType: 1,
    transactionDate: sip2DateFrom(new Date(2026, 2, 15, 12)),
    itemIdentifier: item,
    titleIdentifier: `Title ${item}`,
    dueDate,
  };
}

/** A SIP2 send of 17s whose answers the test releases by hand (answerAll), recording the items asked. */
function manualSend() {
  const sent: string[] = [];
  const waiting: Array<() => void> = [];
  const send = <M extends RequestMessage>(message: M): Promise<ResponseOf<M['code']>> => {
    const item = (message as unknown as ItemInformation).itemIdentifier;
    sent.push(item);
    return new Promise((resolve) => waiting.push(() => resolve(answer(item) as unknown as ResponseOf<M['code']>)));
  };
  const answerAll = () => {
    for (const release of waiting.splice(0)) release();
  };
  return { send, sent, answerAll };
}

/** A lookup whose answers the test releases by hand, counting the calls per item. */
function manualLookup() {
  const calls: string[] = [];
  const waiting: Array<{ item: string; resolve: (r: ItemInformationResponse) => void; reject: (e: Error) => void }> =
    [];
  const lookup = (item: string) => {
    calls.push(item);
    return new Promise<ItemInformationResponse>((resolve, reject) => waiting.push({ item, resolve, reject }));
  };
  return { lookup, calls, waiting };
}

function clock() {
  let now = 1_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('ItemInfoCache', () => {
  it('answers a second get from the cache and counts hits and misses', async () => {
    const cache = new ItemInfoCache({ ttlMs: 15_000, maxEntries: 10 });
    let calls = 0;
    const lookup = async (item: string) => {
      calls++;
      return answer(item);
    };
    expect((await cache.get('a', lookup)).itemIdentifier).toBe('a');
    expect((await cache.get('a', lookup)).itemIdentifier).toBe('a');
    expect((await cache.get('b', lookup)).itemIdentifier).toBe('b');
    expect(calls).toBe(2);
    expect(cache.stats()).toEqual({ hits: 1, misses: 2, entries: 2, maxEntries: 10 });
  });

  it('asks the ILS again once the TTL has passed', async () => {
    const time = clock();
    const cache = new ItemInfoCache({ ttlMs: 15_000, maxEntries: 10, now: time.now });
    let calls = 0;
    const lookup = async (item: string) => answer(item, `v${++calls}`);
    expect((await cache.get('a', lookup)).dueDate).toBe('v1');
    time.advance(14_999);
    expect((await cache.get('a', lookup)).dueDate).toBe('v1');
    time.advance(2);
    expect((await cache.get('a', lookup)).dueDate).toBe('v2');
    expect(calls).toBe(2);
  });

  it('leaves concurrent lookups of one item to the reads beneath: each miss asks its lookup, one answer is kept', async () => {
    const cache = new ItemInfoCache({ ttlMs: 15_000, maxEntries: 10 });
    const ils = manualLookup();
    const first = cache.get('a', ils.lookup);
    const second = cache.get('a', ils.lookup);
    expect(ils.calls).toEqual(['a', 'a']);
    for (const waiter of ils.waiting) waiter.resolve(answer('a'));
    expect((await first).itemIdentifier).toBe('a');
    expect((await second).itemIdentifier).toBe('a');
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 2, entries: 1 });
    await cache.get('a', ils.lookup);
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 2 });
  });

  it('keeps no answer of a lookup that outlived more invalidations than the cache remembers', async () => {
    const cache = new ItemInfoCache({ ttlMs: 15_000, maxEntries: 10 });
    const ils = manualLookup();
    const slow = cache.get('a', ils.lookup);
    for (let i = 0; i <= 10_000; i++) cache.invalidate(`other-${i}`);
    ils.waiting[0]!.resolve(answer('a', 'maybe stale'));
    expect((await slow).dueDate).toBe('maybe stale');
    const next = cache.get('a', ils.lookup);
    expect(ils.calls).toEqual(['a', 'a']);
    ils.waiting[1]!.resolve(answer('a', 'fresh'));
    expect((await next).dueDate).toBe('fresh');
    expect((await cache.get('a', ils.lookup)).dueDate).toBe('fresh');
  });

  it('keeps no failure: the next get asks again', async () => {
    const cache = new ItemInfoCache({ ttlMs: 15_000, maxEntries: 10 });
    const ils = manualLookup();
    const failed = cache.get('a', ils.lookup);
    ils.waiting[0]!.reject(new Error('timeout'));
    await expect(failed).rejects.toThrow('timeout');
    const retried = cache.get('a', ils.lookup);
    expect(ils.calls).toEqual(['a', 'a']);
    ils.waiting[1]!.resolve(answer('a'));
    expect((await retried).itemIdentifier).toBe('a');
    expect(cache.stats().entries).toBe(1);
  });

  it('invalidate drops the entry: the next get asks the ILS', async () => {
    const cache = new ItemInfoCache({ ttlMs: 15_000, maxEntries: 10 });
    let calls = 0;
    const lookup = async (item: string) => answer(item, `v${++calls}`);
    await cache.get('a', lookup);
    await cache.get('b', lookup);
    cache.invalidate('a');
    expect((await cache.get('a', lookup)).dueDate).toBe('v3');
    expect((await cache.get('b', lookup)).dueDate).toBe('v2');
  });

  it('an answer in flight when the item is invalidated reaches its caller but is not kept', async () => {
    const cache = new ItemInfoCache({ ttlMs: 15_000, maxEntries: 10 });
    const ils = manualLookup();
    const before = cache.get('a', ils.lookup);
    cache.invalidate('a'); // e.g. a renew of it completed meanwhile
    const after = cache.get('a', ils.lookup); // must not join the stale lookup
    expect(ils.calls).toEqual(['a', 'a']);
    // The stale answer comes back last: it must not overwrite the fresh one.
    ils.waiting[1]!.resolve(answer('a', 'after renew'));
    expect((await after).dueDate).toBe('after renew');
    ils.waiting[0]!.resolve(answer('a', 'before renew'));
    expect((await before).dueDate).toBe('before renew');
    expect((await cache.get('a', ils.lookup)).dueDate).toBe('after renew');
    expect(ils.calls).toHaveLength(2);
  });

  it('after a write of unknown outcome, passes answers on but keeps none for one TTL', async () => {
    const time = clock();
    const cache = new ItemInfoCache({ ttlMs: 15_000, maxEntries: 10, now: time.now });
    let calls = 0;
    const lookup = async (item: string) => answer(item, `v${++calls}`);
    await cache.get('a', lookup);
    cache.invalidate('a', { outcomeUnknown: true });
    expect((await cache.get('a', lookup)).dueDate).toBe('v2');
    expect((await cache.get('a', lookup)).dueDate).toBe('v3');
    time.advance(15_000);
    expect((await cache.get('a', lookup)).dueDate).toBe('v4');
    expect((await cache.get('a', lookup)).dueDate).toBe('v4');
  });

  it('holds at most maxEntries, dropping the least recently used', async () => {
    const cache = new ItemInfoCache({ ttlMs: 15_000, maxEntries: 2 });
    const calls: string[] = [];
    const lookup = async (item: string) => {
      calls.push(item);
      return answer(item);
    };
    await cache.get('a', lookup);
    await cache.get('b', lookup);
    await cache.get('a', lookup); // a is now the most recently used
    await cache.get('c', lookup); // pushes b out
    await cache.get('a', lookup);
    await cache.get('b', lookup);
    expect(calls).toEqual(['a', 'b', 'c', 'b']);
    expect(cache.stats().entries).toBe(2);
  });

  it('refuses bounds that make no sense', () => {
    expect(() => new ItemInfoCache({ ttlMs: 1000, maxEntries: 0 })).toThrow(RangeError);
    expect(() => new ItemInfoCache({ ttlMs: 0, maxEntries: 1 })).toThrow(RangeError);
  });
});

describe('itemLookup', () => {
  const requests = new Sip2Messages({ institutionId: 'X' });

  it('sends one 17 per lookup without a cache, and one per item with one', async () => {
    const sent: string[] = [];
    const send = async (message: ItemInformation) => {
      sent.push(message.itemIdentifier);
      return answer(message.itemIdentifier);
    };
    const direct = itemLookup(send, requests, null);
    await direct('a');
    await direct('a');
    expect(sent).toEqual(['a', 'a']);
    const cached = itemLookup(send, requests, new ItemInfoCache({ ttlMs: 15_000, maxEntries: 10 }));
    await cached('b');
    await cached('b');
    expect(sent).toEqual(['a', 'a', 'b']);
  });

  it('sends one 17 for concurrent lookups of one item through the cache: the shared reads beneath join them', async () => {
    const reads = new SharedReads();
    const raw = manualSend();
    const cache = new ItemInfoCache({ ttlMs: 15_000, maxEntries: 10 });
    const lookup = itemLookup((message, options) => reads.send(message, options ?? {}, raw.send), requests, cache);
    const both = Promise.all([lookup('a'), lookup('a')]);
    expect(raw.sent).toEqual(['a']);
    raw.answerAll();
    expect((await both).map((response) => response.itemIdentifier)).toEqual(['a', 'a']);
  });

  it("never lets a patron's lookup join DAIA's lookup of the same item in flight, even through the one cache", async () => {
    const reads = new SharedReads();
    const raw = manualSend();
    const cache = new ItemInfoCache({ ttlMs: 15_000, maxEntries: 10 });
    const daia = itemLookup(
      (message, options) => reads.send(message, options ?? {}, raw.send, 'daia'),
      requests,
      cache,
    );
    const paia = itemLookup(
      (message, options) => reads.send(message, options ?? {}, raw.send, 'paia'),
      requests,
      cache,
    );
    const fromDaia = daia('a');
    const fromPaia = paia('a');
    expect(raw.sent).toEqual(['a', 'a']);
    raw.answerAll();
    expect((await fromDaia).itemIdentifier).toBe('a');
    expect((await fromPaia).itemIdentifier).toBe('a');
  });

  it('turns a message that cannot be built into a rejection, not a synchronous throw', async () => {
    const throwing = {
      itemInformation: () => {
        throw new Error('cannot encode');
      },
    };
    const lookup = itemLookup(async () => answer('x'), throwing, null);
    let result: Promise<unknown> | undefined;
    expect(() => (result = lookup('x'))).not.toThrow();
    await expect(result).rejects.toThrow('cannot encode');
  });
});
