import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { BackendFailure } from '../../../src/backend/errors.js';
import { ItemInfoCache } from '../../../src/backend/item-cache.js';
import { limiter } from '../../../src/backend/parallel.js';
import { SharedReads } from '../../../src/backend/shared-reads.js';
import { acsSupportsOf, Sip2Backend, type Sip2BackendOptions } from '../../../src/backend/sip2-backend.js';
import { noPatronFlags } from '../../../src/sip2/codec.js';
import { sip2DateFrom } from '../../../src/sip2/date.js';
import { type Dialect, loadDialect } from '../../../src/sip2/dialect.js';
import { IlsTimeout, IlsUnavailable, PoolRefused, Sip2EncodeError } from '../../../src/sip2/errors.js';
import { Sip2Messages } from '../../../src/sip2/messages.js';
import type {
  HoldResponse,
  ItemInformationResponse,
  PatronInformation,
  PatronInformationResponse,
  RenewResponse,
  RequestMessage,
  SummaryList,
} from '../../../src/sip2/spec.js';

const NOW = new Date(2026, 2, 15, 12, 0, 0);
const URIS = { item: 'https://x.org/i/{barcode}', edition: 'https://x.org/t/{title}', storage: null, patronType: null };
const I = (barcode: string) => `https://x.org/i/${barcode}`;
const date = sip2DateFrom(NOW);

type Lists = Partial<Record<SummaryList, string[]>>;

function info64(
  lists: Lists,
  extra: Partial<PatronInformationResponse> = {},
): (list: SummaryList | null) => PatronInformationResponse {
  return (list) => ({
    code: '64',
    patronStatus: noPatronFlags(),
    language: '000',
    transactionDate: date,
    holdItemsCount: lists.hold?.length ?? 0,
    overdueItemsCount: lists.overdue?.length ?? 0,
    chargedItemsCount: lists.charged?.length ?? 0,
    fineItemsCount: lists.fine?.length ?? 0,
    recallItemsCount: lists.recall?.length ?? 0,
    unavailableHoldsCount: lists.unavailableHold?.length ?? 0,
    institutionId: 'X',
    patronIdentifier: 'p1',
    personalName: 'P One',
    validPatron: true,
    ...(list === 'hold' ? { holdItems: lists.hold ?? [] } : {}),
    ...(list === 'overdue' ? { overdueItems: lists.overdue ?? [] } : {}),
    ...(list === 'charged' ? { chargedItems: lists.charged ?? [] } : {}),
    ...(list === 'fine' ? { fineItems: lists.fine ?? [] } : {}),
    ...(list === 'recall' ? { recallItems: lists.recall ?? [] } : {}),
    ...(list === 'unavailableHold' ? { unavailableHoldItems: lists.unavailableHold ?? [] } : {}),
    ...extra,
  });
}

function item18(barcode: string, fields: Partial<ItemInformationResponse> = {}): ItemInformationResponse {
  return {
    code: '18',
    circulationStatus: 4,
    securityMarker: 2,
    feeType: 1,
    transactionDate: date,
    itemIdentifier: barcode,
    titleIdentifier: `Title ${barcode}`,
    ...fields,
  };
}

interface FakeIls {
  patron?: (list: SummaryList | null, message: PatronInformation) => PatronInformationResponse;
  item?: (barcode: string) => ItemInformationResponse;
  renew?: (barcode: string) => Promise<RenewResponse> | RenewResponse;
  hold?: (
    mode: string,
    target: { item?: string; title?: string; pickup?: string },
  ) => Promise<HoldResponse> | HoldResponse;
  delayMs?: number;
}

function makeBackend(ils: FakeIls, options: Partial<Sip2BackendOptions> & { dialect?: Dialect } = {}) {
  const sent: RequestMessage[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const send = async (message: RequestMessage): Promise<unknown> => {
    sent.push(message);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, ils.delayMs ?? 1));
      switch (message.code) {
        case '63':
          return ils.patron!(message.summary, message);
        case '17':
          return ils.item ? ils.item(message.itemIdentifier) : item18(message.itemIdentifier);
        case '29':
          return await ils.renew!(message.itemIdentifier ?? '');
        case '15':
          return await ils.hold!(message.holdMode, {
            item: message.itemIdentifier,
            title: message.titleIdentifier,
            pickup: message.pickupLocation,
          });
        case '35':
          return {
            code: '36',
            endSession: true,
            transactionDate: date,
            institutionId: 'X',
            patronIdentifier: message.patronIdentifier,
          };
        default:
          throw new Error(`unexpected ${message.code}`);
      }
    } finally {
      inFlight--;
    }
  };
  const backend = new Sip2Backend({
    send: send as Sip2BackendOptions['send'],
    messages: new Sip2Messages({ institutionId: 'X', now: () => NOW }),
    dialect: options.dialect ?? loadDialect('generic'),
    pageSize: 50,
    currency: 'EUR',
    uris: URIS,
    now: () => NOW,
    ...options,
  });
  return { backend, sent, maxInFlight: () => maxInFlight };
}

const renewOk = (barcode: string): RenewResponse => ({
  code: '30',
  ok: true,
  renewalOk: true,
  magneticMedia: 'N',
  desensitize: 'N',
  transactionDate: date,
  institutionId: 'X',
  patronIdentifier: 'p1',
  itemIdentifier: barcode,
  titleIdentifier: `Title ${barcode}`,
  dueDate: '20260412    235900',
});
const holdAnswer = (ok: boolean, fields: Partial<HoldResponse> = {}): HoldResponse => ({
  code: '16',
  ok,
  available: false,
  transactionDate: date,
  institutionId: 'X',
  patronIdentifier: 'p1',
  ...fields,
});

