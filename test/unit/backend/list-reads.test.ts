/**
 * The list-reading strategy on its own (list-reads.ts): which 63s an items or fees call sends, in what order
 * with its 17s, against a fake ILS that pages as asked (BP/BQ). What the backend makes of the lists is
 * tested through Sip2Backend (sip2-backend.test.ts).
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ListReads, type ListReadsOptions } from '../../../src/backend/list-reads.js';
import { noPatronFlags } from '../../../src/sip2/codec.js';
import { sip2DateFrom } from '../../../src/sip2/date.js';
import { type Dialect, loadDialect } from '../../../src/sip2/dialect.js';
import { Sip2Messages } from '../../../src/sip2/messages.js';
import type { PatronInformation, PatronInformationResponse, SummaryList } from '../../../src/sip2/spec.js';

const NOW = new Date(2026, 2, 15, 12, 0, 0);
const DATE = sip2DateFrom(NOW);
const FIELD = {
  charged: ['chargedItems', 'chargedItemsCount'],
  overdue: ['overdueItems', 'overdueItemsCount'],
  recall: ['recallItems', 'recallItemsCount'],
  hold: ['holdItems', 'holdItemsCount'],
  unavailableHold: ['unavailableHoldItems', 'unavailableHoldsCount'],
  fine: ['fineItems', 'fineItemsCount'],
} as const satisfies Record<SummaryList, readonly [keyof PatronInformationResponse, keyof PatronInformationResponse]>;

type Lists = Partial<Record<SummaryList, string[]>>;

/** A 64 of `lists`, the asked list's entries sliced by BP/BQ; `counts` overrides the announced counts. */
function answer64(
  lists: Lists,
  message: PatronInformation,
  counts: Partial<PatronInformationResponse>,
): PatronInformationResponse {
  const response: Record<string, unknown> = {
    code: '64',
    patronStatus: noPatronFlags(),
    language: '000',
    transactionDate: DATE,
    institutionId: 'X',
    patronIdentifier: message.patronIdentifier,
    personalName: 'P One',
    validPatron: message.patronIdentifier !== 'nobody',
  };
  for (const [list, [entries, count]] of Object.entries(FIELD)) {
    response[count] = lists[list as SummaryList]?.length ?? 0;
    if (message.summary === list) {
      const start = Number(message.startItem ?? 1);
      const end = Number(message.endItem ?? 9999);
      response[entries] = (lists[list] ?? []).slice(start - 1, end);
    }
  }
  return { ...(response as unknown as PatronInformationResponse), ...counts };
}

/** What was sent, in order: "charged:1-1" for a 63 (list and BP-BQ), "17 a" for a lookup. */
function reads(
  lists: Lists,
  options: Partial<ListReadsOptions> & { counts?: Partial<PatronInformationResponse> } = {},
) {
  const sent: string[] = [];
  const later = () => new Promise((resolve) => setImmediate(resolve));
  const reader = new ListReads({
    send: async (message) => {
      sent.push(`${message.summary}:${message.startItem}-${message.endItem}`);
      await later();
      return answer64(lists, message, options.counts ?? {});
    },
    itemInformation: async (item) => {
      sent.push(`17 ${item}`);
      await later();
      return {
        code: '18',
        circulationStatus: 4,
        securityMarker: 2,
        feeType: 1,
        transactionDate: DATE,
        itemIdentifier: item,
        titleIdentifier: `Title ${item}`,
      };
    },
    messages: new Sip2Messages({ institutionId: 'X', now: () => NOW }),
    dialect: loadDialect('generic'),
    pageSize: 50,
    maxListEntries: 10_000,
    maxParallel: 32,
    ...options,
  });
  return { reader, sent };
}

const UNRELIABLE: Dialect = { ...loadDialect('generic'), listCounts: 'unreliable' };
const lists63 = (sent: string[]) => sent.filter((line) => !line.startsWith('17'));

