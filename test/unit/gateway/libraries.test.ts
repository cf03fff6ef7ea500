import { describe, expect, it } from 'vitest';
import { delay } from '../../../src/cancel-signal.js';
import { loadConfig } from '../../../src/config/index.js';
import type { Components } from '../../../src/gateway/components.js';
import { allOrNone, libraryPlace } from '../../../src/gateway/libraries.js';
import { LibraryStores } from '../../../src/gateway/library-stores.js';
import { librarySegment } from '../../../src/http/libraries.js';
import type { Logger } from '../../../src/log.js';
import type { StateStore } from '../../../src/state/index.js';

/** Where a library of several lives: its URLs, its state directory, its Redis keys (issue 29). */
describe('a library of several', () => {
  const config = loadConfig({
    env: {
      PAIA_HTTP_BASE_PATH: '/paia',
      PAIA_HTTP_PUBLIC_URL: 'https://paia.example.org/paia',
      PAIA_STATE_DIR: '/var/lib/paia',
    },
  });

  it("has its base path, public URL, state directory and Redis key prefix below the gateway's", () => {
    const placed = libraryPlace(config, 'DE-830');
    expect(placed.http.basePath).toBe('/paia/DE-830');
    expect(placed.http.publicUrl).toBe('https://paia.example.org/paia/DE-830');
    expect(placed.state.dir).toBe('/var/lib/paia/DE-830');
    expect(placed.state.redis.keyPrefix).toBe('paia-sip2:DE-830/');
    expect(placed.sip2).toBe(config.sip2);
  });

  it('keeps a state directory that is off off, and ids that begin like another never share a key prefix', () => {
    const off = loadConfig({ env: { PAIA_STATE_DIR: 'off' } });
    expect(libraryPlace(off, 'A').state.dir).toBeNull();
    const a = libraryPlace(off, 'a').state.redis.keyPrefix;
    const ab = libraryPlace(off, 'a:fact').state.redis.keyPrefix;
    expect(ab.startsWith(a)).toBe(false);
  });

  it('is found by the first path segment below the base path, percent-decoded', () => {
    expect(librarySegment('http://h:1/paia/DE-830/core/x?y=1', '/paia/')).toBe('DE-830');
    expect(librarySegment('http://h:1/paia/DE-830', '/paia/')).toBe('DE-830');
    expect(librarySegment('http://h:1/paia/DE%3A830/core', '/paia/')).toBe('DE:830');
    expect(librarySegment('http://h:1/other/DE-830/core', '/paia/')).toBe('');
    expect(librarySegment('http://h:1/DE-830?x', '/')).toBe('DE-830');
    expect(librarySegment('http://h:1/paia/%E0%A4%A/core', '/paia/')).toBe('');
  });
});

describe('building the libraries (allOrNone)', () => {
  it('fails at the first failure, without waiting for the slowest, and drops every part built before or after', async () => {
    const dropped: string[] = [];
    let finishSlow: (value: string) => void = () => {};
    const slow = new Promise<string>((resolve) => (finishSlow = resolve));
    const outcome = allOrNone([Promise.resolve('fast'), Promise.reject(new Error('broken')), slow], (value) =>
      dropped.push(value),
    );
    await expect(outcome).rejects.toThrow('broken');
    expect(dropped).toEqual(['fast']);
    finishSlow('slow');
    await slow;
    await Promise.resolve();
    expect(dropped).toEqual(['fast', 'slow']);
  });

  it('gives every value in order when none fails', async () => {
    await expect(allOrNone([delay(5).then(() => 1), Promise.resolve(2)], () => {})).resolves.toEqual([1, 2]);
  });
});

/** A library's memory store across its parts (library-stores.ts): what a reload's replacement or re-adding relies on. */
describe('the store of a library (LibraryStores)', () => {
  /** Stores that record their opening and closing; a close may be held open by `closeGate`. */
  const fakeStores = () => {
    const events: string[] = [];
    let opened = 0;
    let closeGate: Promise<void> = Promise.resolve();
    const open = async () => {
      const n = ++opened;
      events.push(`open ${n}`);
      return {
        close: async () => {
          await closeGate;
          events.push(`close ${n}`);
        },
      } as unknown as StateStore;
    };
    return { events, open, hold: (gate: Promise<void>) => (closeGate = gate) };
  };
  const parts = (store: StateStore, events: string[], name: string) =>
    Promise.resolve({
      store,
      close: async () => {
        events.push(`close ${name}`);
      },
      destroy: () => events.push(`destroy ${name}`),
    } as unknown as Components);
  const log = {} as Logger;

  it("hands the running parts' store to the next parts of the same id, and closes it after the last of them", async () => {
    const { events, open } = fakeStores();
    const stores = new LibraryStores();
    const seen: StateStore[] = [];
    const build = (name: string) => (store: StateStore) => {
      seen.push(store);
      return parts(store, events, name);
    };
    const old = await stores.build('DE-1', open, build('old'));
    const replacement = await stores.build('DE-1', open, build('new'));
    const other = await stores.build('DE-2', open, build('other'));
    expect(seen[0]).toBe(seen[1]);
    expect(seen[2]).not.toBe(seen[0]);
    await old.close(0, log);
    expect(events).toEqual(['open 1', 'open 2', 'close old']);
    await replacement.close(0, log);
    replacement.destroy(); // after a close: gives nothing back twice
    await other.close(0, log);
    expect(events).toEqual([
      'open 1',
      'open 2',
      'close old',
      'close new',
      'close 1',
      'destroy new',
      'close other',
      'close 2',
    ]);
  });

  it('gives the store back when a build fails, and opens it again only once its close is done', async () => {
    const { events, open, hold } = fakeStores();
    const stores = new LibraryStores();
    let release: () => void = () => {};
    hold(new Promise<void>((resolve) => (release = resolve)));
    const failing = stores.build('DE-1', open, async () => {
      throw new Error('no login');
    });
    const rejected = expect(failing).rejects.toThrow('no login');
    await delay(5);
    const again = stores.build('DE-1', open, (store) => parts(store, events, 'again'));
    await delay(5);
    // The first store is still closing (its lock and state file not yet free): the second waits.
    expect(events).toEqual(['open 1']);
    release();
    await rejected;
    await again;
    expect(events).toEqual(['open 1', 'close 1', 'open 2']);
  });
});