/**
 * A patron with a loan (c1), a hold (h1) and a pending hold (u1) whose pending-holds list takes longer than
 * everything else; itemsAsked() runs GET items and says of each 17 whether it went out before that list was in.
 */
function slowPendingHolds(dialect: Dialect) {
  const lists: Lists = { charged: ['c1'], hold: ['h1'], unavailableHold: ['u1'] };
  let unavailableAnswered = false;
  const asked: string[] = [];
  const { backend, sent } = makeBackend(
    {
      patron: (list) => {
        const page = info64(lists)(list);
        if (list !== 'unavailableHold') return page;
        return new Promise((resolve) =>
          setTimeout(() => {
            unavailableAnswered = true;
            resolve(page);
          }, 50),
        ) as unknown as PatronInformationResponse;
      },
      item: (barcode) => {
        asked.push(`${barcode}${unavailableAnswered ? ' after' : ' before'} the pending holds`);
        return item18(barcode);
      },
    },
    { dialect },
  );
  const itemsAsked = async () => {
    const docs = await backend.items('p1');
    expect(docs.map((doc) => doc.item)).toEqual(['c1', 'h1', 'u1'].map(I));
    return asked;
  };
  return { sent, itemsAsked };
}

/** generic, with counts marked as not to be trusted: every list is read, as before dialects said otherwise. */
const UNRELIABLE: Dialect = { ...loadDialect('generic'), listCounts: 'unreliable' };

