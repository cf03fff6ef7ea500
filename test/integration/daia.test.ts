/**
 * DAIA over SIP2 item information, end to end: a real gateway process in
 * front of a real simulator process, for every dialect. Responses are
 * checked against the official DAIA schema (test/fixtures/daia).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BUILTIN_DIALECTS } from '../../src/sip2/dialect.js';
import { type Dialect, item, type Reply, today, useFixture } from '../conformance/support.js';
import { daiaSchemaErrors } from '../helpers/daia-schema.js';

const DAIA_DIALECTS = BUILTIN_DIALECTS;
const RESPONSE_TIMEOUT_MS = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const query = (ids: string[], extra: Record<string, string> = {}) => ({
  query: { id: ids.join('|'), format: 'json', ...extra },
});

type Doc = { id: string; requested?: string; about?: string; item?: Array<Record<string, unknown>> };

/** A 200 DAIA response: headers and schema; its documents. */
function expectDaia(reply: Reply): Doc[] {
  const what = `${reply.request} -> ${reply.status} ${reply.text.slice(0, 400)}`;
  expect(reply.status, what).toBe(200);
  expect(reply.headers.get('content-type'), what).toMatch(/^application\/json; charset=utf-8$/);
  expect(reply.headers.get('x-daia-version'), what).toBe('1.0.0');
  expect(reply.headers.get('access-control-allow-origin'), what).toBe('*');
  expect(daiaSchemaErrors(reply.json), what).toEqual([]);
  expect(reply.body.institution, what).toEqual({ content: 'DEMO' });
  expect(Date.parse(String(reply.body.timestamp)), what).not.toBeNaN();
  return reply.body.document as Doc[];
}

/** A DAIA error response: {error, code, error_description}, status (200 when suppressed), DAIA headers. */
function expectDaiaError(reply: Reply, status: number, error: string, suppressed = false): void {
  const what = `${reply.request} -> ${reply.status} ${reply.text.slice(0, 300)}`;
  expect(reply.status, what).toBe(suppressed ? 200 : status);
  expect(reply.body, what).toMatchObject({ error, code: status });
  expect(typeof reply.body.error_description, what).toBe('string');
  expect(reply.headers.get('x-daia-version'), what).toBe('1.0.0');
  expect(reply.headers.get('access-control-allow-origin'), what).toBe('*');
}

const services = (list: unknown) => (Array.isArray(list) ? list.map((s: { service: string }) => s.service).sort() : []);

