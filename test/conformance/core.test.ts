/**
 * Conformance: the six core methods (patron, items, renew, request, cancel,
 * fees) against the spec's field tables and rules, and document errors,
 * with the demo library of the simulator behind the real gateway.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { docListProblems, duplicateDocuments, feeRecordProblems, patronProblems } from './shapes.js';
import { DIALECTS, edition, expectOk, item, type Session, today, useFixture } from './support.js';

type Doc = Record<string, unknown>;

function docsOf(body: Record<string, unknown>): Doc[] {
  return (body.doc ?? []) as Doc[];
}

function byItem(docs: Doc[]): Map<string, Doc> {
  return new Map(docs.filter((doc) => typeof doc.item === 'string').map((doc) => [doc.item as string, doc]));
}

/** "12.50 EUR" -> 1250n */
function cents(money: string): bigint {
  const [amount] = money.split(' ');
  const [whole, fraction] = (amount ?? '0.00').replace('-', '').split('.');
  const value = BigInt(whole ?? '0') * 100n + BigInt(fraction ?? '0');
  return money.startsWith('-') ? -value : value;
}

describe.each(DIALECTS)('core methods (%s)', (dialect) => {
  const fx = useFixture(dialect);
  let alice: Session;
  let dave: Session;
  let emile: Session;
  let changed = false;

  beforeAll(async () => {
    const { client } = fx();
    alice = await client.login('alice');
    dave = await client.login('dave');
    emile = await client.login('emile');
  });

  /** Tests that change the library set `changed`; the library goes back to the demo data after them. */
  afterEach(async () => {
    if (changed) await fx().sim.reset();
    changed = false;
  });

  async function items(session: Session = alice): Promise<Doc[]> {
    const body = expectOk(await fx().client.get(`/core/${session.patron}/items`, { token: session.token }));
    expect(docListProblems(body, 0)).toEqual([]);
    return docsOf(body);
  }

  async function write(method: 'renew' | 'request' | 'cancel', doc: Doc[], session: Session = alice): Promise<Doc[]> {
    const reply = await fx().client.post(`/core/${session.patron}/${method}`, { doc }, { token: session.token });
    const body = expectOk(reply);
    expect(docListProblems(body, 1), reply.text).toEqual([]);
    return docsOf(body);
  }

  // ------------------------------------------------------------ patron

  it('patron: GET {core_url}/{patron_id} answers a Patron record (name 1..1 string, email 0..1 email, expires 0..1 date, status 0..1 account state)', async () => {
    const body = expectOk(await fx().client.get('/core/alice', { token: alice.token }));
    expect(patronProblems(body)).toEqual([]);
    expect(body).toMatchObject({ name: 'Alice Example', email: 'alice@example.org', status: 0 });
    expect((body.expires as string) > today()).toBe(true);
  });

  it('patron: an expired account (bob) is in account state "inactive because account expired" (2), expires before today', async () => {
    const bob = await fx().client.login('bob');
    const body = expectOk(await fx().client.get('/core/bob', { token: bob.token }));
    expect(patronProblems(body)).toEqual([]);
    expect(body.status).toBe(2);
    expect((body.expires as string) < today()).toBe(true);
  });

  it('patron: an account with outstanding fees over the limit (carol) is in account state "inactive because of outstanding fees" (3)', async () => {
    const carol = await fx().client.login('carol');
    const body = expectOk(await fx().client.get('/core/carol', { token: carol.token }));
    expect(patronProblems(body)).toEqual([]);
    expect(body.status).toBe(3);
  });

  it('patron: name is a Unicode string, kept exactly (Émile Zoë Ångström)', async () => {
    const body = expectOk(await fx().client.get('/core/emile', { token: emile.token }));
    expect(body.name).toBe('Émile Zoë Ångström');
  });

  // ------------------------------------------------------------ items

  it('items: "doc: 0..n documents"; "each document MUST have an item URI or an edition URI (or both)"', async () => {
    for (const session of [alice, emile]) {
      const docs = await items(session);
      expect(docs.length).toBeGreaterThan(0);
      for (const doc of docs) expect(doc.item ?? doc.edition, JSON.stringify(doc)).toBeDefined();
    }
  });

  it("items: alice's loans are held (3), the hold on the shelf provided (4), the pending hold reserved (1) with queue 2", async () => {
    const docs = byItem(await items());
    expect([...docs.keys()].sort()).toEqual(['it-0001', 'it-0002', 'it-0003', 'it-0010', 'it-0020'].map(item));
    for (const barcode of ['it-0001', 'it-0002', 'it-0003']) expect(docs.get(item(barcode))?.status, barcode).toBe(3);
    expect(docs.get(item('it-0010'))?.status).toBe(4);
    expect(docs.get(item('it-0020'))).toMatchObject({ status: 1, queue: 2 });
    expect(docs.get(item('it-0001'))).toMatchObject({ about: 'Der Zauberberg', label: 'GE 4711 M363 Z3' });
  });

  it('items: loans carry duedate (the expiry of the held status) and endtime; the overdue loan it-0001 is due before today', async () => {
    const docs = byItem(await items());
    const overdue = docs.get(item('it-0001'))!;
    const current = docs.get(item('it-0002'))!;
    expect((overdue.duedate as string) < today(), JSON.stringify(overdue)).toBe(true);
    expect((current.duedate as string) > today(), JSON.stringify(current)).toBe(true);
    for (const doc of [overdue, current]) expect(String(doc.endtime).slice(0, 10)).toBe(doc.duedate);
  });

  it('items: all 120 loans of dave are returned, each once, as held documents', async () => {
    const docs = await items(dave);
    expect(docs.length).toBe(120);
    const expected = Array.from({ length: 120 }, (_, i) => item(`dv-${String(i + 1).padStart(4, '0')}`));
    expect(docs.map((doc) => doc.item).sort()).toEqual(expected.sort());
    expect(docs.every((doc) => doc.status === 3)).toBe(true);
  });

  it('"Together item and edition MUST uniquely identify a document within the set of documents related to one patron"', async () => {
    for (const session of [alice, dave, emile]) {
      expect(duplicateDocuments(await items(session)), session.patron).toEqual([]);
    }
  });

  // ------------------------------------------------------------ renew

  it('renew: a renewed loan comes back with item, status 3 and a later duedate and endtime; items shows the new due date', async () => {
    const before = byItem(await items()).get(item('it-0002'))!;
    const renewsBefore = await fx().executed('29');
    changed = true;
    const [doc, ...rest] = await write('renew', [{ item: item('it-0002') }]);
    expect(rest).toEqual([]);
    expect(doc).toMatchObject({ item: item('it-0002'), status: 3 });
    expect(doc).not.toHaveProperty('error');
    expect(
      (doc!.duedate as string) > (before.duedate as string),
      `${String(doc!.duedate)} after ${String(before.duedate)}`,
    ).toBe(true);
    expect(String(doc!.endtime).slice(0, 10)).toBe(doc!.duedate);
    expect(await fx().executed('29')).toBe(renewsBefore + 1);
    expect(byItem(await items()).get(item('it-0002'))?.duedate).toBe(doc!.duedate);
  });

  it('renew: "the response SHOULD include the same documents as requested" (one answer per requested document)', async () => {
    changed = true;
    const requested = [item('it-0002'), item('it-0003'), item('no-such-item'), 'https://elsewhere.example/item/1'];
    const docs = await write(
      'renew',
      requested.map((uri) => ({ item: uri })),
    );
    expect(docs.length).toBe(requested.length);
    for (const uri of requested) {
      expect(
        docs.some((doc) => doc.requested === uri || doc.item === uri),
        uri,
      ).toBe(true);
    }
  });

  it('renew: "A failed document in renew is not a request error: the response is 200 and the affected document carries the error field" (it-0003 at the renewal limit)', async () => {
    const before = byItem(await items()).get(item('it-0003'))!;
    const [doc] = await write('renew', [{ item: item('it-0003') }]);
    expect(doc).toMatchObject({ item: item('it-0003'), status: 3 });
    expect(typeof doc!.error).toBe('string');
    expect((doc!.error as string).length).toBeGreaterThan(0);
    expect(byItem(await items()).get(item('it-0003'))?.duedate).toBe(before.duedate);
  });

  it('Document errors: "unknown document URIs ... are reported in the doc.error field" with status 200, never 404, in renew, request and cancel', async () => {
    const unknown = [item('no-such-item'), 'https://elsewhere.example/item/1', 'urn:isbn:9783161484100'];
    for (const method of ['renew', 'request', 'cancel'] as const) {
      const docs = await write(
        method,
        unknown.map((uri) => ({ item: uri })),
      );
      expect(docs.length, method).toBe(unknown.length);
      for (const doc of docs) expect(typeof doc.error, `${method}: ${JSON.stringify(doc)}`).toBe('string');
    }
    const editions = await write('request', [
      { edition: edition('no-such-title') },
      { edition: 'https://elsewhere.example/title/1' },
    ]);
    for (const doc of editions) expect(typeof doc.error, JSON.stringify(doc)).toBe('string');
  });

  it("Document errors: URIs that are not this library's are answered without sending anything to the library system", async () => {
    const before = { renew: await fx().executed('29'), hold: await fx().executed('15') };
    for (const method of ['renew', 'request', 'cancel'] as const) {
      await write(method, [{ item: 'https://elsewhere.example/item/it-0002' }, { edition: 'urn:isbn:9783161484100' }]);
    }
    expect({ renew: await fx().executed('29'), hold: await fx().executed('15') }).toEqual(before);
  });

  // ------------------------------------------------------------ request

  it('request: requesting an available item (it-0030) answers it without error, and it then appears in items', async () => {
    const holdsBefore = await fx().executed('15');
    changed = true;
    const [doc] = await write('request', [{ item: item('it-0030') }]);
    expect(doc).toMatchObject({ item: item('it-0030') });
    expect(doc).not.toHaveProperty('error');
    expect([1, 2, 4]).toContain(doc!.status);
    expect(await fx().executed('15')).toBe(holdsBefore + 1);
    const listed = byItem(await items()).get(item('it-0030'));
    expect(listed, 'it-0030 in items').toBeDefined();
    expect([1, 2, 4]).toContain(listed!.status);
  });

  it('request: an edition (title-level) request is answered without error and items lists it with its edition URI', async () => {
    changed = true;
    const [doc] = await write('request', [{ edition: edition('t-verwandlung') }]);
    expect(doc).toMatchObject({ edition: edition('t-verwandlung') });
    expect(doc).not.toHaveProperty('error');
    expect([1, 2, 4]).toContain(doc!.status);
    const listed = (await items()).filter((d) => d.edition === edition('t-verwandlung'));
    expect(listed.length, 'the title request in items').toBe(1);
    expect([1, 2, 4]).toContain(listed[0]!.status);
  });

  it('request: the pickup location may be given as doc.storageid (URI) and is answered as storage/storageid', async () => {
    changed = true;
    const [doc] = await write('request', [
      { item: item('it-0031'), storageid: 'https://lib.example.org/location/BRANCH' },
    ]);
    expect(doc).not.toHaveProperty('error');
    expect(doc).toMatchObject({
      item: item('it-0031'),
      storage: 'BRANCH',
      storageid: 'https://lib.example.org/location/BRANCH',
    });
  });

  it('request: a refused request is a document error with the rejected shape: status 5, item, requested and an error message (lost it-0050)', async () => {
    const [doc] = await write('request', [{ item: item('it-0050') }]);
    expect(doc).toMatchObject({ status: 5, item: item('it-0050'), requested: item('it-0050') });
    expect(typeof doc!.error).toBe('string');
    expect(byItem(await items()).has(item('it-0050'))).toBe(false);
  });

  // ------------------------------------------------------------ cancel

  it('cancel: cancelling the pending request on it-0020 answers it without error, and it leaves items', async () => {
    changed = true;
    const [doc] = await write('cancel', [{ item: item('it-0020') }]);
    expect(doc).toMatchObject({ item: item('it-0020'), status: 0 });
    expect(doc).not.toHaveProperty('error');
    expect(byItem(await items()).has(item('it-0020'))).toBe(false);
  });

  it('cancel: a cancel the library refuses (it-0002 is a loan, not a request) is a document error, status 200', async () => {
    const [doc] = await write('cancel', [{ item: item('it-0002') }]);
    expect(typeof doc!.error, JSON.stringify(doc)).toBe('string');
    expect(byItem(await items()).get(item('it-0002'))?.status).toBe(3);
  });

  // ------------------------------------------------------------ fees

  it('fees: GET {core_url}/{patron_id}/fees answers a Fee record: amount 0..1 money, fee 0..n, fee.amount 1..1 money', async () => {
    const body = expectOk(await fx().client.get('/core/alice/fees', { token: alice.token }));
    expect(feeRecordProblems(body)).toEqual([]);
    expect(body.amount).toBe('3.50 EUR');
    expect((body.fee as Doc[]).map((fee) => fee.amount).sort()).toEqual(['1.00 EUR', '2.50 EUR']);
  });

  it('fees: amount is the "Sum of all fees" (alice 3.50 EUR, carol 12.00 EUR)', async () => {
    const carol = await fx().client.login('carol');
    for (const [session, total] of [
      [alice, '3.50 EUR'],
      [carol, '12.00 EUR'],
    ] as const) {
      const body = expectOk(await fx().client.get(`/core/${session.patron}/fees`, { token: session.token }));
      expect(feeRecordProblems(body)).toEqual([]);
      expect(body.amount).toBe(total);
      const sum = (body.fee as Doc[]).reduce((s, fee) => s + cents(fee.amount as string), 0n);
      expect(sum).toBe(cents(total));
    }
  });

  it('fees: fee.about describes the fee; fee.item and fee.feetype (upstream PAIA) name the item and kind where the library sends them', async () => {
    const body = expectOk(await fx().client.get('/core/alice/fees', { token: alice.token }));
    const overdue = (body.fee as Doc[]).find((fee) => fee.amount === '2.50 EUR')!;
    expect(overdue.about).toBe('Der Zauberberg');
    if (dialect === 'evergreen') {
      // eg_legacy fine items carry an id, the amount and a title only
      expect(overdue).not.toHaveProperty('item');
    } else {
      expect(overdue).toMatchObject({ item: item('it-0001'), feetype: 'overdue' });
      expect((overdue.date as string) < today()).toBe(true);
    }
  });
});
