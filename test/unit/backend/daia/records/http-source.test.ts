/**
 * Records from an ILS API (src/backend/daia/records/http-source.ts), against
 * a real HTTP server on 127.0.0.1 that answers as Koha's REST API does
 * (GET /api/v1/biblios/{biblio_id}/items: an array of items, the barcode in
 * external_id; 404 for an unknown biblio) or as it should not: hanging,
 * garbage, an error, too much. Every lookup ends within its timeout, a
 * failed one answers no barcodes, is counted and remembered for a while.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HttpRecordSource, type HttpRecordSourceOptions } from '../../../../../src/backend/daia/records/http-source.js';
import { Cancellation } from '../../../../../src/cancel-signal.js';
import { createLogger } from '../../../../../src/log.js';
import { freePort } from '../../../../helpers/free-port.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler = (_req, res) => res.end('[]');
const requests: Array<{ url: string; authorization: string | undefined }> = [];
let inFlight = 0;
let peak = 0;
const hanging = new Set<ServerResponse>();
const server = createServer((req, res) => {
  requests.push({ url: req.url ?? '', authorization: req.headers.authorization });
  inFlight += 1;
  peak = Math.max(peak, inFlight);
  res.on('close', () => {
    inFlight -= 1;
    hanging.delete(res);
  });
  handler(req, res);
});
let base = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  requests.length = 0;
  peak = 0;
});

const json =
  (body: unknown, status = 200): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };
const hang: Handler = (_req, res) => {
  hanging.add(res);
};

function source(options: Partial<HttpRecordSourceOptions> = {}) {
  const lines: Array<{ level: string; msg: string; record?: string }> = [];
  const logger = createLogger({
    level: 'info',
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) },
  });
  const lookup = new HttpRecordSource({
    url: `${base}/api/v1/biblios/{record}/items`,
    timeoutMs: 300,
    logger,
    ...options,
  });
  return { lookup, warnings: () => lines.filter((line) => line.level === 'warn').map((line) => line.msg) };
}

describe('record lookups over HTTP', () => {
  it("reads Koha's items: the barcodes in external_id, the record id percent-encoded, the headers sent, the answer cached", async () => {
    handler = json([
      { item_id: 1, external_id: 'it-1' },
      { item_id: 2, external_id: null },
      { item_id: 3, external_id: 'it-3' },
    ]);
    const { lookup } = source({ headers: [{ name: 'Authorization', value: 'Basic c3ZjOnNlY3JldA==' }] });
    expect(await lookup.barcodesOf('12 34/5')).toEqual(['it-1', 'it-3']);
    expect(await lookup.barcodesOf('12 34/5')).toEqual(['it-1', 'it-3']);
    expect(requests).toEqual([{ url: '/api/v1/biblios/12%2034%2F5/items', authorization: 'Basic c3ZjOnNlY3JldA==' }]);
    expect(lookup.failures).toBe(0);
  });

  it("reads FOLIO's items with items[].barcode; drops repeats and barcodes SIP2 cannot carry; keeps maxItemsPerRecord", async () => {
    handler = json({
      items: [{ barcode: 'a' }, { barcode: 'a' }, { barcode: 'b|c' }, { barcode: 'd' }, { barcode: 'e' }],
    });
    const { lookup } = source({
      url: `${base}/inventory/items?query=instance.id=={record}`,
      field: 'items[].barcode',
      maxItemsPerRecord: 2,
    });
    expect(await lookup.barcodesOf('0c45bb50-7c9b-48b0-86eb-178a494e25fe')).toEqual(['a', 'd']);
    expect(requests[0]?.url).toBe('/inventory/items?query=instance.id==0c45bb50-7c9b-48b0-86eb-178a494e25fe');
  });

  it('a record the ILS does not have (404) has no barcodes, and that is no failure', async () => {
    handler = json({ error: 'Bibliographic record not found' }, 404);
    const { lookup, warnings } = source();
    expect(await lookup.barcodesOf('999')).toEqual([]);
    expect(lookup.failures).toBe(0);
    expect(warnings()).toEqual([]);
  });

  it.each<[string, Handler, RegExp]>([
    ['hangs', hang, /gave no answer within 300 ms \(daia\.records\.http\.timeoutMs\)/],
    ['answers HTML', (_req, res) => res.end('<html>login</html>'), /answered something that is not JSON/],
    [
      'answers another shape',
      json({ error: 'nope' }),
      /answered JSON of another shape: the answer is an object, not an array/,
    ],
    ['answers 500', json({ error: 'boom' }, 500), /answered HTTP 500/],
    [
      'answers too much (announced)',
      json(Array.from({ length: 200 }, (_, i) => ({ external_id: `it-${i}` }))),
      /answered more than 1024 bytes/,
    ],
    [
      'answers too much (streamed)',
      (_req, res) => {
        res.write('[');
        for (let i = 0; i < 200; i += 1) res.write(`{"external_id":"it-${i}"},`);
        res.end('{}]');
      },
      /answered more than 1024 bytes/,
    ],
  ])(
    'a lookup that %s answers no barcodes within its timeout, is counted, logged and not asked again for a while',
    async (_, bad, problem) => {
      handler = bad;
      const { lookup, warnings } = source({ maxBodyBytes: 1024 });
      const started = performance.now();
      expect(await lookup.barcodesOf('1')).toEqual([]);
      expect(performance.now() - started).toBeLessThan(2000);
      expect(lookup.failures).toBe(1);
      const [line] = warnings();
      expect(line).toMatch(problem);
      expect(line).toContain(`the record lookup at ${base}`);
      expect(line).toContain('record "1" is answered without items');
      // Remembered: the dead API is not asked again by the next request.
      expect(await lookup.barcodesOf('1')).toEqual([]);
      expect(requests).toHaveLength(1);
    },
  );

  it('logs one failure line a minute at most, counting every failure', async () => {
    handler = json({}, 503);
    const { lookup, warnings } = source();
    for (const record of ['1', '2', '3']) expect(await lookup.barcodesOf(record)).toEqual([]);
    expect(lookup.failures).toBe(3);
    expect(warnings()).toHaveLength(1);
  });

  it('an API that cannot be reached answers no barcodes', async () => {
    const { lookup, warnings } = source({ url: `http://127.0.0.1:${await freePort()}/items/{record}` });
    expect(await lookup.barcodesOf('1')).toEqual([]);
    expect(warnings()[0]).toMatch(/could not be reached: ECONNREFUSED/);
  });

  it("ends with the call's signal: the caller stops waiting at once, and nothing is remembered", async () => {
    handler = hang;
    const { lookup } = source({ timeoutMs: 10_000 });
    const call = new Cancellation();
    const pending = lookup.barcodesOf('1', call);
    await new Promise((resolve) => setTimeout(resolve, 50));
    call.abort('deadline');
    await expect(pending).rejects.toThrow();
    expect(lookup.failures).toBe(0);
    handler = json([{ external_id: 'it-1' }]);
    expect(await lookup.barcodesOf('1')).toEqual(['it-1']);
  });

  it('runs at most maxConcurrent lookups at once, shares identical ones in flight, and a wait for a slot counts against the timeout', async () => {
    handler = (_req, res) => setTimeout(() => json([{ external_id: 'x' }])(_req, res), 100);
    const { lookup } = source({ maxConcurrent: 2, timeoutMs: 1000 });
    const answers = await Promise.all(['a', 'b', 'c', 'd', 'a', 'a'].map((record) => lookup.barcodesOf(record)));
    expect(answers).toEqual(Array.from({ length: 6 }, () => ['x']));
    expect(requests).toHaveLength(4);
    expect(peak).toBe(2);

    handler = hang;
    const slow = source({ maxConcurrent: 1, timeoutMs: 200 });
    const [first, second] = await Promise.all([slow.lookup.barcodesOf('p'), slow.lookup.barcodesOf('q')]);
    expect([first, second]).toEqual([[], []]);
    expect(slow.lookup.failures).toBe(2);
    expect(slow.warnings()).toEqual([expect.stringMatching(/gave no answer within 200 ms/)]);
  });
});