describe.each(DAIA_DIALECTS)('DAIA (%s)', (dialect) => {
  // folio is not among the conformance dialects (no expiry date), but the fixture runs it fine.
  const fx = useFixture(
    dialect as Dialect,
    {
      PAIA_SIP2_POOL_MIN: '0',
      PAIA_SIP2_POOL_MAX: '2',
      PAIA_SIP2_POOL_KEEPALIVE_MS: '0',
      PAIA_SIP2_TIMEOUTS_RESPONSE_MS: String(RESPONSE_TIMEOUT_MS),
      PAIA_SIP2_TIMEOUTS_CONNECT_MS: '1000',
      // One 17 per distinct item and faults per message are counted here; the cache has its own tests.
      PAIA_CACHE_ITEMS_ENABLED: 'false',
    },
    [
      // extras[0]: one connection and a short acquire timeout, for service_unavailable
      {
        PAIA_SIP2_POOL_MIN: '1',
        PAIA_SIP2_POOL_MAX: '1',
        PAIA_SIP2_POOL_KEEPALIVE_MS: '0',
        PAIA_SIP2_POOL_ACQUIRE_TIMEOUT_MS: '100',
        PAIA_CACHE_ITEMS_ENABLED: 'false',
      },
    ],
  );
  const daia = (ids: string[], extra: Record<string, string> = {}) => fx().client.get('/daia', query(ids, extra));

  /** Faults off and the gateway answering DAIA again. */
  async function settle(): Promise<void> {
    await fx().sim.clearFaults();
    const deadline = Date.now() + 20_000;
    for (;;) {
      const reply = await daia([item('it-0030')]);
      if (reply.status === 200) return;
      if (Date.now() > deadline)
        throw new Error(`the gateway did not serve again within 20 s: ${reply.status} ${reply.text}`);
      await sleep(200);
    }
  }

  describe('item states', () => {
    const states: Array<[string, string, (doc: Doc) => void]> = [
      [
        'it-0030 on the shelf',
        item('it-0030'),
        (doc) => {
          const [it0] = doc.item ?? [];
          expect(services(it0?.available)).toEqual(['loan', 'presentation']);
          expect(it0?.unavailable).toBeUndefined();
          expect(it0).toMatchObject({
            id: item('it-0030'),
            label: 'GK 8000 G599 F3',
            storage: { id: 'https://lib.example.org/location/MAIN', content: 'MAIN' },
          });
          expect(doc.about).toBe('Faust. Eine Tragödie');
        },
      ],
      [
        'it-0001 on loan, overdue',
        item('it-0001'),
        (doc) => {
          const un = doc.item?.[0]?.unavailable as Array<{ service: string; expected?: string }>;
          expect(services(un)).toEqual(['loan', 'presentation']);
          for (const s of un) {
            expect(s.expected).toMatch(/^\d{4}-\d{2}-\d{2}$/);
            expect(s.expected! < today()).toBe(true);
          }
        },
      ],
      [
        'it-0020 on loan with a queue',
        item('it-0020'),
        (doc) => {
          const un = doc.item?.[0]?.unavailable as Array<{ service: string; expected?: string; queue?: number }>;
          expect(services(un)).toEqual(['loan', 'presentation']);
          for (const s of un) {
            expect(s.expected).toMatch(/^\d{4}-\d{2}-\d{2}$/);
            expect(s.expected! >= today()).toBe(true);
            expect(s.queue).toBe(2);
          }
        },
      ],
      [
        'it-0010 on the hold shelf',
        item('it-0010'),
        (doc) => {
          const un = doc.item?.[0]?.unavailable as Array<{ service: string; expected?: string; queue?: number }>;
          expect(services(un)).toEqual(['loan', 'presentation']);
          for (const s of un) {
            expect(s.expected).toBeUndefined();
            expect(s.queue).toBeGreaterThanOrEqual(1);
          }
          expect(doc.item?.[0]?.available).toBeUndefined();
        },
      ],
      [
        'it-0040 in transit',
        item('it-0040'),
        (doc) => {
          const un = doc.item?.[0]?.unavailable as Array<{ expected?: string }>;
          expect(services(un)).toEqual(['loan', 'presentation']);
          for (const s of un) expect(s.expected).toBe('unknown');
          expect(doc.item?.[0]?.storage).toMatchObject({ content: 'BRANCH' });
        },
      ],
      [
        'it-0050 lost',
        item('it-0050'),
        (doc) => {
          const un = doc.item?.[0]?.unavailable as Array<{ expected?: string }>;
          expect(services(un)).toEqual(['loan', 'presentation']);
          for (const s of un) expect(s.expected).toBeUndefined();
        },
      ],
      [
        'it-0051 missing',
        item('it-0051'),
        (doc) => {
          const un = doc.item?.[0]?.unavailable as Array<{ expected?: string }>;
          expect(services(un)).toEqual(['loan', 'presentation']);
          for (const s of un) expect(s.expected).toBeUndefined();
        },
      ],
      [
        'an unknown item: a document without items, not a 404',
        item('it-9999'),
        (doc) => {
          expect(doc).toEqual({ id: item('it-9999') });
        },
      ],
      [
        'a plain barcode: the document id is the item URI',
        'it-0031',
        (doc) => {
          expect(doc).toMatchObject({ id: item('it-0031'), requested: 'it-0031' });
          expect(services(doc.item?.[0]?.available)).toEqual(['loan', 'presentation']);
        },
      ],
    ];

    for (const [name, id, check] of states) {
      it(name, async () => {
        const docs = expectDaia(await daia([id]));
        expect(docs).toHaveLength(1);
        check(docs[0]!);
      });
    }

    it('all of them in one request, each document in request order, one 17 per distinct item', async () => {
      const ids = [...states.map(([, id]) => id), item('it-0031'), item('it-0030')];
      const before = (await fx().sim.counters()).received['17'] ?? 0;
      const docs = expectDaia(await daia(ids));
      const after = (await fx().sim.counters()).received['17'] ?? 0;
      expect(after - before).toBe(states.length);
      expect(docs.map((d) => d.id)).toEqual(states.map(([, id]) => (id.startsWith('https:') ? id : item(id))));
    });
  });

  describe('protocol', () => {
    it('JSONP with callback', async () => {
      const reply = await daia([item('it-0030')], { callback: 'show_1' });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toMatch(/^application\/javascript; charset=utf-8$/);
      expect(reply.headers.get('x-daia-version')).toBe('1.0.0');
      expect(daiaSchemaErrors(reply.json)).toEqual([]);
    });

    it('a bad callback name is invalid_request 400', async () => {
      expectDaiaError(await daia([item('it-0030')], { callback: 'alert(1)' }), 400, 'invalid_request');
    });

    it('422 for a missing or unsupported format, a missing id', async () => {
      const { client } = fx();
      expectDaiaError(await client.get('/daia', { query: { id: item('it-0030') } }), 422, 'invalid_request');
      expectDaiaError(
        await client.get('/daia', { query: { id: item('it-0030'), format: 'xml' } }),
        422,
        'invalid_request',
      );
      expectDaiaError(await client.get('/daia', { query: { format: 'json' } }), 422, 'invalid_request');
    });

    it('suppress_response_codes: errors with status 200', async () => {
      expectDaiaError(
        await fx().client.get('/daia', { query: { id: 'x', suppress_response_codes: '' } }),
        422,
        'invalid_request',
        true,
      );
    });

    it('an access token: patron-specific availability is not_implemented 501', async () => {
      expectDaiaError(
        await fx().client.get('/daia', { ...query([item('it-0030')]), token: 'abc' }),
        501,
        'not_implemented',
      );
    });

    it('accepts the vertical bar escaped and unescaped', async () => {
      const raw = await fx().client.get(`/daia?format=json&id=it-0030|it-0031%7Cit-0032`);
      expect(expectDaia(raw).map((d) => d.id)).toEqual([item('it-0030'), item('it-0031'), item('it-0032')]);
    });

    it('HEAD: the GET headers without a body', async () => {
      const reply = await fx().client.call('HEAD', '/daia', query([item('it-0030')]));
      expect(reply.status).toBe(200);
      expect(reply.headers.get('x-daia-version')).toBe('1.0.0');
      expect(reply.headers.get('access-control-allow-origin')).toBe('*');
      expect(reply.bytes.length).toBe(0);
    });

    it('OPTIONS: CORS preflight with Content-Type among the allowed headers', async () => {
      const reply = await fx().client.call('OPTIONS', '/daia', {
        headers: { Origin: 'https://opac.example.org', 'Access-Control-Request-Method': 'GET' },
      });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('access-control-allow-origin')).toBe('*');
      expect(reply.headers.get('access-control-allow-headers') ?? '').toMatch(/Content-Type/);
      expect(reply.headers.get('access-control-allow-methods') ?? '').toMatch(/GET/);
      expect(reply.headers.get('x-daia-version')).toBe('1.0.0');
    });

    it('other verbs: 405 with Allow', async () => {
      const reply = await fx().client.post('/daia', {}, query([item('it-0030')]));
      expectDaiaError(reply, 405, 'invalid_request');
      expect(reply.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    });

    it('too many ids: the first 50 are answered, the rest is in a Link rel="next" URL', async () => {
      const ids = Array.from({ length: 53 }, (_, i) => `it-x${String(i).padStart(3, '0')}`);
      const reply = await daia(ids);
      const docs = expectDaia(reply);
      expect(docs.map((d) => d.requested)).toEqual(ids.slice(0, 50));
      const link = reply.headers.get('link') ?? '';
      const m = /^<([^>]+)>; rel="next"$/.exec(link);
      expect(m, link).not.toBeNull();
      const next = new URL(m![1]!);
      expect(next.pathname).toBe('/daia');
      expect(next.searchParams.get('format')).toBe('json');
      expect(next.searchParams.get('id')).toBe(ids.slice(50).join('|'));
      const rest = await fx().client.get(`${next.pathname}${next.search}`);
      expect(expectDaia(rest).map((d) => d.requested)).toEqual(ids.slice(50));
      expect(rest.headers.get('link')).toBeNull();
    });
  });

  describe('library system failures', () => {
    afterEach(async () => {
      await settle();
    });

    it('gateway_timeout 504 when the library system does not answer', async () => {
      await settle();
      await fx().sim.setFaults({ hang: 1 });
      expectDaiaError(await daia([item('it-0030')]), 504, 'gateway_timeout');
    });

    it('bad_gateway 502 when the library system answers garbage', async () => {
      await settle();
      await fx().sim.setFaults({ garbage: true });
      expectDaiaError(await daia([item('it-0030')]), 502, 'bad_gateway');
    });

    it('bad_gateway 502 or service_unavailable 503 when the library system cannot be reached', async () => {
      await settle();
      await fx().sim.setFaults({ refuseConnections: true });
      await fx().sim.disconnectAll();
      const reply = await daia([item('it-0030'), item('it-0001')]);
      expect([502, 503], reply.text).toContain(reply.status);
      expectDaiaError(reply, reply.status, reply.status === 502 ? 'bad_gateway' : 'service_unavailable');
      if (reply.status === 503) expect(reply.headers.get('retry-after') ?? '').toMatch(/^\d+$/);
    });

    it('service_unavailable 503 with Retry-After when no connection is free in time', async () => {
      const { client } = fx().extras[0]!;
      const one = () => client.get('/daia', query([item('it-0030')]));
      const deadline = Date.now() + 20_000;
      while ((await one()).status !== 200 && Date.now() < deadline) await sleep(200);
      await fx().sim.setFaults({ latencyMs: 800 });
      // Two different items: two requests for the same one would share a single 17 (SharedReads).
      const replies = await Promise.all([one(), client.get('/daia', query([item('it-0002')]))]);
      expect(replies.map((r) => r.status).sort(), replies.map((r) => r.text).join('\n')).toEqual([200, 503]);
      const busy = replies.find((r) => r.status === 503)!;
      expectDaiaError(busy, 503, 'service_unavailable');
      expect(busy.headers.get('retry-after') ?? '').toMatch(/^\d+$/);
    });
  });

  describe('with PAIA', () => {
    afterAll(async () => {
      await fx().sim.reset();
    });

    it('an item URI taken from a DAIA response can be requested through PAIA request and then appears in PAIA items', async () => {
      const [doc] = expectDaia(await daia(['it-0030']));
      const uri = doc?.item?.[0]?.id;
      expect(typeof uri).toBe('string');
      const alice = await fx().client.login('alice');
      const requested = await fx().client.post(
        `/core/${alice.patron}/request`,
        { doc: [{ item: uri }] },
        { token: alice.token },
      );
      expect(requested.status, requested.text).toBe(200);
      const [result] = requested.body.doc as Array<Record<string, unknown>>;
      expect(result?.error, requested.text).toBeUndefined();
      const items = await fx().client.get(`/core/${alice.patron}/items`, { token: alice.token });
      expect(items.status, items.text).toBe(200);
      expect((items.body.doc as Array<{ item?: string }>).map((d) => d.item)).toContain(uri);
    });
  });
});
