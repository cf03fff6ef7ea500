import { describe, expect, it } from 'vitest';
import { availabilityOf, daiaDocument, daiaItem } from '../../../../src/backend/daia/mapping.js';
import { DaiaService, splitQueryId } from '../../../../src/backend/daia/service.js';
import { ItemInfoCache } from '../../../../src/backend/item-cache.js';
import { PoolShare } from '../../../../src/backend/pool-share.js';
import { compileUriTemplates } from '../../../../src/backend/uris.js';
import type { CancelSignal } from '../../../../src/cancel-signal.js';
import { sip2DateFrom } from '../../../../src/sip2/date.js';
import { loadDialect } from '../../../../src/sip2/dialect.js';
import { IlsTimeout, Sip2EncodeError } from '../../../../src/sip2/errors.js';
import { Sip2Messages } from '../../../../src/sip2/messages.js';
import type { ItemInformation, ItemInformationResponse } from '../../../../src/sip2/spec.js';
import { CIRCULATION_STATUS } from '../../../../src/sip2/spec.js';
import { daiaSchemaErrors } from '../../../helpers/daia-schema.js';

const NOW = new Date(2025, 2, 10, 12, 0, 0);
const date = sip2DateFrom(NOW);
const uris = compileUriTemplates({
  item: 'https://lib.example.org/item/{barcode}',
  edition: 'https://lib.example.org/title/{title}',
  storage: 'https://lib.example.org/location/{location}',
  patronType: null,
});
const ctx = { dialect: loadDialect('generic'), uris, institution: 'DEMO' };

function info(fields: Partial<ItemInformationResponse> = {}): ItemInformationResponse {
  return {
    code: '18',
    circulationStatus: 3,
    securityMarker: 2,
    feeType: 1,
    transactionDate: date,
    itemIdentifier: 'it-1',
    titleIdentifier: 'Faust',
    holdQueueLength: '0',
    permanentLocation: 'MAIN',
    currentLocation: 'MAIN',
    owner: 'DEMO',
    extra: [['CS', 'GK 8000 G599 F3']],
    ...fields,
  };
}

/** A whole response around one item, for the schema. */
function wrap(fields: Partial<ItemInformationResponse>) {
  return {
    document: [daiaDocument('it-1', 'it-1', info(fields), ctx)],
    institution: { content: 'DEMO' },
    timestamp: NOW.toISOString(),
  };
}

const both = <T extends object>(extra: T) => [
  { service: 'loan', ...extra },
  { service: 'presentation', ...extra },
];