describe('Sip2Backend items', () => {
  it('counts not to be trusted: sends the five list requests at once, then a 17 for each entry, one per item', async () => {
    const { backend, sent, maxInFlight } = makeBackend(
      {
        patron: info64({ charged: ['a', 'b'], overdue: ['a'], hold: ['c', 'd'], unavailableHold: ['d'] }),
        // c waits on the hold shelf (08): ready.
        item: (barcode) => item18(barcode, barcode === 'c' ? { circulationStatus: 8 } : {}),
        delayMs: 20,
      },
      { dialect: UNRELIABLE },
    );
    const docs = await backend.items('p1');
    expect(docs.map((doc) => [doc.item, doc.status])).toEqual([
      [I('a'), 3],
      [I('b'), 3],
      [I('c'), 4],
      [I('d'), 1],
    ]);
    expect(sent.slice(0, 5).map((m) => m.code)).toEqual(['63', '63', '63', '63', '63']);
    expect(sent.filter((m) => m.code === '63')).toHaveLength(5);
    expect(sent.filter((m) => m.code === '17').map((m) => (m as { itemIdentifier: string }).itemIdentifier)).toEqual([
      'a',
      'b',
      'c',
      'd',
    ]);
    expect(maxInFlight()).toBeGreaterThanOrEqual(5);
  });

  it('counts not to be trusted: asks about the entries of each list as it arrives, not once all five are in', async () => {
    const slow = slowPendingHolds(UNRELIABLE);
    expect(await slow.itemsAsked()).toEqual([
      'c1 before the pending holds',
      'h1 before the pending holds',
      'u1 after the pending holds',
    ]);
    expect(slow.sent.filter((m) => m.code === '63')).toHaveLength(5);
  });

  it('keeps to maxParallel', async () => {
    const charged = Array.from({ length: 40 }, (_, i) => `b${i}`);
    const { backend, maxInFlight } = makeBackend({ patron: info64({ charged }), delayMs: 5 }, { maxParallel: 6 });
    expect(await backend.items('p1')).toHaveLength(40);
    expect(maxInFlight()).toBe(6);
  });

  it('ready-in-AS (koha): AS are ready, CD pending, even when an entry is in both', async () => {
    const { backend } = makeBackend(
      { patron: info64({ hold: ['r1', 'x'], unavailableHold: ['p1', 'x'] }) },
      { dialect: loadDialect('koha') },
    );
    const docs = await backend.items('p1');
    expect(docs.map((doc) => [doc.item, doc.status])).toEqual([
      [I('r1'), 4],
      [I('x'), 4],
      [I('p1'), 1],
    ]);
  });

  it('a loan wins over a hold on the same item; blank entries are ignored', async () => {
    const { backend } = makeBackend({
      patron: info64({ charged: ['a', ' '], hold: ['a', 'b'] }),
      item: (barcode) => item18(barcode, { circulationStatus: barcode === 'b' ? 8 : 4 }),
    });
    expect((await backend.items('p1')).map((doc) => [doc.item, doc.status])).toEqual([
      [I('a'), 3],
      [I('b'), 4],
    ]);
  });

  it('pending in transit is ordered (2); a title id 17 does not know is an edition; CF and CM as given', async () => {
    const { backend } = makeBackend(
      {
        patron: info64({ hold: ['t', 'tt', 'w'], unavailableHold: ['t', 'tt'] }),
        item: (barcode) =>
          barcode === 'tt'
            ? item18(barcode, { circulationStatus: 1, titleIdentifier: '', screenMessage: ['Item not found'] })
            : barcode === 't'
              ? item18(barcode, { circulationStatus: 10, holdQueueLength: '3' })
              : item18(barcode, {
                  circulationStatus: 8,
                  holdQueueLength: '0',
                  holdPickupDate: '20260320    120000',
                  currentLocation: 'DESK',
                }),
      },
      // BX: hold (position 14) N.
      { acsStatus: () => ({ supportedMessages: 'YYYYYYYYYYYYYNYY' }) },
    );
    expect(await backend.items('p1')).toEqual([
      {
        status: 4,
        item: I('w'),
        about: 'Title w',
        duedate: '2026-03-20',
        endtime: '2026-03-20',
        cancancel: false,
        storage: 'DESK',
      },
      { status: 2, item: I('t'), about: 'Title t', queue: 3, cancancel: false },
      { status: 1, edition: 'https://x.org/t/tt', cancancel: false },
    ]);
  });

  // VuFind PAIA.php myHoldsMapping: a hold is "available" (ready for pickup) exactly when its status is 4.
  it('all-in-AS: an AS hold not in CD is ready only when its 18 does not contradict it, from the 17s already sent', async () => {
    const S = { onLoan: 4, noRecall: 5, recalled: 7, shelf: 3, transit: 10, holdShelf: 8, missing: 13, other: 1 };
    const hold = Object.keys(S);
    for (const name of ['generic', 'evergreen', 'folio']) {
      const { backend, sent } = makeBackend(
        {
          // An ILS whose CD does not list pending holds (FOLIO's edge-sip2 lists only closed requests there).
          patron: info64({ hold, unavailableHold: [] }),
          item: (barcode) => item18(barcode, { circulationStatus: S[barcode as keyof typeof S] }),
        },
        { dialect: loadDialect(name) },
      );
      const docs = await backend.items('p1');
      expect(
        docs.map((doc) => [doc.item, doc.status]),
        name,
      ).toEqual([
        [I('onLoan'), 1],
        [I('noRecall'), 1],
        [I('recalled'), 1],
        [I('shelf'), 1],
        [I('transit'), 2],
        [I('holdShelf'), 4],
        [I('missing'), 1],
        [I('other'), 4],
      ]);
      // A pending hold carries no pickup date nor the item's location.
      expect(docs[0]).toEqual({ status: 1, item: I('onLoan'), about: 'Title onLoan' });
      expect(itemsAsked(sent)).toEqual(hold);
    }
  });

  it('koha (ready-in-AS): an AS hold is ready whatever its 18 says', async () => {
    const { backend } = makeBackend(
      { patron: info64({ hold: ['r'] }), item: (barcode) => item18(barcode, { circulationStatus: 4 }) },
      { dialect: loadDialect('koha') },
    );
    expect((await backend.items('p1')).map((doc) => doc.status)).toEqual([4]);
  });

  // VuFind PAIA.php myTransactionsMapping: `renewable` only where canrenew is present and true.
  it("canrenew on loans: the 98's BX renew position, unless the 64 denies renewal privileges; absent without a 98", async () => {
    const canrenew = async (bx: string | null, denied: boolean) => {
      const { backend } = makeBackend(
        {
          patron: info64(
            { charged: ['a'], hold: ['h'] },
            { patronStatus: { ...noPatronFlags(), renewalPrivilegesDenied: denied } },
          ),
          item: (barcode) => item18(barcode, { circulationStatus: barcode === 'h' ? 8 : 4 }),
        },
        { acsStatus: () => (bx === null ? null : { supportedMessages: bx }) },
      );
      const [loan, ready] = await backend.items('p1');
      // Only loans carry canrenew.
      expect(ready).not.toHaveProperty('canrenew');
      return loan?.canrenew;
    };
    expect(await canrenew('YYYYYYYYYYYYYYYY', false)).toBe(true);
    expect(await canrenew('YYYYYYYYYYYYYYNY', false)).toBe(false);
    expect(await canrenew('YYYYYYYYYYYYYYYY', true)).toBe(false);
    expect(await canrenew(null, false)).toBeUndefined();
    expect(await canrenew(null, true)).toBe(false);
  });

  it('leaves out what the ILS does not say (unparseable due date, no call number, no hold support info)', async () => {
    const { backend } = makeBackend({
      patron: info64({ charged: ['a'] }),
      item: (barcode) => item18(barcode, { dueDate: 'soon', holdQueueLength: 'many' }),
    });
    expect(await backend.items('p1')).toEqual([{ status: 3, item: I('a'), about: 'Title a' }]);
  });

  it('an unknown patron has no items; a failing 17 fails the call', async () => {
    const unknown = makeBackend({ patron: info64({}, { validPatron: false, personalName: '' }) });
    expect(await unknown.backend.items('nobody')).toEqual([]);
    const failing = makeBackend({
      patron: info64({ charged: ['a'] }),
      item: () => {
        throw new IlsTimeout('response-timeout', 'no answer');
      },
    });
    await expect(failing.backend.items('p1')).rejects.toMatchObject({
      name: 'BackendFailure',
      kind: 'timeout',
      reason: 'response-timeout',
    });
  });
});

const listsAsked = (sent: RequestMessage[]) =>
  sent.flatMap((m) => (m.code === '63' ? [`${m.summary}:${m.startItem ?? ''}`] : []));
const itemsAsked = (sent: RequestMessage[]) => sent.flatMap((m) => (m.code === '17' ? [m.itemIdentifier] : []));

