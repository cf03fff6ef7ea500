/**
 * The account window (cache.accounts) end to end: real gateway processes with
 * the window on in front of one real simulator process. What reaches the ILS
 * is read from the simulator's counters; the circulation desk is its control
 * endpoint (POST /desk/holds), which changes the library behind every SIP2
 * client's back. The item cache is off here, so every message a read saves is
 * the window's doing. Across instances: test/integration/shared-state.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { type Client, item, useFixture } from '../conformance/support.js';

type Doc = { item?: string; duedate?: string; status?: number; error?: string };

/** A window no test outlives, and one a test can wait out. */
const LONG_WINDOW_MS = '300000';
const SHORT_WINDOW_MS = 1000;

const WINDOW_ON = { PAIA_CACHE_ACCOUNTS_ENABLED: 'true', PAIA_CACHE_ITEMS_ENABLED: 'false' };

describe('account window', () => {
  const fx = useFixture('generic', { ...WINDOW_ON, PAIA_CACHE_ACCOUNTS_WINDOW_MS: LONG_WINDOW_MS }, [
    { ...WINDOW_ON, PAIA_CACHE_ACCOUNTS_WINDOW_MS: String(SHORT_WINDOW_MS) },
  ]);
  /** Every message the simulator has received so far, by code. */
  const received = async () => (await fx().sim.counters()).received;
  const total = (counts: Record<string, number>) => Object.values(counts).reduce((sum, n) => sum + n, 0);

  /** core, items and fees of `patron` with `token`: what a discovery system reads on an account page. */
  async function accountPage(client: Client, patron: string, token: string) {
    const replies = await Promise.all(
      [`/core/${patron}`, `/core/${patron}/items`, `/core/${patron}/fees`].map((path) => client.get(path, { token })),
    );
    for (const reply of replies) expect(reply.status, `${reply.request}: ${reply.text}`).toBe(200);
    return replies.map((reply) => reply.body);
  }

  async function itemsOf(client: Client, patron: string, token: string): Promise<Doc[]> {
    const reply = await client.get(`/core/${patron}/items`, { token });
    expect(reply.status, reply.text).toBe(200);
    return reply.body.doc as Doc[];
  }

  it("two tokens of one patron share one account read: the second token's core, items and fees reach no ILS", async () => {
    const { client } = fx();
    const [first, second] = [await client.login('alice'), await client.login('alice')];
    expect(second.token).not.toBe(first.token);
    const before = total(await received());
    const read = await accountPage(client, 'alice', first.token);
    const oneRead = total(await received()) - before;
    // 63s for the patron, the lists and the fines, and a 17 per document.
    expect(oneRead).toBeGreaterThan((read[1]!.doc as Doc[]).length);
    const shared = await accountPage(client, 'alice', second.token);
    expect(total(await received()) - before).toBe(oneRead);
    expect(shared).toEqual(read);
  });

  it('two patrons never share: each patron’s reads reach the ILS and answer with that patron’s account', async () => {
    const { client } = fx();
    const alice = await client.login('alice');
    const emile = await client.login('emile');
    await accountPage(client, 'alice', alice.token); // alice's reads are in the window
    const before = await received();
    const [aliceItems, emileItems] = await Promise.all([
      itemsOf(client, 'alice', alice.token),
      itemsOf(client, 'emile', emile.token),
    ]);
    const after = await received();
    // emile's items: one 63 per list read and a 17 per document; alice's: nothing.
    expect((after['63'] ?? 0) - (before['63'] ?? 0)).toBeGreaterThanOrEqual(1);
    expect((after['17'] ?? 0) - (before['17'] ?? 0)).toBe(emileItems.length);
    expect(emileItems.map((doc) => doc.item)).toContain(item('em-0001'));
    expect(aliceItems.map((doc) => doc.item)).not.toContain(item('em-0001'));
  });

  it("a write's answer never comes from the window, and the patron's next read shows the write", async () => {
    const { client } = fx();
    const emile = await client.login('emile');
    const target = item('em-0002');
    const old = (await itemsOf(client, 'emile', emile.token)).find((doc) => doc.item === target);
    expect(old?.duedate).toBeTruthy();
    const renewsBefore = (await received())['29'] ?? 0;
    const renew = await client.post('/core/emile/renew', { doc: [{ item: target }] }, { token: emile.token });
    expect(renew.status, renew.text).toBe(200);
    const renewed = (renew.body.doc as Doc[])[0]!;
    expect(renewed.error).toBeUndefined();
    expect((await received())['29'] ?? 0).toBe(renewsBefore + 1);
    expect(renewed.duedate).not.toBe(old?.duedate);
    // At once, without waiting out the window: the renew dropped emile's reads.
    const before = total(await received());
    const after = (await itemsOf(client, 'emile', emile.token)).find((doc) => doc.item === target);
    expect(total(await received())).toBeGreaterThan(before);
    expect(after?.duedate).toBe(renewed.duedate);
  });

  it('a hold placed at the circulation desk shows once the window has passed, and not before', async () => {
    const { client: long, sim } = fx();
    const short = fx().extras[0]!.client;
    const target = item('it-0031');
    const [onLong, onShort] = [await long.login('frank'), await short.login('frank')];
    const held = (docs: Doc[]) => docs.some((doc) => doc.item === target);
    expect(held(await itemsOf(long, 'frank', onLong.token))).toBe(false);
    expect(held(await itemsOf(short, 'frank', onShort.token))).toBe(false);

    await sim.deskHold('frank', { item: 'it-0031' });
    const placed = performance.now();
    // The gateway whose window has not passed still answers with the account as it was.
    expect(held(await itemsOf(long, 'frank', onLong.token))).toBe(false);
    // The other one shows it once its window has passed: at the latest one window after the desk's change.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, SHORT_WINDOW_MS - (performance.now() - placed))));
    expect(held(await itemsOf(short, 'frank', onShort.token))).toBe(true);
  });
});
