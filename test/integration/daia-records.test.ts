/**
 * DAIA by record, end to end: a real gateway process in front of a real
 * simulator process, asked as VuFind's DAIA driver asks
 * (vufind-org/vufind module/VuFind/src/VuFind/ILS/Driver/DAIA.php):
 *
 * - getStatuses() with multiQuery sends one request for all ids of a result
 *   page, generateMultiURIs(): daiaIdPrefix . $id joined by "|" ("ppn:" by
 *   default, init()), doHTTPRequest(): GET baseUrl?id=...&format=json with
 *   Accept: application/json;
 * - extractDaiaDoc() keeps, per id, the document whose `id` equals
 *   generateURI($id) exactly and that has `item` (without multiQuery: the
 *   first document, if it has `item`);
 * - parseDaiaArray() makes one holding per item, item_id from item.id.
 *
 * Records come from a mapping file (CSV with broken lines, re-read when it
 * changes) and from an ILS API (a Koha-shaped test server on 127.0.0.1
 * that can also hang or answer garbage). Every answer is checked against
 * the DAIA JSON schema.
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, item, type Reply, useFixture } from '../conformance/support.js';
import { daiaSchemaErrors } from '../helpers/daia-schema.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';

type Doc = { id: string; requested?: string; about?: string; item?: Array<Record<string, unknown>> };

/** VuFind's request: the ids with its prefix, one multiQuery call, JSON asked for as DAIA.php doHTTPRequest() does. */
function vufindQuery(client: Client, recordIds: string[]): Promise<Reply> {
  return client.get('/daia', {
    query: { id: recordIds.map((id) => `ppn:${id}`).join('|'), format: 'json' },
    headers: { Accept: 'application/json', 'Content-type': 'application/json' },
  });
}

/** A valid DAIA answer (status, schema); its documents. */
function documents(reply: Reply): Doc[] {
  const what = `${reply.request} -> ${reply.status} ${reply.text.slice(0, 400)}`;
  expect(reply.status, what).toBe(200);
  expect(reply.headers.get('content-type'), what).toBe('application/json; charset=utf-8');
  expect(daiaSchemaErrors(reply.json), what).toEqual([]);
  return reply.body.document as Doc[];
}

/** DAIA.php extractDaiaDoc() with multiQuery: the document whose id is generateURI($id), if it has items. */
function extractDaiaDoc(docs: Doc[], recordId: string): Doc | null {
  const doc = docs.find((candidate) => candidate.id === `ppn:${recordId}`);
  return doc?.item === undefined ? null : doc;
}

/** DAIA.php parseDaiaArray(): the holdings' item_id (item.id) and whether each is available for loan. */
function holdings(doc: Doc | null): Array<[string, boolean]> {
  return (doc?.item ?? []).map((entry) => [
    String(entry.id),
    Array.isArray(entry.available) &&
      entry.available.some((service: { service: string }) => service.service === 'loan'),
  ]);
}