describe('Sip2Backend items with counts to be trusted (listCounts: reliable)', () => {
  const lists = { charged: ['a', 'b'], overdue: ['a'], hold: ['c', 'd'], unavailableHold: ['d'] };

  it('asks for the charged list first, then only the lists whose count is not 0; the answer is the same', async () => {
    const reliable = makeBackend({ patron: info64(lists) });
    const unreliable = makeBackend({ patron: info64(lists) }, { dialect: UNRELIABLE });
    const docs = await reliable.backend.items('p1');
    expect(docs).toEqual(await unreliable.backend.items('p1'));
    // generic: overdue items are not said to be charged ones, so the overdue list is read; recall (0) is not.
    expect(listsAsked(reliable.sent)).toEqual(['charged:1', 'hold:1', 'unavailableHold:1', 'overdue:1']);
    expect(listsAsked(unreliable.sent)).toHaveLength(5);
    expect(itemsAsked(reliable.sent).sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('reads every list when the charged count is below the entries it lists (an ILS writing 0000), and warns once', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino(
      { level: 'warn' },
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
          callback();
        },
      }),
    );
    const zeroes = {
      holdItemsCount: 0,
      overdueItemsCount: 0,
      chargedItemsCount: 0,
      recallItemsCount: 0,
      unavailableHoldsCount: 0,
    };
    const trusted = makeBackend({ patron: info64(lists) });
    const zeroed = makeBackend({ patron: info64(lists, zeroes) }, { logger });
    const docs = await zeroed.backend.items('p1');
    expect(docs).toEqual(await trusted.backend.items('p1'));
    expect(listsAsked(zeroed.sent)).toHaveLength(5);
    await zeroed.backend.items('p1');
    expect(lines.filter((line) => /counts cannot be trusted/.test(String(line.msg)))).toHaveLength(1);
  });

  it('a patron with loans only costs one 63 and a 17 per loan', async () => {
    const { backend, sent } = makeBackend({ patron: info64({ charged: ['a', 'b', 'c'] }) });
    expect(await backend.items('p1')).toHaveLength(3);
    expect(sent.map((m) => m.code)).toEqual(['63', '17', '17', '17']);
  });

  it('asks for a list whose count is blank (unknown), and for none of an unknown patron', async () => {
    const { backend, sent } = makeBackend({
      patron: info64({ charged: ['a'], unavailableHold: ['p'] }, { unavailableHoldsCount: null }),
    });
    expect((await backend.items('p1')).map((doc) => [doc.item, doc.status])).toEqual([
      [I('a'), 3],
      [I('p'), 1],
    ]);
    expect(listsAsked(sent)).toEqual(['charged:1', 'unavailableHold:1']);

    const unknown = makeBackend({ patron: info64({}, { validPatron: false, personalName: '' }) });
    expect(await unknown.backend.items('nobody')).toEqual([]);
    expect(unknown.sent.map((m) => m.code)).toEqual(['63']);
  });

  it('chargedIncludes: skips the overdue list when the charged list is complete, reads it when it is not', async () => {
    const koha = loadDialect('koha');
    expect(koha.chargedIncludes).toContain('overdue');
    const complete = makeBackend({ patron: info64(lists) }, { dialect: koha });
    await complete.backend.items('p1');
    expect(listsAsked(complete.sent)).toEqual(['charged:1', 'hold:1', 'unavailableHold:1']);

    // The ILS announces three loans but lists two: the overdue list may hold the third.
    const short = makeBackend(
      { patron: info64({ charged: ['a', 'b'], overdue: ['z'] }, { chargedItemsCount: 3 }) },
      { dialect: koha },
    );
    const docs = await short.backend.items('p1');
    // The page after the first repeats it (the fake ignores BP): the list stays short.
    expect(listsAsked(short.sent)).toEqual(['charged:1', 'charged:3', 'overdue:1']);
    expect(docs.map((doc) => doc.item)).toEqual([I('a'), I('b'), I('z')]);
  });

  it('asks about the loans of the first page while the other pages are on their way', async () => {
    const charged = ['a', 'b', 'c', 'd', 'e'];
    // A fake ILS that pages by BP, two entries a page.
    const paged = makeBackend(
      {
        patron: (list, message) => {
          const page = info64({ charged })(list);
          const from = Number(message.startItem ?? 1) - 1;
          return list === 'charged' ? { ...page, chargedItems: charged.slice(from, from + 2) } : page;
        },
      },
      { pageSize: 2 },
    );
    const docs = await paged.backend.items('p1');
    expect(docs.map((doc) => doc.item)).toEqual(charged.map(I));
    expect(
      paged.sent
        .slice(0, 5)
        .map((m) => (m.code === '63' ? `63:${m.startItem}` : m.code === '17' ? `17:${m.itemIdentifier}` : m.code)),
    ).toEqual(['63:1', '63:3', '63:5', '17:a', '17:b']);
    expect(itemsAsked(paged.sent)).toHaveLength(5);
  });

  it("asks for every list it needs before any 17 of the first page's loans: lists name more items to ask about", async () => {
    // alice's shape: three loans (one overdue), a hold ready, a hold pending; the pool bound of the demo, 4.
    const lists: Lists = { charged: ['c1', 'c2', 'c3'], overdue: ['c1'], hold: ['h1'], unavailableHold: ['u1'] };
    const { backend, sent } = makeBackend({ patron: info64(lists) }, { maxParallel: 4 });
    const docs = await backend.items('p1');
    expect(docs.map((doc) => doc.item)).toEqual(['c1', 'c2', 'c3', 'h1', 'u1'].map(I));
    const order = sent.map((m) =>
      m.code === '63' ? `63:${m.summary}` : `${m.code}:${(m as { itemIdentifier?: string }).itemIdentifier}`,
    );
    // The charged list's first page alone, then the three other lists take three of the four slots at once: the
    // 17s fill the rest, so the call needs three round trips (the first page, lists + a 17, the other 17s), not four.
    expect(order[0]).toBe('63:charged');
    expect(order.slice(1, 4).sort()).toEqual(['63:hold', '63:overdue', '63:unavailableHold']);
    expect(order.slice(4).every((each) => each.startsWith('17:'))).toBe(true);
  });

  it('asks about the entries of every list as it arrives, not once all lists are in', async () => {
    const slow = slowPendingHolds(loadDialect('generic'));
    expect(await slow.itemsAsked()).toEqual([
      'c1 before the pending holds',
      'h1 before the pending holds',
      'u1 after the pending holds',
    ]);
  });

  it('a call failing on a charged page leaves no list read unhandled (the hold list fails too, later)', async () => {
    const { backend } = makeBackend(
      {
        patron: (list, message) => {
          if (list === 'charged' && message.startItem === '2') throw new Error('page 2 lost');
          if (list === 'hold') throw new Error('hold list lost');
          const page = info64({ charged: ['a', 'b'], hold: ['c'] })(list);
          return list === 'charged' ? { ...page, chargedItems: ['a'] } : page;
        },
      },
      { pageSize: 1 },
    );
    await expect(backend.items('p1')).rejects.toThrow('page 2 lost');
    // Long enough for the hold list's failure to arrive: vitest fails the run on an unhandled rejection.
    await new Promise((resolve) => setTimeout(resolve, 20));
  });

  it('an ILS writing 0 counts for a patron with holds and no loans: a dialect that trusts counts misses them (nothing contradicts the counts), one that does not finds them', async () => {
    const zeroCounts = info64(
      { hold: ['c', 'd'], unavailableHold: ['d'] },
      { holdItemsCount: 0, unavailableHoldsCount: 0 },
    );
    const trusting = makeBackend({ patron: zeroCounts });
    expect(await trusting.backend.items('p1')).toEqual([]);
    const careful = makeBackend({ patron: zeroCounts }, { dialect: UNRELIABLE });
    expect((await careful.backend.items('p1')).map((doc) => doc.item)).toEqual([I('c'), I('d')]);
  });
});

