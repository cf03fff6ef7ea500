import { describe, expect, it } from 'vitest';
import { AccountWindow } from '../../../src/backend/account-window.js';
import type { Backend, FeeRecord, PaiaDocument, PatronRecord } from '../../../src/backend/types.js';

/**
 * A backend whose reads the test releases by hand (or at once), counting each
 * read per patron, and whose writes answer with the documents given.
 */
function countingBackend(options: { manual?: boolean } = {}) {
  const reads: string[] = [];
  const waiting: Array<() => void> = [];
  let version = 0;
  let writeAnswer: () => Promise<PaiaDocument[]> = async () => [{ status: 3, item: 'i1', duedate: '2026-12-24' }];
  const answer = <T>(what: string, value: () => T): Promise<T> => {
    reads.push(what);
    if (!options.manual) return Promise.resolve(value());
    return new Promise((resolve) => waiting.push(() => resolve(value())));
  };
  const backend: Backend = {
    login: async () => ({ ok: false }),
    lookupPatron: async () => null,
    logout: async () => {},
    patron: (barcode) =>
      answer(`patron:${barcode}`, (): PatronRecord => ({ name: `${barcode} v${version}`, status: 0 })),
    items: (barcode) =>
      answer(`items:${barcode}`, (): PaiaDocument[] => [{ status: 3, item: `${barcode}-v${version}` }]),
    fees: (barcode) => answer(`fees:${barcode}`, (): FeeRecord => ({ amount: `${version}.00 EUR`, fee: [] })),
    renew: () => writeAnswer(),
    request: () => writeAnswer(),
    cancel: () => writeAnswer(),
  };
  return {
    backend,
    reads,
    /** The ILS's state changes: reads from now on answer with the next version. */
    change: () => (version += 1),
    release: () => {
      for (const resolve of waiting.splice(0)) resolve();
    },
    writesAnswer: (next: () => Promise<PaiaDocument[]>) => {
      writeAnswer = next;
    },
  };
}