const dir = mkdtempSync(join(tmpdir(), 'paia-daia-records-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Replaces the mapping file as an export job should: a new file renamed over the old one. */
function writeMapping(path: string, text: string): void {
  writeFileSync(`${path}.new`, text);
  renameSync(`${path}.new`, path);
}

const mapping = join(dir, 'records.csv');
writeMapping(
  mapping,
  [
    'biblionumber,barcode', // 1
    '1001,it-0031', // 2: Die Verwandlung, on the shelf
    '1001,it-0032', // 3: its second copy, at BRANCH
    'this line is broken', // 4
    '1002,it-0001', // 5: Der Zauberberg, on loan
    '1003,it-9999', // 6: a barcode the ILS does not know
    '1003,it-0030', // 7: Faust, on the shelf
    '1004;it-0010', // 8: the wrong separator
    '',
  ].join('\n'),
);
// One simulator: its main gateway maps records from the file, a second one (below) looks them up over HTTP.
const fx = useFixture('generic', {
  PAIA_DAIA_RECORDS_FILE: mapping,
  PAIA_DAIA_RECORDS_FILE_CHECK_MS: '1000',
});

describe('DAIA by record from a mapping file', () => {
  it('names the broken lines at start, by file and line, and serves the rest', () => {
    const log = fx().gateway.stdout();
    expect(log).toContain(`record mapping ${mapping}: 2 lines left out, the rest serves`);
    expect(log).toContain(`${mapping}:4 has one field only`);
    expect(log).toContain(`${mapping}:8 has one field only`);
  });

  it("answers VuFind's multiQuery: each record's document under exactly the id it asked for, one item per copy the ILS knows", async () => {
    const docs = documents(await vufindQuery(fx().client, ['1001', '1002', '1003', '1004', '4711']));
    expect(docs.map((doc) => doc.id)).toEqual(['ppn:1001', 'ppn:1002', 'ppn:1003', 'ppn:1004', 'ppn:4711']);
    expect(holdings(extractDaiaDoc(docs, '1001'))).toEqual([
      [item('it-0031'), true],
      [item('it-0032'), true],
    ]);
    expect(extractDaiaDoc(docs, '1001')?.about).toBe('Die Verwandlung');
    expect(holdings(extractDaiaDoc(docs, '1002'))).toEqual([[item('it-0001'), false]]);
    // The copy the ILS does not know is left out; the record keeps its known one.
    expect(holdings(extractDaiaDoc(docs, '1003'))).toEqual([[item('it-0030'), true]]);
    // A broken line's record, and a record nobody maps: documents without items, which extractDaiaDoc() skips.
    expect(extractDaiaDoc(docs, '1004')).toBeNull();
    expect(extractDaiaDoc(docs, '4711')).toBeNull();
  });

  it('answers VuFind without multiQuery (one record per request: the first document, with its items)', async () => {
    const [first] = documents(await vufindQuery(fx().client, ['1001']));
    expect(holdings(first ?? null).map(([id]) => id)).toEqual([item('it-0031'), item('it-0032')]);
  });

  it('answers the edition URI of a record too, and a record in the same request as its copy', async () => {
    const docs = documents(
      await fx().client.get('/daia', {
        query: { id: `https://lib.example.org/title/1002|${item('it-0001')}`, format: 'json' },
      }),
    );
    expect(docs.map((doc) => [doc.id, doc.item?.length])).toEqual([
      ['https://lib.example.org/title/1002', 1],
      [item('it-0001'), 1],
    ]);
  });

  it('picks up the file changed at run time, and names the broken lines of the new version', async () => {
    writeMapping(mapping, ['1001,it-0030', '1005,it-0020', 'still broken', ''].join('\n'));
    await expect
      .poll(async () => holdings(extractDaiaDoc(documents(await vufindQuery(fx().client, ['1001'])), '1001')), {
        timeout: 10_000,
        interval: 200,
      })
      .toEqual([[item('it-0030'), true]]);
    const docs = documents(await vufindQuery(fx().client, ['1005', '1002']));
    expect(holdings(extractDaiaDoc(docs, '1005')).map(([id]) => id)).toEqual([item('it-0020')]);
    expect(extractDaiaDoc(docs, '1002')).toBeNull();
    expect(fx().gateway.stdout()).toContain(`${mapping}:3 has one field only`);
  });
});

describe('DAIA by record from an ILS API', () => {
  /** What the Koha-shaped API does per record: its items, or hanging, or garbage. */
  const answers: Record<string, (res: ServerResponse) => void> = {
    '2001': (res) =>
      json(res, [
        { item_id: 31, external_id: 'it-0031' },
        { item_id: 32, external_id: 'it-0032' },
      ]),
    '2002': (res) => json(res, [{ item_id: 1, external_id: 'it-0001' }]),
    hangs: (res) => hanging.push(res),
    garbage: (res) => res.end('<html><body>Koha is being upgraded</body></html>'),
    'other-shape': (res) => json(res, { errors: [{ message: 'Unauthorized' }] }),
  };
  const hanging: ServerResponse[] = [];
  const asked: Array<{ path: string; authorization: string | undefined }> = [];
  const api = createServer((req, res) => {
    asked.push({ path: req.url ?? '', authorization: req.headers.authorization });
    const record = decodeURIComponent(/^\/api\/v1\/biblios\/([^/]+)\/items$/.exec(req.url ?? '')?.[1] ?? '');
    const answer = answers[record];
    if (answer) answer(res);
    else json(res, { error: 'Bibliographic record not found' }, 404);
  });
  function json(res: ServerResponse, body: unknown, status = 200): void {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  const LOOKUP_TIMEOUT_MS = 500;
  const REQUEST_TIMEOUT_MS = 5000;
  let client: Client;
  let gateway: GatewayProcess;
  beforeAll(async () => {
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const { port } = api.address() as AddressInfo;
    const started = await fx().extraGateway({
      PAIA_DAIA_RECORDS_HTTP_URL: `http://127.0.0.1:${port}/api/v1/biblios/{record}/items`,
      PAIA_DAIA_RECORDS_HTTP_FIELD: '[].external_id',
      PAIA_DAIA_RECORDS_HTTP_HEADERS: JSON.stringify([{ name: 'Authorization', value: 'Basic cGFpYTpzZWNyZXQ=' }]),
      PAIA_DAIA_RECORDS_HTTP_TIMEOUT_MS: String(LOOKUP_TIMEOUT_MS),
      PAIA_HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    });
    client = started.client;
    gateway = started.gateway;
  });
  afterAll(async () => {
    for (const res of hanging) res.destroy();
    api.closeAllConnections();
    await new Promise((resolve) => api.close(resolve));
  });

  it("answers VuFind's multiQuery from the API's item lists, asking it with its headers", async () => {
    const docs = documents(await vufindQuery(client, ['2001', '2002', '2003']));
    expect(docs.map((doc) => doc.id)).toEqual(['ppn:2001', 'ppn:2002', 'ppn:2003']);
    expect(holdings(extractDaiaDoc(docs, '2001'))).toEqual([
      [item('it-0031'), true],
      [item('it-0032'), true],
    ]);
    expect(holdings(extractDaiaDoc(docs, '2002'))).toEqual([[item('it-0001'), false]]);
    // 404 from the API: the record is unknown there, a document without items.
    expect(extractDaiaDoc(docs, '2003')).toBeNull();
    expect(asked.filter(({ path }) => path === '/api/v1/biblios/2001/items')).toEqual([
      { path: '/api/v1/biblios/2001/items', authorization: 'Basic cGFpYTpzZWNyZXQ=' },
    ]);
  });

  it("a lookup that hangs or answers garbage leaves only its record without items: 200 within the lookup's bound, the rest answered", async () => {
    const started = performance.now();
    const reply = await vufindQuery(client, ['hangs', '2001', 'garbage', 'other-shape']);
    const elapsed = performance.now() - started;
    const docs = documents(reply);
    expect(docs.map((doc) => doc.id)).toEqual(['ppn:hangs', 'ppn:2001', 'ppn:garbage', 'ppn:other-shape']);
    expect(extractDaiaDoc(docs, 'hangs')).toBeNull();
    expect(extractDaiaDoc(docs, 'garbage')).toBeNull();
    expect(extractDaiaDoc(docs, 'other-shape')).toBeNull();
    expect(holdings(extractDaiaDoc(docs, '2001')).map(([id]) => id)).toEqual([item('it-0031'), item('it-0032')]);
    // Bounded by the lookup's timeout, well inside the call's deadline (which would have been a 504).
    expect(elapsed).toBeLessThan(REQUEST_TIMEOUT_MS);
    // One warning line (at most one a minute), and every failure counted.
    expect(gateway.stdout()).toMatch(/the record lookup at http:\/\/127\.0\.0\.1:\d+ .*is answered without items/);
    expect(gateway.stdout()).not.toContain('cGFpYTpzZWNyZXQ=');
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metrics).toMatch(/^paia_daia_record_lookup_failures_total 3$/m);
  });
});

describe('DAIA by record at start', () => {
  it('a mapping file that does not exist is a clear start-up error (exit code 2, as other configuration errors)', async () => {
    const missing = join(dir, 'no-such-records.csv');
    const started = startGatewayProcess({
      sip2Port: null,
      dialect: 'generic',
      env: { PAIA_DAIA_RECORDS_FILE: missing },
    });
    await expect(started).rejects.toThrow(/exited early \(code 2, signal null\)/);
    await expect(started).rejects.toThrow(
      new RegExp(`daia\\.records\\.file: cannot read ${missing.replace(/[.]/g, '\\.')}: no such file`),
    );
  });
});