describe('Sip2Backend: identical reads of concurrent calls', () => {
  const lists = { charged: ['a', 'b'], hold: ['c'] };

  it('two items calls of one patron at once cost one set of messages, without the item cache', async () => {
    const alone = makeBackend({ patron: info64(lists), delayMs: 10 });
    await alone.backend.items('p1');
    const { backend, sent } = makeBackend({ patron: info64(lists), delayMs: 10 });
    const [one, two] = await Promise.all([backend.items('p1'), backend.items('p1')]);
    expect(two).toEqual(one);
    expect(sent.map((m) => m.code)).toEqual(alone.sent.map((m) => m.code));
  });

  it('never shares the reads of two patrons, nor two logins of one', async () => {
    const { backend, sent } = makeBackend({ patron: info64(lists), delayMs: 10 });
    await Promise.all([backend.items('p1'), backend.items('p2')]);
    expect(sent.filter((m) => m.code === '63' && m.patronIdentifier === 'p2')).toHaveLength(2);
    expect(sent.filter((m) => m.code === '63' && m.patronIdentifier === 'p1')).toHaveLength(2);
    const before = sent.length;
    await Promise.all([backend.login('p1', 'pw'), backend.login('p1', 'pw')]);
    expect(sent.slice(before).map((m) => m.code)).toEqual(['63', '63']);
  });
});

describe('Sip2Backend with the item cache', () => {
  const itemsSent = (sent: RequestMessage[]) =>
    sent.filter((m) => m.code === '17').map((m) => (m as { itemIdentifier: string }).itemIdentifier);

  it('a second items call sends the lists again but no 17', async () => {
    const { backend, sent } = makeBackend(
      { patron: info64({ charged: ['a', 'b'], hold: ['c'] }) },
      { itemCache: new ItemInfoCache({ ttlMs: 60_000, maxEntries: 100 }), dialect: UNRELIABLE },
    );
    const first = await backend.items('p1');
    const second = await backend.items('p1');
    expect(second).toEqual(first);
    expect(itemsSent(sent)).toEqual(['a', 'b', 'c']);
    expect(sent.filter((m) => m.code === '63')).toHaveLength(10);
  });

  it('renew, request and cancel drop exactly their items, whatever the outcome', async () => {
    const cache = new ItemInfoCache({ ttlMs: 60_000, maxEntries: 100 });
    const { backend, sent } = makeBackend(
      {
        patron: info64({ charged: ['a', 'b', 'c', 'd', 'e'] }),
        renew: (barcode) => {
          if (barcode === 'b') throw new IlsTimeout('response-timeout', 'no answer', { requestSent: true });
          return renewOk(barcode);
        },
        hold: (mode) => holdAnswer(mode === '+'),
      },
      { itemCache: cache },
    );
    await backend.items('p1');
    await backend.renew('p1', [{ item: I('a') }, { item: I('b') }]);
    await backend.request('p1', [{ item: I('c') }, { edition: 'https://x.org/t/t1' }]);
    await backend.cancel('p1', [{ item: I('d') }]);
    await backend.items('p1');
    expect(itemsSent(sent)).toEqual(['a', 'b', 'c', 'd', 'e', 'a', 'b', 'c', 'd']);
    // b's renewal may still happen at the ILS: b is asked for every time (for one TTL), the others come from the cache.
    await backend.items('p1');
    expect(itemsSent(sent).slice(9)).toEqual(['b']);
  });

  it("tells the shared reads of each write's item and patron when the write goes out and when it has settled", async () => {
    const reads = new SharedReads();
    const forgotten: unknown[] = [];
    const forget = reads.forget.bind(reads);
    reads.forget = (subject) => {
      forgotten.push(subject);
      forget(subject);
    };
    const { backend } = makeBackend(
      { renew: renewOk, hold: (mode) => holdAnswer(mode === '+') },
      { sharedReads: reads },
    );
    await backend.renew('p1', [{ item: I('a') }]);
    expect(forgotten).toEqual([
      { item: 'a', patron: 'p1' },
      { item: 'a', patron: 'p1' },
    ]);
    forgotten.length = 0;
    await backend.request('p1', [{ edition: 'https://x.org/t/t1' }]);
    expect(forgotten).toEqual([
      { item: undefined, patron: 'p1' },
      { item: undefined, patron: 'p1' },
    ]);
  });
});

