import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { localDateOf } from '../../src/backend/account-state.js';
import { Sip2Backend } from '../../src/backend/sip2-backend.js';
import type { PaiaDocument } from '../../src/backend/types.js';
import { BUILTIN_DIALECTS, type DialectName, loadDialect } from '../../src/sip2/dialect.js';
import { Sip2Pool } from '../../src/sip2/index.js';
import { Sip2Messages } from '../../src/sip2/messages.js';
import { testPoolOptions } from '../helpers/pool.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

const BASE = 'https://lib.example.org';
const URIS = {
  item: `${BASE}/item/{barcode}`,
  edition: `${BASE}/title/{title}`,
  storage: `${BASE}/location/{location}`,
  patronType: `${BASE}/patron-type/{class}`,
};
const item = (barcode: string) => `${BASE}/item/${barcode}`;
const title = (id: string) => `${BASE}/title/${id}`;
const RESPONSE_TIMEOUT_MS = 800;
const POOL_SIZE = 4;

function today(): string {
  return localDateOf(new Date());
}

function byItem(docs: PaiaDocument[]): Map<string, PaiaDocument> {
  return new Map(docs.map((doc) => [doc.item ?? doc.edition ?? '', doc]));
}

// biome-ignore format: the layout of the list of dialects it replaced (a smaller diff)
describe.each(BUILTIN_DIALECTS)(
  'Sip2Backend against the simulator (%s)',
  (dialectName: DialectName) => {
    const dialect = loadDialect(dialectName);
    const utf8 = dialect.charset === 'utf-8';
    let sim: SimulatorProcess;
    let pool: Sip2Pool;
    let backend: Sip2Backend;

    beforeAll(async () => {
      sim = await startSimulatorProcess({ dialect: dialectName });
      // Every connection open before a test starts: a fault then hits the message under test, never a login.
      pool = new Sip2Pool(
        testPoolOptions(sim.port, dialectName, {
          responseTimeoutMs: RESPONSE_TIMEOUT_MS,
          min: POOL_SIZE,
          max: POOL_SIZE,
          acquireTimeoutMs: 5000,
          maxWaiting: 500,
        }),
      );
      await pool.start();
      backend = new Sip2Backend({
        send: (message) => pool.send(message),
        messages: new Sip2Messages({ institutionId: 'DEMO' }),
        dialect,
        pageSize: dialect.pageSize,
        currency: 'EUR',
        uris: URIS,
        acsStatus: () => pool.acsStatus,
      });
    });

    afterAll(async () => {
      pool?.destroy();
      await sim?.stop();
    });

    afterEach(async () => {
      await sim.reset();
      // A hang or drop costs a connection; the next test starts with the full pool again.
      for (let i = 0; i < 100 && pool.stats().connections < POOL_SIZE; i++)
        await new Promise((resolve) => setTimeout(resolve, 20));
    });

    // ---------------------------------------------------------------- login

    it('login: alice gets in; a wrong password is refused naming the patron the ILS found (for her lockout), an unknown patron is refused bare', async () => {
      expect(await backend.login('alice', 'alice-pass')).toEqual({ ok: true, barcode: 'alice', state: 0 });
      expect(await backend.login('alice', 'not-her-password')).toEqual({ ok: false, patron: 'alice' });
      expect(await backend.login('nobody', 'alice-pass')).toEqual({ ok: false });
      expect(await backend.login('alice', '')).toEqual({ ok: false });
      expect(await backend.login('alice', 'a|b')).toEqual({ ok: false });
      expect(await backend.login('carol', 'carol-pass')).toEqual({ ok: true, barcode: 'carol', state: 3 });
    });

    // ---------------------------------------------------------------- patron

    it('patron alice: active, email, address, expiry, type, in one round trip', async () => {
      const alice = await backend.patron('alice');
      expect(alice).toMatchObject({
        name: 'Alice Example',
        email: 'alice@example.org',
        address: 'Hauptstraße 1, 12345 Demostadt',
        status: 0,
        type: [`${BASE}/patron-type/adult`],
      });
      if (dialect.expiry) {
        expect(alice?.expires).toMatch(/^\d{4}-\d{2}-\d{2}$/);
        expect(alice!.expires! > today()).toBe(true);
      } else {
        expect(alice?.expires).toBeUndefined();
      }
      expect((await sim.counters()).received).toEqual({ '63': 1 });
    });

    it('patron states: bob expired, carol fees, gina card lost, dave active; unknown patron null', async () => {
      const [bob, carol, gina, dave, nobody] = await Promise.all(
        ['bob', 'carol', 'gina', 'dave', 'nobody'].map((p) => backend.patron(p)),
      );
      // folio sends no expiry date: an expired account shows only through its flags.
      expect(bob?.status).toBe(dialect.expiry ? 2 : 1);
      if (dialect.expiry) expect(bob!.expires! < today()).toBe(true);
      expect(carol?.status).toBe(3);
      expect(gina?.status).toBe(1);
      expect(dave?.status).toBe(0);
      expect(nobody).toBeNull();
    });

    it('patron emile: the non-ASCII name arrives exactly', async () => {
      // cp850 carries É, ë, Å and ö, so generic gets the full name too.
      expect((await backend.patron('emile'))?.name).toBe('Émile Zoë Ångström');
    });

    // ---------------------------------------------------------------- items

    it('items alice: three loans, one hold ready for pickup, one pending hold in the queue', async () => {
      const docs = await backend.items('alice');
      expect(docs).toHaveLength(5);
      const held = docs.filter((doc) => doc.status === 3);
      expect(held.map((doc) => doc.item).sort()).toEqual([item('it-0001'), item('it-0002'), item('it-0003')]);
      for (const doc of held) {
        expect(doc.duedate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
        expect(doc.endtime).toBe(doc.duedate);
      }
      const docsByItem = byItem(docs);
      const overdue = docsByItem.get(item('it-0001'))!;
      expect(overdue.duedate! < today()).toBe(true);
      expect(overdue).toMatchObject({
        about: 'Der Zauberberg',
        label: 'GE 4711 M363 Z3',
        storage: 'MAIN',
        storageid: `${BASE}/location/MAIN`,
      });
      // The simulator's 98 says renew Y (BX position 15) and alice's renewals are not denied.
      expect(overdue.canrenew).toBe(true);
      expect(docsByItem.get(item('it-0002'))!.duedate! > today()).toBe(true);

      const ready = docsByItem.get(item('it-0010'))!;
      expect(ready).toMatchObject({ status: 4, about: 'Der Steppenwolf', cancancel: true, storage: 'MAIN' });
      expect(ready.duedate! >= today()).toBe(true); // pick up by

      const pending = docsByItem.get(item('it-0020'))!;
      expect(pending).toMatchObject({ status: 1, queue: 2, about: 'Buddenbrooks', cancancel: true });
      expect(pending.duedate).toBeUndefined();

      // The counts are trusted (every shipped dialect): the charged list, then hold and unavailable holds
      // (count 1 each), overdue (count 1) only where the dialect does not say overdue items are charged
      // ones, never recall (0); one 17 per document, nothing else.
      expect(dialect.listCounts).toBe('reliable');
      const { received } = await sim.counters();
      expect(received['17']).toBe(5);
      expect(received['63']).toBe(dialect.chargedIncludes.includes('overdue') ? 3 : 4);
    });

    it('items dave: 120 loans, paged in this dialect, one 17 each', async () => {
      const docs = await backend.items('dave');
      expect(docs).toHaveLength(120);
      expect(new Set(docs.map((doc) => doc.item)).size).toBe(120);
      expect(docs.every((doc) => doc.status === 3 && /^\d{4}-\d{2}-\d{2}$/.test(doc.duedate ?? ''))).toBe(true);
      expect(docs.map((doc) => doc.item)).toContain(item('dv-0120'));
      const { received } = await sim.counters();
      const perPage = Math.min(dialect.pageSize, dialect.listLimit);
      expect(received['17']).toBe(120);
      // The charged pages; the overdue list (5) only where overdue items are not known to be charged ones.
      expect(received['63']).toBe(Math.ceil(120 / perPage) + (dialect.chargedIncludes.includes('overdue') ? 0 : 1));
    });

    it('items emile: non-ASCII titles, and a title-level hold as an edition', async () => {
      const docs = byItem(await backend.items('emile'));
      expect(docs.get(item('em-0002'))?.about).toBe('Harry Potter y el cáliz de fuego');
      if (utf8) {
        expect(docs.get(item('em-0001'))?.about).toBe('Der Zauberberg – Roman');
        expect(docs.get(item('em-0003'))?.about).toBe('ノルウェイの森');
      } else {
        // cp850 has no en dash and no Japanese: the ILS sends '?' for them.
        expect(docs.get(item('em-0003'))?.about).toBe('???????');
      }
      expect(docs.get(title('t-vorleser'))).toEqual({ status: 1, edition: title('t-vorleser'), cancancel: true });
    });

    it('items of a patron whose renewals are denied say canrenew false', async () => {
      const [loan] = await backend.items('bob');
      expect(loan).toMatchObject({ status: 3, item: item('it-0060'), canrenew: false });
    });

    // ---------------------------------------------------------------- renew

    it('renew it-0002: a later due date, which items then shows', async () => {
      const before = byItem(await backend.items('alice')).get(item('it-0002'))!.duedate!;
      const [doc] = await backend.renew('alice', [{ item: item('it-0002') }]);
      expect(doc).toMatchObject({ status: 3, item: item('it-0002'), requested: item('it-0002'), about: 'Effi Briest' });
      expect(doc!.error).toBeUndefined();
      expect(doc!.duedate! > before).toBe(true);
      expect(doc!.endtime).toBe(doc!.duedate);
      expect(byItem(await backend.items('alice')).get(item('it-0002'))!.duedate).toBe(doc!.duedate);
    });

    it('renew it-0003 at the renewal limit: an error on the document', async () => {
      const [doc] = await backend.renew('alice', [{ item: item('it-0003') }]);
      expect(doc).toMatchObject({ status: 3, item: item('it-0003') });
      expect(doc!.error).toMatch(/\S/);
      expect(doc!.endtime).toBeUndefined();
    });

    it('renew of unknown URIs: document errors, nothing sent to the ILS', async () => {
      const docs = await backend.renew('alice', [
        { item: 'https://elsewhere.example.org/item/it-0002' },
        { item: `${BASE}/item/it-0002/extra` },
        { edition: title('t-effi') },
      ]);
      expect(docs).toHaveLength(3);
      for (const doc of docs) {
        expect(doc.status).toBe(0);
        expect(doc.error).toMatch(/\S/);
      }
      expect(docs[0]).toMatchObject({
        item: 'https://elsewhere.example.org/item/it-0002',
        requested: 'https://elsewhere.example.org/item/it-0002',
      });
      const { received } = await sim.counters();
      expect(received['29']).toBeUndefined();
    });

    it('renew of one item named twice sends one 29', async () => {
      const docs = await backend.renew('alice', [{ item: item('it-0002') }, { item: item('it-0002') }]);
      expect(docs).toHaveLength(2);
      expect(docs[0]).toEqual(docs[1]);
      expect((await sim.counters()).executed['29']).toBe(1);
    });

    // ---------------------------------------------------------------- request and cancel

    it('request it-0030 to BRANCH: reserved, then in items; cancel: gone', async () => {
      const [placed] = await backend.request('alice', [
        { item: item('it-0030'), storageid: `${BASE}/location/BRANCH` },
      ]);
      expect(placed).toMatchObject({
        status: 1,
        item: item('it-0030'),
        storage: 'BRANCH',
        storageid: `${BASE}/location/BRANCH`,
      });
      expect(placed!.error).toBeUndefined();
      expect(placed!.queue).toBe(1);
      expect(byItem(await backend.items('alice')).get(item('it-0030'))).toMatchObject({
        status: 1,
        about: 'Faust. Eine Tragödie',
      });

      const [cancelled] = await backend.cancel('alice', [{ item: item('it-0030') }]);
      expect(cancelled).toEqual({ status: 0, item: item('it-0030'), requested: item('it-0030') });
      expect(byItem(await backend.items('alice')).has(item('it-0030'))).toBe(false);

      const [again] = await backend.cancel('alice', [{ item: item('it-0030') }]);
      expect(again!.status).toBe(1);
      expect(again!.error).toMatch(/\S/);
    });

    it('request of an edition: a title-level hold, listed as the edition; cancel by edition', async () => {
      const [placed] = await backend.request('alice', [{ edition: title('t-verwandlung'), storage: 'MAIN' }]);
      expect(placed).toMatchObject({ status: 1, edition: title('t-verwandlung'), storage: 'MAIN' });
      expect(placed!.item).toBeUndefined();
      expect(byItem(await backend.items('alice')).get(title('t-verwandlung'))).toMatchObject({ status: 1 });
      const [cancelled] = await backend.cancel('alice', [{ edition: title('t-verwandlung') }]);
      expect(cancelled).toMatchObject({ status: 0, edition: title('t-verwandlung') });
      expect(byItem(await backend.items('alice')).has(title('t-verwandlung'))).toBe(false);
    });

    it('request of a lost item (it-0050): rejected, with the reason', async () => {
      const [doc] = await backend.request('alice', [{ item: item('it-0050') }]);
      expect(doc).toMatchObject({ status: 5, item: item('it-0050'), requested: item('it-0050') });
      expect(doc!.error).toMatch(/\S/);
    });

    it('request of an unknown URI or pickup location: rejected without a 15', async () => {
      const docs = await backend.request('alice', [
        { item: 'urn:isbn:123' },
        { item: item('it-0031'), storageid: 'https://elsewhere.example.org/x' },
      ]);
      expect(docs.map((doc) => doc.status)).toEqual([5, 5]);
      expect(docs.every((doc) => typeof doc.error === 'string')).toBe(true);
      expect((await sim.counters()).received['15']).toBeUndefined();
    });

    // ---------------------------------------------------------------- fees

    it('fees alice: 3.50 EUR in two fees', async () => {
      const fees = await backend.fees('alice');
      expect(fees.amount).toBe('3.50 EUR');
      expect(fees.fee.map((fee) => fee.amount)).toEqual(['2.50 EUR', '1.00 EUR']);
      const [overdue, processing] = fees.fee;
      if (dialectName === 'generic' || dialectName === 'koha') {
        expect(overdue).toMatchObject({ item: item('it-0001'), feetype: 'overdue' });
        expect(processing).toMatchObject({ item: item('it-0002'), feetype: 'processing' });
        expect(overdue!.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
        expect(overdue!.date! < today()).toBe(true);
      }
      if (dialectName === 'folio') expect(overdue).toMatchObject({ feetype: 'overdue', about: 'Der Zauberberg' });
      if (dialectName === 'evergreen') expect(overdue).toMatchObject({ about: 'Der Zauberberg' });
      expect((await sim.counters()).received).toEqual({ '63': 1 });
    });

    it('fees carol: 12.00 EUR', async () => {
      const fees = await backend.fees('carol');
      expect(fees.amount).toBe('12.00 EUR');
      expect(fees.fee.map((fee) => fee.amount)).toEqual(['9.00 EUR', '3.00 EUR']);
    });

    it('fees of a patron without fines: 0.00 EUR and no fee', async () => {
      expect(await backend.fees('dave')).toEqual({ amount: '0.00 EUR', fee: [] });
    });

    // ---------------------------------------------------------------- logout

    it('logout sends 35 and never fails', async () => {
      await expect(backend.logout('alice')).resolves.toBeUndefined();
      expect((await sim.counters()).executed['35']).toBe(1);
      await sim.setFaults({ hang: 1 });
      await expect(backend.logout('alice')).resolves.toBeUndefined();
    });

    // ---------------------------------------------------------------- write safety

    it('write safety: a renew whose answer never comes is an unknown outcome, sent exactly once', async () => {
      await sim.setFaults({ hang: 1 });
      const docs = await backend.renew('alice', [{ item: item('it-0002') }, { item: item('it-0003') }]);
      expect(docs).toHaveLength(2);
      // The two 29s run in parallel: either may be the one that hangs.
      const unknown = docs.filter((doc) => /outcome unknown/.test(doc.error ?? ''));
      expect(unknown).toHaveLength(1);
      expect(unknown[0]!.error).toMatch(/check your items/);
      const other = docs.find((doc) => doc !== unknown[0])!;
      expect(other.duedate !== undefined || other.error !== undefined).toBe(true);
      const counters = await sim.counters();
      expect(counters.executed['29']).toBe(2);
      expect(counters.received['29']).toBe(2);
    });

    it('write safety: when the only renew hangs, the document says the outcome is unknown and the 29 ran once', async () => {
      await sim.setFaults({ hang: 1 });
      const docs = await backend.renew('alice', [{ item: item('it-0002') }]);
      expect(docs).toHaveLength(1);
      expect(docs[0]!.error).toMatch(/outcome unknown/);
      expect(docs[0]!.duedate).toBeUndefined();
      const counters = await sim.counters();
      expect(counters.executed['29']).toBe(1);
      expect(counters.received['29']).toBe(1);
    });

    it('write safety: a request whose answer is lost is not sent again', async () => {
      await sim.setFaults({ dropMidReply: 1 });
      const docs = await backend.request('alice', [{ item: item('it-0030') }, { item: item('it-0050') }]);
      const unknown = docs.filter((doc) => /outcome unknown/.test(doc.error ?? ''));
      expect(unknown).toHaveLength(1);
      expect((await sim.counters()).received['15']).toBe(2);
    });
  },
);
