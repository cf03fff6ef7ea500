/**
 * The item-information cache (cache.items) end to end: a real gateway process
 * with the cache on in front of a real simulator process. What reaches the ILS
 * is read from the simulator's counters ("17" = item information).
 */
import { describe, expect, it } from 'vitest';
import { item, useFixture } from '../conformance/support.js';

type Doc = { item?: string; duedate?: string; status?: number };

describe('item-information cache', () => {
  // The account window off: what these count is the item cache's doing (test/integration/account-window.test.ts).
  const windowOff = { PAIA_CACHE_ACCOUNTS_ENABLED: 'false' };
  const fx = useFixture(
    'generic',
    { ...windowOff, PAIA_CACHE_ITEMS_ENABLED: 'true', PAIA_CACHE_ITEMS_TTL_MS: '600000' },
    [{ ...windowOff, PAIA_CACHE_ITEMS_ENABLED: 'false' }],
  );
  const received17 = async () => (await fx().sim.counters()).received['17'] ?? 0;

  async function items(client = fx().client, patron = 'alice'): Promise<Doc[]> {
    const session = await client.login(patron);
    const reply = await client.get(`/core/${patron}/items`, { token: session.token });
    expect(reply.status, reply.text).toBe(200);
    return reply.body.doc as Doc[];
  }

  it('a repeated items call sends no item information again', async () => {
    const before = await received17();
    const first = await items();
    const afterFirst = await received17();
    expect(afterFirst - before).toBe(first.length);
    expect(first.length).toBeGreaterThan(2);
    const second = await items();
    expect(second).toEqual(first);
    expect(await received17()).toBe(afterFirst);
  });

  it('DAIA uses the answers items fetched, and items the ones DAIA fetched', async () => {
    await items(); // alice's items are cached now
    const before = await received17();
    const reply = await fx().client.get('/daia', {
      query: { id: `${item('it-0001')}|${item('it-0030')}`, format: 'json' },
    });
    expect(reply.status, reply.text).toBe(200);
    // it-0001 is alice's loan (cached); it-0030 is nobody's and was never asked about.
    expect((await received17()) - before).toBe(1);
    const again = await fx().client.get('/daia', { query: { id: item('it-0030'), format: 'json' } });
    expect(again.status).toBe(200);
    expect((await received17()) - before).toBe(1);
  });

  it('a renew drops the renewed item: the next items call asks for it alone and shows the new due date', async () => {
    const client = fx().client;
    const target = item('em-0001'); // emile's, renewable (no queue, no renewals yet)
    const loaded = await items(client, 'emile');
    const old = loaded.find((doc) => doc.item === target);
    expect(old?.status).toBe(3);
    const session = await client.login('emile');
    const renew = await client.post('/core/emile/renew', { doc: [{ item: target }] }, { token: session.token });
    expect(renew.status, renew.text).toBe(200);
    const renewed = (renew.body.doc as Doc[])[0]!;
    expect(renewed).not.toHaveProperty('error');
    expect(renewed.duedate).not.toBe(old?.duedate);
    const before = await received17();
    const after = await items(client, 'emile');
    expect((await received17()) - before).toBe(1);
    expect(after.find((doc) => doc.item === target)?.duedate).toBe(renewed.duedate);
  });

  it('with cache.items.enabled false every call asks the ILS', async () => {
    const uncached = fx().extras[0]!.client;
    const first = await items(uncached);
    const before = await received17();
    await items(uncached);
    expect((await received17()) - before).toBe(first.length);
  });
});