describe('DAIA mapping of 18 circulation status', () => {
  const cases: Array<[string, Partial<ItemInformationResponse>, object]> = [
    [
      '03 available: loan and presentation available',
      { circulationStatus: CIRCULATION_STATUS.available },
      { available: both({}) },
    ],
    [
      '04 charged: unavailable until the due date, with the queue',
      { circulationStatus: 4, dueDate: '20250320    120000', holdQueueLength: '2' },
      { unavailable: both({ expected: '2025-03-20', queue: 2 }) },
    ],
    [
      '04 charged without a queue',
      { circulationStatus: 4, dueDate: '20250320    120000', holdQueueLength: '0' },
      { unavailable: both({ expected: '2025-03-20' }) },
    ],
    [
      '04 charged, unreadable due date: expected unknown',
      { circulationStatus: 4, dueDate: 'soon' },
      { unavailable: both({ expected: 'unknown' }) },
    ],
    [
      '05 charged, no recall yet',
      { circulationStatus: 5, dueDate: '20250320    120000' },
      { unavailable: both({ expected: '2025-03-20' }) },
    ],
    [
      '07 recalled',
      { circulationStatus: 7, dueDate: '20250315    120000', holdQueueLength: '1' },
      { unavailable: both({ expected: '2025-03-15', queue: 1 }) },
    ],
    [
      '08 on the hold shelf: unavailable with the queue, no expected date',
      { circulationStatus: 8, holdQueueLength: '1' },
      { unavailable: both({ queue: 1 }) },
    ],
    ['10 in transit: expected unknown', { circulationStatus: 10 }, { unavailable: both({ expected: 'unknown' }) }],
    ['02 on order: expected unknown', { circulationStatus: 2 }, { unavailable: both({ expected: 'unknown' }) }],
    ['06 in process: expected unknown', { circulationStatus: 6 }, { unavailable: both({ expected: 'unknown' }) }],
    [
      '09 waiting to be re-shelved: available after an unknown delay',
      { circulationStatus: 9 },
      { available: both({ delay: 'unknown' }) },
    ],
    ['11 claimed returned: unavailable, no expected date', { circulationStatus: 11 }, { unavailable: both({}) }],
    ['12 lost: unavailable, no expected date', { circulationStatus: 12 }, { unavailable: both({}) }],
    ['13 missing: unavailable, no expected date', { circulationStatus: 13 }, { unavailable: both({}) }],
    ['01 other (known item): no services, availability unknown', { circulationStatus: 1 }, {}],
    ['status not given: no services', { circulationStatus: null }, {}],
  ];
  for (const [name, fields, expected] of cases) {
    it(name, () => {
      expect(availabilityOf(info(fields), ctx)).toEqual(expected);
      expect(daiaSchemaErrors(wrap(fields))).toEqual([]);
    });
  }

  it('reads due dates in the dialect format (evergreen YYYY-MM-DD HH:MM:SS)', () => {
    const evergreen = { ...ctx, dialect: loadDialect('evergreen') };
    expect(availabilityOf(info({ circulationStatus: 4, dueDate: '2025-04-01 23:59:59' }), evergreen)).toEqual({
      unavailable: both({ expected: '2025-04-01' }),
    });
  });

  it('item: id is the item URI, label the call number, storage the permanent location with its URI, the institution its department', () => {
    expect(daiaItem('it-1', info(), ctx)).toEqual({
      id: 'https://lib.example.org/item/it-1',
      label: 'GK 8000 G599 F3',
      department: { content: 'DEMO' },
      storage: { id: 'https://lib.example.org/location/MAIN', content: 'MAIN' },
      available: both({}),
    });
  });

  it('storage falls back to the current location; no storage id without a template; department is a foreign owner', () => {
    const noStorage = { ...ctx, uris: { ...uris, storage: null } };
    const item = daiaItem(
      'it-1',
      info({ permanentLocation: undefined, currentLocation: 'BRANCH', owner: 'OTHER', extra: [] }),
      noStorage,
    );
    expect(item).toEqual({
      id: 'https://lib.example.org/item/it-1',
      storage: { content: 'BRANCH' },
      department: { content: 'OTHER' },
      available: both({}),
    });
  });

  it('an item the ILS does not know: a document with the id and no items', () => {
    const unknown = info({
      circulationStatus: 1,
      titleIdentifier: '',
      permanentLocation: undefined,
      currentLocation: undefined,
    });
    expect(daiaItem('nope', unknown, ctx)).toBeNull();
    expect(daiaDocument('nope', 'nope', unknown, ctx)).toEqual({
      id: 'https://lib.example.org/item/nope',
      requested: 'nope',
    });
  });

  it('document: the requested URI is the id, the title its about', () => {
    const doc = daiaDocument('https://lib.example.org/item/it-1', 'it-1', info(), ctx);
    expect(doc).toMatchObject({ id: 'https://lib.example.org/item/it-1', about: 'Faust' });
    expect(doc).not.toHaveProperty('requested');
    expect(doc.item).toHaveLength(1);
  });
});