describe('Sip2Backend login and patron', () => {
  it('login needs BL=Y and CQ=Y', async () => {
    const cases: Array<[Partial<PatronInformationResponse>, boolean]> = [
      [{ validPatron: true, validPatronPassword: true }, true],
      [{ validPatron: true, validPatronPassword: false }, false],
      [{ validPatron: true }, false],
      [{ validPatron: false, validPatronPassword: true }, false],
      [{ validPatronPassword: true }, false],
    ];
    for (const [fields, ok] of cases) {
      const { backend } = makeBackend({ patron: info64({}, { validPatron: undefined, ...fields }) });
      expect((await backend.login('p1', 'pw')).ok).toBe(ok);
    }
  });

  it('login: an encode error is a failed login, a backend error is thrown', async () => {
    const encode = makeBackend({
      patron: () => {
        throw new Sip2EncodeError('patronPassword', 'bad');
      },
    });
    expect(await encode.backend.login('p1', 'x')).toEqual({ ok: false });
    const down = makeBackend({
      patron: () => {
        throw new IlsUnavailable('refused', 'refused');
      },
    });
    await expect(down.backend.login('p1', 'x')).rejects.toMatchObject({
      name: 'BackendFailure',
      kind: 'unavailable',
      reason: 'refused',
    });
  });

  // VuFind PAIA.php checkRequestIsValid: status 0, expires after today, write_items.
  it('patron: expiresWhenUnknown is the expires of an active account whose 64 has no expiry date', async () => {
    const patron = async (dialect: string, extra: Partial<PatronInformationResponse>, setting: string | null) => {
      const { backend } = makeBackend(
        { patron: info64({}, extra) },
        { dialect: loadDialect(dialect), expiresWhenUnknown: setting },
      );
      return backend.patron('p1');
    };
    const fees = { patronStatus: { ...noPatronFlags(), excessiveOutstandingFines: true } };
    // folio sends no expiry field at all.
    expect(await patron('folio', {}, '9999-12-31')).toEqual({ name: 'P One', status: 0, expires: '9999-12-31' });
    expect(await patron('folio', {}, null)).toEqual({ name: 'P One', status: 0 });
    // Not for an account that is not active: VuFind must not offer it a form either.
    expect(await patron('folio', fees, '9999-12-31')).toEqual({ name: 'P One', status: 3 });
    // generic reads PA: the ILS's date wins; an empty PA is no date.
    expect((await patron('generic', { extra: [['PA', '20270101']] }, '9999-12-31'))?.expires).toBe('2027-01-01');
    expect((await patron('generic', { extra: [['PA', '']] }, '9999-12-31'))?.expires).toBe('9999-12-31');
    expect((await patron('generic', {}, null))?.expires).toBeUndefined();
  });

  it('patron: email only when it is one; no AD sent', async () => {
    const { backend, sent } = makeBackend({ patron: info64({}, { emailAddress: 'not an email', homeAddress: '  ' }) });
    const record = await backend.patron('p1');
    expect(record).toEqual({ name: 'P One', status: 0 });
    expect(sent[0]).toMatchObject({ code: '63', summary: null });
    expect((sent[0] as { patronPassword?: string }).patronPassword).toBeUndefined();
  });
});