describe('ListReads: the lists of an items call', () => {
  it('counts to be trusted: the charged first page alone, then only the lists whose count is not 0', async () => {
    const { reader, sent } = reads({ charged: ['a', 'b'], hold: ['h'] });
    const read = await reader.items('p1', {});
    expect(lists63(sent)).toEqual(['charged:1-50', 'hold:1-50']);
    expect(read?.lists.charged.entries).toEqual(['a', 'b']);
    expect(read?.lists.hold.entries).toEqual(['h']);
    expect(read?.lists.overdue.entries).toEqual([]);
    // Every entry already asked about once, while the lists were read; the call's lookup gives the same answer.
    expect(sent.filter((line) => line.startsWith('17')).sort()).toEqual(['17 a', '17 b', '17 h']);
    expect((await read?.lookup('a'))?.itemIdentifier).toBe('a');
    expect(sent.filter((line) => line === '17 a')).toHaveLength(1);
  });

  it('counts not to be trusted: all five lists at once, whatever the counts say', async () => {
    const { reader, sent } = reads({ charged: ['a'] }, { dialect: UNRELIABLE });
    await reader.items('p1', {});
    expect(lists63(sent).slice(0, 5)).toEqual([
      'charged:1-50',
      'overdue:1-50',
      'recall:1-50',
      'hold:1-50',
      'unavailableHold:1-50',
    ]);
  });

  it('a list the dialect puts inside the charged one is read only when the charged list came back short', async () => {
    const koha = loadDialect('koha');
    expect(koha.chargedIncludes).toContain('overdue');
    const complete = reads({ charged: ['a'], overdue: ['a'] }, { dialect: koha });
    await complete.reader.items('p1', {});
    expect(lists63(complete.sent)).toEqual(['charged:1-50']);

    const short = reads({ charged: ['a'], overdue: ['z'] }, { dialect: koha, counts: { chargedItemsCount: 2 } });
    const read = await short.reader.items('p1', {});
    expect(lists63(short.sent)).toContain('overdue:1-50');
    expect(read?.lists.overdue.entries).toEqual(['z']);
  });

  it('counts contradicted by the first page (0 announced, entries listed): every list is read, with one warning', async () => {
    const warnings: string[] = [];
    const logger = pino(
      { level: 'warn' },
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          warnings.push(String((JSON.parse(chunk.toString()) as { msg: string }).msg));
          callback();
        },
      }),
    );
    const { reader, sent } = reads({ charged: ['a'], hold: ['h'] }, { logger, counts: { chargedItemsCount: 0 } });
    await reader.items('p1', {});
    await reader.items('p1', {});
    expect(new Set(lists63(sent))).toEqual(
      new Set(['charged:1-50', 'overdue:1-50', 'recall:1-50', 'hold:1-50', 'unavailableHold:1-50']),
    );
    expect(warnings.filter((msg) => /counts cannot be trusted/.test(msg))).toHaveLength(1);
  });

  it('an unknown patron: null, after one 63 (counts trusted) or the five (not trusted)', async () => {
    const trusted = reads({});
    expect(await trusted.reader.items('nobody', {})).toBeNull();
    expect(trusted.sent).toEqual(['charged:1-50']);
    const untrusted = reads({}, { dialect: UNRELIABLE });
    expect(await untrusted.reader.items('nobody', {})).toBeNull();
    expect(untrusted.sent).toHaveLength(5);
  });

  it('one request at a time: every waiting list page goes before every waiting 17', async () => {
    // Page size 1: the hold list's second page is asked for once its first is in, when the 17 of a waits already.
    const { reader, sent } = reads(
      { charged: ['a'], hold: ['h1', 'h2'] },
      { dialect: UNRELIABLE, pageSize: 1, maxParallel: 1 },
    );
    const read = await reader.items('p1', {});
    // The lookups begun while the lists were read; the call awaits them when it makes its documents.
    await Promise.all(['a', 'h1', 'h2'].map((entry) => read?.lookup(entry)));
    expect(sent).toEqual([
      'charged:1-1',
      'overdue:1-1',
      'recall:1-1',
      'hold:1-1',
      'unavailableHold:1-1',
      'hold:2-2',
      '17 a',
      '17 h1',
      '17 h2',
    ]);
  });
});

describe('ListReads: the fines of a fees call', () => {
  it('reads the fine list page by page, at most maxParallel pages at once', async () => {
    const { reader, sent } = reads({ fine: ['f1', 'f2', 'f3'] }, { pageSize: 2, maxParallel: 1 });
    const fines = await reader.fines('p1', {});
    expect(fines.entries).toEqual(['f1', 'f2', 'f3']);
    expect(sent).toEqual(['fine:1-2', 'fine:3-3']);
  });
});