describe('DaiaService', () => {
  function service(answer: (barcode: string) => Promise<ItemInformationResponse>) {
    const sent: string[] = [];
    const svc = new DaiaService({
      send: (message: ItemInformation) => {
        sent.push(message.itemIdentifier);
        return answer(message.itemIdentifier);
      },
      messages: new Sip2Messages({ institutionId: 'DEMO' }),
      dialect: ctx.dialect,
      uris,
      institution: 'DEMO',
      now: () => NOW,
    });
    return { svc, sent };
  }

  it('splits the query id at |, drops empty and repeated identifiers', () => {
    expect(splitQueryId('a|b||a| |c')).toEqual(['a', 'b', 'c']);
  });

  it('one 17 per distinct item; barcode and URI of one item make one document; foreign URIs are unknown documents', async () => {
    const { svc, sent } = service(async (barcode) => info({ itemIdentifier: barcode }));
    const response = await svc.availability(['it-1', 'https://lib.example.org/item/it-1', 'urn:isbn:123', 'it-2']);
    expect(sent.sort()).toEqual(['it-1', 'it-2']);
    expect(response.document.map((d) => [d.id, d.requested])).toEqual([
      ['https://lib.example.org/item/it-1', 'it-1'],
      ['urn:isbn:123', undefined],
      ['https://lib.example.org/item/it-2', 'it-2'],
    ]);
    expect(response.institution).toEqual({ content: 'DEMO' });
    expect(response.timestamp).toBe(NOW.toISOString());
    expect(daiaSchemaErrors(response)).toEqual([]);
  });

  it('a barcode SIP2 cannot carry is an unknown document, not an error', async () => {
    const { svc, sent } = service(async () => {
      throw new Sip2EncodeError('itemIdentifier', 'cannot encode');
    });
    const response = await svc.availability(['x\u0001y', 'caf\u00e9\u4e00']);
    expect(sent).toEqual(['caf\u00e9\u4e00']);
    expect(response.document.every((d) => d.item === undefined)).toBe(true);
    expect(daiaSchemaErrors(response)).toEqual([]);
  });

  it("sends every 17 of all requests together through the share: never more than the share's at once", async () => {
    let inFlight = 0;
    let peak = 0;
    const signals: Array<CancelSignal | undefined> = [];
    const poolShare = new PoolShare({
      name: 'DAIA',
      share: 0.5,
      connections: () => 6,
      maxWaiting: 100,
      waitTimeoutMs: 5000,
    });
    const svc = new DaiaService({
      send: async (message: ItemInformation, options) => {
        signals.push(options?.signal);
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 2));
        inFlight -= 1;
        return info({ itemIdentifier: message.itemIdentifier });
      },
      messages: new Sip2Messages({ institutionId: 'DEMO' }),
      dialect: ctx.dialect,
      uris,
      institution: 'DEMO',
      // The cache sits in front of the share: a hit costs no share, a miss goes through it.
      itemCache: new ItemInfoCache({ ttlMs: 60_000, maxEntries: 100 }),
      share: poolShare,
      maxParallel: 3,
    });
    const ids = (prefix: string) => Array.from({ length: 12 }, (_, i) => `${prefix}-${i}`);
    const caller = new AbortController();
    const responses = await Promise.all([
      svc.availability(ids('a'), { signal: caller.signal }),
      svc.availability(ids('b')),
      svc.availability(ids('c')),
    ]);
    expect(responses.map((response) => response.document.length)).toEqual([12, 12, 12]);
    expect(signals).toHaveLength(36);
    expect(peak).toBe(3);
    // The pool is not handed the caller's signal: a 17 let through runs to its end, holding the share.
    expect(signals.every((signal) => signal === undefined)).toBe(true);
    expect(poolShare.stats()).toMatchObject({ running: 0, waiting: 0, refused: 0 });
    await svc.availability(ids('a'));
    expect(signals).toHaveLength(36);
  });

  it('a backend failure fails the whole request', async () => {
    const { svc } = service(async () => {
      throw new IlsTimeout('response-timeout', 'no answer');
    });
    await expect(svc.availability(['it-1'])).rejects.toMatchObject({ name: 'BackendFailure', kind: 'timeout' });
  });
});