describe('Sip2Backend writes', () => {
  it('maps renew answers, refusals and unknown documents', async () => {
    const { backend, sent } = makeBackend({
      renew: (barcode) =>
        barcode === 'ok'
          ? renewOk(barcode)
          : { ...renewOk(barcode), ok: false, renewalOk: false, dueDate: '', screenMessage: ['Renewal limit reached'] },
    });
    const docs = await backend.renew('p1', [
      { item: I('ok') },
      { item: I('no') },
      { item: 'https://y.org/i/ok' },
      { edition: 'https://x.org/t/t1' },
    ]);
    expect(docs).toEqual([
      { status: 3, item: I('ok'), requested: I('ok'), about: 'Title ok', duedate: '2026-04-12', endtime: '2026-04-12' },
      { status: 3, item: I('no'), requested: I('no'), error: 'Renewal limit reached' },
      { status: 0, item: 'https://y.org/i/ok', requested: 'https://y.org/i/ok', error: 'unknown item' },
      { status: 0, edition: 'https://x.org/t/t1', requested: 'https://x.org/t/t1', error: 'renewal needs an item URI' },
    ]);
    expect(sent.filter((m) => m.code === '29')).toHaveLength(2);
  });

  it('sends the writes of one call in parallel', async () => {
    const { backend, maxInFlight } = makeBackend({ renew: renewOk, delayMs: 20 });
    await backend.renew('p1', [{ item: I('a') }, { item: I('b') }, { item: I('c') }]);
    expect(maxInFlight()).toBe(3);
  });

  it('reports an unknown outcome per document when another document was confirmed', async () => {
    const { backend, sent } = makeBackend({
      renew: (barcode) => {
        if (barcode === 'hang') throw new IlsTimeout('response-timeout', 'no answer', { requestSent: true });
        if (barcode === 'busy') throw new PoolRefused('queue-full', 'queue full');
        return renewOk(barcode);
      },
    });
    const docs = await backend.renew('p1', [{ item: I('hang') }, { item: I('busy') }, { item: I('ok') }]);
    expect(docs[0]).toMatchObject({
      status: 3,
      item: I('hang'),
      error: expect.stringMatching(/outcome unknown.*check your items/),
    });
    expect(docs[1]).toMatchObject({ status: 3, item: I('busy'), error: expect.stringMatching(/not sent/) });
    expect(docs[2]).toMatchObject({ status: 3, duedate: '2026-04-12' });
    expect(sent.filter((m) => m.code === '29')).toHaveLength(3);
  });

  it('an unknown document next to a failed one: reported per document', async () => {
    const { backend } = makeBackend({
      renew: () => {
        throw new IlsTimeout('response-timeout', 'no answer', { requestSent: true });
      },
    });
    const docs = await backend.renew('p1', [{ item: 'urn:x' }, { item: I('a') }]);
    expect(docs.map((doc) => doc.error)).toEqual(['unknown item', expect.stringMatching(/outcome unknown/)]);
  });

  it('throws the first backend error when no document reached the library system', async () => {
    const { backend } = makeBackend({
      hold: (_, target) => {
        throw target.item === 'a'
          ? new IlsUnavailable('refused', 'refused', { requestSent: false })
          : new PoolRefused('queue-full', 'full');
      },
    });
    const error = await backend.request('p1', [{ item: I('a') }, { item: I('b') }]).catch((e: unknown) => e);
    // Its contract: the backend's own failure, telling the request was not sent.
    expect(error).toBeInstanceOf(BackendFailure);
    expect(error).toMatchObject({ kind: 'unavailable', reason: 'refused', requestSent: false });
  });

  it('never turns a write that may have happened into a request error, even when every document failed', async () => {
    const { backend } = makeBackend({
      hold: (_, target) => {
        throw target.item === 'a'
          ? new IlsUnavailable('reset', 'reset', { requestSent: true })
          : new PoolRefused('queue-full', 'full');
      },
    });
    const docs = await backend.request('p1', [{ item: I('a') }, { item: I('b') }]);
    expect(docs.map((doc) => doc.error)).toEqual([
      expect.stringMatching(/outcome unknown/),
      expect.stringMatching(/not sent/),
    ]);
  });

  it('rethrows what is not a backend error (a bug), and treats an unencodable value as an unknown document', async () => {
    const bug = makeBackend({
      renew: () => {
        throw new TypeError('oops');
      },
    });
    await expect(bug.backend.renew('p1', [{ item: I('a') }])).rejects.toBeInstanceOf(TypeError);
    const encode = makeBackend({
      renew: () => {
        throw new Sip2EncodeError('itemIdentifier', 'contains |');
      },
    });
    expect(await encode.backend.renew('p1', [{ item: I('a%7Cb') }])).toEqual([
      { status: 0, item: I('a%7Cb'), requested: I('a%7Cb'), error: 'unknown item' },
    ]);
  });

  it('request: item or edition, pickup from storageid or storage, queue from BR, refusals rejected', async () => {
    const targets: Array<{ item?: string; title?: string; pickup?: string }> = [];
    const { backend } = makeBackend(
      {
        hold: (_mode, target) => {
          targets.push(target);
          if (target.item === 'lost') return holdAnswer(false, { screenMessage: ['Item is lost'] });
          return holdAnswer(true, { queuePosition: '2', pickupLocation: target.pickup ?? 'MAIN' });
        },
      },
      { uris: { ...URIS, storage: 'https://x.org/l/{location}' } },
    );
    const docs = await backend.request('p1', [
      { item: I('a'), storageid: 'https://x.org/l/BRANCH', storage: 'ignored' },
      { edition: 'https://x.org/t/t1', storage: 'Main desk' },
      { item: I('lost') },
      { item: I('c'), storageid: 'https://y.org/l/X' },
      { item: I('d'), storageid: 'https://y.org/l/X', storage: 'MAIN' },
    ]);
    expect(docs).toEqual([
      { status: 1, item: I('a'), requested: I('a'), queue: 2, storage: 'BRANCH', storageid: 'https://x.org/l/BRANCH' },
      {
        status: 1,
        edition: 'https://x.org/t/t1',
        requested: 'https://x.org/t/t1',
        queue: 2,
        storage: 'Main desk',
        storageid: 'https://x.org/l/Main%20desk',
      },
      { status: 5, item: I('lost'), requested: I('lost'), error: 'Item is lost' },
      { status: 5, item: I('c'), requested: I('c'), error: 'unknown pickup location' },
      { status: 1, item: I('d'), requested: I('d'), queue: 2, storage: 'MAIN', storageid: 'https://x.org/l/MAIN' },
    ]);
    expect(targets).toEqual([
      { item: 'a', title: undefined, pickup: 'BRANCH' },
      { item: undefined, title: 't1', pickup: 'Main desk' },
      { item: 'lost', title: undefined, pickup: undefined },
      { item: 'd', title: undefined, pickup: 'MAIN' },
    ]);
  });

  it('cancel: ok is 0, refused is 1 with the reason', async () => {
    const { backend, sent } = makeBackend({
      hold: (_, target) => holdAnswer(target.item === 'a', target.item === 'a' ? {} : { screenMessage: ['No hold'] }),
    });
    expect(await backend.cancel('p1', [{ item: I('a') }, { item: I('b') }, {}])).toEqual([
      { status: 0, item: I('a'), requested: I('a') },
      { status: 1, item: I('b'), requested: I('b'), error: 'No hold' },
      { status: 0, error: 'the document has neither an item nor an edition URI' },
    ]);
    expect(sent.every((m) => m.code !== '15' || (m as { holdMode: string }).holdMode === '-')).toBe(true);
  });
});

