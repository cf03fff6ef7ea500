/**
 * The 64 counts decide which lists an items call reads (dialect listCounts,
 * chargedIncludes), measured against the real simulator and its `counts`
 * profile knob; and identical reads of concurrent calls share one round trip
 * (SharedReads), counted with the simulator's GET /counters.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Sip2Backend } from '../../src/backend/sip2-backend.js';
import { type Dialect, loadDialect } from '../../src/sip2/dialect.js';
import { Sip2Pool } from '../../src/sip2/index.js';
import { Sip2Messages } from '../../src/sip2/messages.js';
import { useFixture } from '../conformance/support.js';
import { testPoolOptions } from '../helpers/pool.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

const URIS = {
  item: 'https://lib.example.org/item/{barcode}',
  edition: 'https://lib.example.org/title/{title}',
  storage: null,
  patronType: null,
};
const ITEM = (barcode: string) => `https://lib.example.org/item/${barcode}`;
/** alice: loans it-0001 (overdue), it-0002, it-0003; a hold ready (it-0010) and one pending (it-0020). */
const ALICE = ['it-0001', 'it-0002', 'it-0003', 'it-0010', 'it-0020'].map(ITEM);

describe.each(['generic', 'folio'] as const)('list counts against the simulator (%s)', (name) => {
  const shipped = loadDialect(name);
  const unreliable: Dialect = { ...shipped, listCounts: 'unreliable' };
  let sim: SimulatorProcess;
  let pool: Sip2Pool;
  const backendFor = (dialect: Dialect) =>
    new Sip2Backend({
      send: (message) => pool.send(message),
      messages: new Sip2Messages({ institutionId: 'DEMO' }),
      dialect,
      pageSize: dialect.pageSize,
      currency: 'EUR',
      uris: URIS,
    });
  const listsRead = async (dialect: Dialect, patron = 'alice') => {
    const before = (await sim.counters()).received['63'] ?? 0;
    const docs = await backendFor(dialect).items(patron);
    return { items: docs.map((doc) => doc.item), lists: ((await sim.counters()).received['63'] ?? 0) - before };
  };

  beforeAll(async () => {
    sim = await startSimulatorProcess({ dialect: name });
    pool = new Sip2Pool(testPoolOptions(sim.port, name, { min: 2, max: 2 }));
    await pool.start();
  });
  afterAll(async () => {
    pool?.destroy();
    await sim?.stop();
  });
  afterEach(async () => {
    await sim.setProfile('none');
  });

  it('the shipped dialect trusts the counts: it skips the empty lists and finds every entry', async () => {
    expect(shipped.listCounts).toBe('reliable');
    const read = await listsRead(shipped);
    expect(read.items).toEqual(ALICE);
    // charged, hold, unavailable holds, and overdue unless the dialect says overdue items are charged ones.
    expect(read.lists).toBe(shipped.chargedIncludes.includes('overdue') ? 3 : 4);
    const unknown = await listsRead(shipped, 'nobody');
    expect(unknown).toEqual({ items: [], lists: 1 });
  });

  it('a dialect marked unreliable still reads all five lists, with the same answer', async () => {
    expect(await listsRead(unreliable)).toEqual({ items: ALICE, lists: 5 });
  });

  it('an ILS writing 0000 counts over full lists (counts=zero): both dialects find every entry, the trusting one because the charged list contradicts its count', async () => {
    await sim.setProfile('counts=zero');
    expect(await listsRead(unreliable)).toEqual({ items: ALICE, lists: 5 });
    // The charged page lists three loans under a count of 0: the counts are not used for this call.
    expect(await listsRead(shipped)).toEqual({ items: ALICE, lists: 5 });
  });

  it('a blank count is unknown: that list is read, the others by their counts (counts=blank, counts=folio)', async () => {
    await sim.setProfile('counts=blank');
    // All blank: nothing is known, so every list is read (without its count the charged list is never complete).
    expect(await listsRead(shipped)).toEqual({ items: ALICE, lists: 5 });
    await sim.setProfile('counts=folio');
    const folio = await listsRead(shipped);
    expect(folio.items).toEqual(ALICE);
    expect(folio.lists).toBe(shipped.chargedIncludes.includes('overdue') ? 3 : 4);
  });
});

describe('identical reads of concurrent calls (gateway and simulator processes)', () => {
  // A second a message: the two calls below, sent together, meet on every message unless one of them reached the
  // gateway a whole second after the other; what is asserted is message counts, never a duration.
  // Neither the item cache nor the account window: these count what concurrent calls share in flight.
  const fx = useFixture(
    'generic',
    {
      PAIA_CACHE_ITEMS_ENABLED: 'false',
      PAIA_CACHE_ACCOUNTS_ENABLED: 'false',
      PAIA_AUTH_MAX_SESSIONS_PER_PATRON: '10',
    },
    [],
    { extraArgs: ['--latency-ms', '1000'] },
  );

  const sent = async (call: () => Promise<unknown>) => {
    const before = (await fx().sim.counters()).received;
    await call();
    const after = (await fx().sim.counters()).received;
    return Object.fromEntries(
      Object.entries(after)
        .map(([code, n]) => [code, n - (before[code] ?? 0)] as const)
        // Only what the calls sent: the pool may open another session (93, 99) meanwhile.
        .filter(([code, n]) => n > 0 && (code === '63' || code === '17')),
    );
  };

  it('two GET items of one patron at once cost one set of SIP2 messages, without the item cache', async () => {
    const { client } = fx();
    const alice = await client.login('alice');
    let first: unknown;
    const one = await sent(async () => {
      first = (await client.get('/core/alice/items', { token: alice.token })).json;
    });
    expect(one).toEqual({ '63': 4, '17': 5 });
    let answers: unknown[] = [];
    const two = await sent(async () => {
      const replies = await Promise.all([
        client.get('/core/alice/items', { token: alice.token }),
        client.get('/core/alice/items', { token: alice.token }),
      ]);
      answers = replies.map((reply) => reply.json);
    });
    expect(two).toEqual(one);
    expect(answers).toEqual([first, first]);
  }, 60_000);

  it('two patrons at once each cost their own messages; two logins at once each reach the ILS', async () => {
    const { client } = fx();
    const [alice, hanna] = await Promise.all([
      client.login('alice'),
      client.login('hanna', { password: 'hanna-pass' }),
    ]);
    const both = await sent(() =>
      Promise.all([
        client.get('/core/alice/items', { token: alice.token }),
        client.get('/core/hanna/items', { token: hanna.token }),
      ]),
    );
    // alice: charged, overdue, hold, unavailable holds and five items; hanna: charged and her two loans.
    expect(both).toEqual({ '63': 5, '17': 7 });
    const logins = await sent(() => Promise.all([client.login('alice'), client.login('alice')]));
    expect(logins['63']).toBe(2);
  }, 60_000);
});