function clock() {
  let now = 1_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

function windowOver(backend: Backend, more: { now?: () => number; told?: Array<[string, boolean]> } = {}) {
  return new AccountWindow({
    backend,
    windowMs: 5_000,
    maxPatrons: 100,
    keyOf: (barcode) => `key(${barcode})`,
    now: more.now,
    onWrite: async (key, outcomeUnknown) => {
      more.told?.push([key, outcomeUnknown]);
    },
  });
}

describe('AccountWindow', () => {
  it("shares each of a patron's reads (core, items, fees) within the window: the ILS is read once per kind", async () => {
    const ils = countingBackend();
    const window = windowOver(ils.backend);
    for (let visit = 0; visit < 3; visit++) {
      await window.patron('alice');
      await window.items('alice');
      await window.fees('alice');
    }
    expect(ils.reads).toEqual(['patron:alice', 'items:alice', 'fees:alice']);
    expect(window.stats()).toEqual({ hits: 6, misses: 3, entries: 3 });
  });

  it('never shares between patrons', async () => {
    const ils = countingBackend();
    const window = windowOver(ils.backend);
    const alice = await window.items('alice');
    const bob = await window.items('bob');
    expect(ils.reads).toEqual(['items:alice', 'items:bob']);
    expect(alice[0]!.item).toBe('alice-v0');
    expect(bob[0]!.item).toBe('bob-v0');
  });

  it('reads again once the window has passed, counted from when the read was sent', async () => {
    const ils = countingBackend({ manual: true });
    const time = clock();
    const window = windowOver(ils.backend, { now: time.now });
    const first = window.items('alice');
    time.advance(1_000); // the ILS took a second to answer
    ils.release();
    await first;
    time.advance(3_999);
    await window.items('alice');
    expect(ils.reads).toHaveLength(1);
    time.advance(2);
    ils.change();
    const later = window.items('alice');
    ils.release();
    expect((await later)[0]!.item).toBe('alice-v1');
    expect(ils.reads).toHaveLength(2);
  });

  it("a write drops the patron's reads and tells the other instances by key; its own answer comes from the ILS", async () => {
    const ils = countingBackend();
    const told: Array<[string, boolean]> = [];
    const window = windowOver(ils.backend, { told });
    await window.items('alice');
    await window.patron('alice');
    await window.items('bob');
    ils.change();
    const renewed = await window.renew('alice', [{ item: 'i1' }]);
    expect(renewed).toEqual([{ status: 3, item: 'i1', duedate: '2026-12-24' }]);
    expect(told).toEqual([['key(alice)', false]]);
    expect((await window.items('alice'))[0]!.item).toBe('alice-v1');
    expect((await window.patron('alice'))?.name).toBe('alice v1');
    // Bob wrote nothing: his read stays shared.
    expect((await window.items('bob'))[0]!.item).toBe('bob-v0');
    expect(ils.reads).toEqual(['items:alice', 'patron:alice', 'items:bob', 'items:alice', 'patron:alice']);
  });

  it('request and cancel drop the reads too, and so does a write that failed as a whole', async () => {
    const ils = countingBackend();
    const window = windowOver(ils.backend);
    const writes: Array<() => Promise<unknown>> = [
      () => window.request('alice', [{ item: 'i1' }]),
      () => window.cancel('alice', [{ item: 'i1' }]),
      () => window.renew('alice', [{ item: 'i1' }]).catch(() => 'failed'),
    ];
    for (const [i, write] of writes.entries()) {
      if (i === 2) ils.writesAnswer(() => Promise.reject(new Error('ILS gone')));
      await window.fees('alice');
      expect(await write()).toBeDefined();
      await window.fees('alice');
    }
    expect(ils.reads.filter((read) => read === 'fees:alice')).toHaveLength(4);
  });

  it('a read on its way when a write settles reaches its caller but is not kept', async () => {
    const ils = countingBackend({ manual: true });
    const window = windowOver(ils.backend);
    const before = window.items('alice');
    await window.renew('alice', [{ item: 'i1' }]);
    ils.release();
    expect((await before)[0]!.item).toBe('alice-v0');
    ils.change();
    const after = window.items('alice');
    ils.release();
    expect((await after)[0]!.item).toBe('alice-v1');
    expect(ils.reads).toEqual(['items:alice', 'items:alice']);
  });

  it('a read begun while a write is under way is not kept, and the write answers only once the others have been told', async () => {
    const ils = countingBackend({ manual: true });
    const events: string[] = [];
    let tell: () => void = () => {};
    const window = new AccountWindow({
      backend: ils.backend,
      windowMs: 5_000,
      maxPatrons: 100,
      keyOf: (barcode) => barcode,
      onWrite: () => {
        events.push('telling the others');
        return new Promise<void>((resolve) => {
          tell = resolve;
        });
      },
    });
    let release: (docs: PaiaDocument[]) => void = () => {};
    ils.writesAnswer(() => new Promise((resolve) => (release = resolve)));
    const renew = window.renew('alice', [{ item: 'i1' }]).then((docs) => {
      events.push('answered');
      return docs;
    });
    const during = window.items('alice'); // sent while the renewal is at the ILS
    release([{ status: 3, item: 'i1', duedate: '2026-12-24' }]);
    ils.release();
    expect((await during)[0]!.item).toBe('alice-v0');
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual(['telling the others']);
    tell();
    await renew;
    expect(events).toEqual(['telling the others', 'answered']);
    ils.change();
    const after = window.items('alice');
    ils.release();
    expect((await after)[0]!.item).toBe('alice-v1');
  });

  it("after a write of unknown outcome, keeps none of the patron's reads for one window, and says so to the others", async () => {
    const ils = countingBackend();
    const time = clock();
    const told: Array<[string, boolean]> = [];
    const window = windowOver(ils.backend, { now: time.now, told });
    ils.writesAnswer(async () => [
      {
        status: 3,
        item: 'i1',
        error: 'outcome unknown: the library system did not confirm the renewal; check your items before trying again',
      },
    ]);
    await window.renew('alice', [{ item: 'i1' }]);
    expect(told).toEqual([['key(alice)', true]]);
    await window.items('alice');
    await window.items('alice');
    expect(ils.reads).toHaveLength(2);
    time.advance(5_000);
    await window.items('alice');
    await window.items('alice');
    expect(ils.reads).toHaveLength(3);
  });

  it('a refused renewal is no unknown outcome: the reads after it are shared again at once', async () => {
    const ils = countingBackend();
    const window = windowOver(ils.backend);
    ils.writesAnswer(async () => [{ status: 3, item: 'i1', error: 'Renewal limit reached' }]);
    await window.renew('alice', [{ item: 'i1' }]);
    await window.items('alice');
    await window.items('alice');
    expect(ils.reads).toEqual(['items:alice']);
  });

  it("forget() (another instance's write) drops the patron's reads without telling anyone again", async () => {
    const ils = countingBackend();
    const told: Array<[string, boolean]> = [];
    const window = windowOver(ils.backend, { told });
    await window.items('alice');
    window.forget('key(alice)');
    await window.items('alice');
    window.forget('key(bob)');
    await window.items('alice');
    expect(ils.reads).toEqual(['items:alice', 'items:alice']);
    expect(told).toEqual([]);
  });

  it('keeps no failure and no unknown patron: the next read asks again', async () => {
    let calls = 0;
    const ils = countingBackend();
    const window = windowOver({
      ...ils.backend,
      items: async () => {
        calls += 1;
        throw new Error('ILS gone');
      },
      patron: async () => {
        calls += 1;
        return null;
      },
    });
    await expect(window.items('alice')).rejects.toThrow('ILS gone');
    await expect(window.items('alice')).rejects.toThrow('ILS gone');
    expect(await window.patron('zed')).toBeNull();
    expect(await window.patron('zed')).toBeNull();
    expect(calls).toBe(4);
  });

  it('passes logins, lookups and logouts straight through: a credential check is never shared', async () => {
    let logins = 0;
    const ils = countingBackend();
    const window = windowOver({
      ...ils.backend,
      login: async () => {
        logins += 1;
        return { ok: true, barcode: 'alice', state: 0 };
      },
    });
    await window.login('alice', 'pw');
    await window.login('alice', 'pw');
    expect(logins).toBe(2);
  });

  it('holds at most maxPatrons reads of a kind, the least recently read going first', async () => {
    const ils = countingBackend();
    const window = new AccountWindow({ backend: ils.backend, windowMs: 60_000, maxPatrons: 2, keyOf: (b) => b });
    await window.items('a');
    await window.items('b');
    await window.items('a');
    await window.items('c'); // pushes b out
    await window.items('a');
    await window.items('b');
    expect(ils.reads).toEqual(['items:a', 'items:b', 'items:c', 'items:b']);
    expect(window.stats().entries).toBe(2);
  });
});