describe('Sip2Backend fees and logout', () => {
  function capture() {
    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        callback();
      },
    });
    return { logger: pino({ level: 'debug' }, stream), lines };
  }

  it('logs entries that do not fit the dialect, without their text, and leaves them out', async () => {
    const { logger, lines } = capture();
    const { backend } = makeBackend(
      {
        patron: info64(
          {
            fine: [
              '2.50 EUR overdue 20260301 it-1 Der Zauberberg',
              'Secret Title owes money',
              '1.00 EUR lost 20260302 - Card',
            ],
          },
          { feeAmount: '3.50', currencyType: 'EUR' },
        ),
      },
      { logger },
    );
    const fees = await backend.fees('p1');
    expect(fees).toEqual({
      amount: '3.50 EUR',
      fee: [
        { amount: '2.50 EUR', date: '2026-03-01', about: 'Der Zauberberg', item: I('it-1'), feetype: 'overdue' },
        { amount: '1.00 EUR', date: '2026-03-02', about: 'Card', feetype: 'lost' },
      ],
    });
    await new Promise((resolve) => setImmediate(resolve));
    const warnings = lines.filter((line) => line.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      unparsed: 1,
      parsed: 2,
      reasons: { pattern: 1 },
      examples: [{ index: 1, reason: 'pattern', shape: 'Aaaaaa Aaaaa aaaa aaaaa' }],
    });
    // no patron identifier in the log: in opaque mode barcodes must stay out of logs
    expect(JSON.stringify(warnings[0])).not.toContain('p1');
    expect(JSON.stringify(lines)).not.toContain('Secret');
  });

  it('without BV: the sum of the entries; without BH: the configured currency', async () => {
    const { backend } = makeBackend(
      {
        patron: info64({ fine: ['overdue 20260301 a T 2.50', 'lost 20260301 b U -1.00'] }, { currencyType: undefined }),
      },
      { dialect: loadDialect('koha'), currency: 'CHF' },
    );
    const fees = await backend.fees('p1');
    expect(fees.amount).toBe('1.50 CHF');
    expect(fees.fee.map((fee) => fee.amount)).toEqual(['2.50 CHF', '-1.00 CHF']);
  });

  it('logout swallows failures', async () => {
    const { logger, lines } = capture();
    const { backend } = makeBackend(
      {},
      { logger, send: (() => Promise.reject(new IlsTimeout('response-timeout', 'x'))) as Sip2BackendOptions['send'] },
    );
    await expect(backend.logout('p1')).resolves.toBeUndefined();
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.some((line) => line.level === 40)).toBe(true);
  });
});

describe('helpers', () => {
  it('reads hold (position 14) and renew (position 15) support from the 98 BX', () => {
    expect(acsSupportsOf({ supportedMessages: 'YNNNYYYYYYYNNYNY' }, 'hold')).toBe(true);
    expect(acsSupportsOf({ supportedMessages: 'YNNNYYYYYYYNNYNY' }, 'renew')).toBe(false);
    expect(acsSupportsOf({ supportedMessages: 'YYYYYYYYYYYYYNYY' }, 'hold')).toBe(false);
    expect(acsSupportsOf({ supportedMessages: 'YYYYYYYYYYYYYNYY' }, 'renew')).toBe(true);
    expect(acsSupportsOf({ supportedMessages: 'YYY' }, 'hold')).toBeUndefined();
    expect(acsSupportsOf({ supportedMessages: 'YYYYYYYYYYYYYY' }, 'renew')).toBeUndefined();
    expect(acsSupportsOf(null, 'renew')).toBeUndefined();
  });

  it('the limiter never runs more than its bound, and hands slots over in order', async () => {
    const limit = limiter(2);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        limit(async () => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((resolve) => setTimeout(resolve, 2));
          order.push(i);
          running--;
        }),
      ),
    );
    expect(peak).toBe(2);
    expect(order).toHaveLength(10);
    expect(() => limiter(0)).toThrow();
  });

  it('refuses bad options', () => {
    const base = {
      send: (() => Promise.reject(new Error())) as Sip2BackendOptions['send'],
      messages: new Sip2Messages({ institutionId: 'X' }),
      dialect: loadDialect('generic'),
      pageSize: 10,
      currency: 'EUR',
      uris: URIS,
    };
    expect(() => new Sip2Backend({ ...base, currency: 'eur' })).toThrow(/currency/);
    expect(() => new Sip2Backend({ ...base, pageSize: 0 })).toThrow(/pageSize/);
    for (const bad of ['2026-02-30', '31.12.9999', '99991231', '2026-1-1'])
      expect(() => new Sip2Backend({ ...base, expiresWhenUnknown: bad }), bad).toThrow(/expiresWhenUnknown/);
    expect(() => new Sip2Backend({ ...base, uris: { ...URIS, item: 'https://x.org/{title}' } })).toThrow(/template/);
  });
});
