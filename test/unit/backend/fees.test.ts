import { describe, expect, it } from 'vitest';
import type { Fine } from '../../../sip2-simulator/src/library.js';
import { fineText } from '../../../sip2-simulator/src/profile-responses.js';
import { feeRecord, parseFee, type UnparsedSummary } from '../../../src/backend/fees.js';
import { readAmountInText } from '../../../src/backend/money.js';
import { compileUriTemplates } from '../../../src/backend/uris.js';
import { noPatronFlags } from '../../../src/sip2/codec.js';
import { sip2DateFrom } from '../../../src/sip2/date.js';
import { BUILTIN_DIALECTS, type DialectName, loadDialect } from '../../../src/sip2/dialect.js';
import type { PatronInformationResponse } from '../../../src/sip2/spec.js';

const URIS = compileUriTemplates({
  item: 'https://x.org/i/{barcode}',
  edition: 'https://x.org/t/{title}',
  storage: null,
  patronType: null,
});
const I = (barcode: string) => `https://x.org/i/${barcode}`;

function first(extra: Partial<PatronInformationResponse> = {}): PatronInformationResponse {
  return {
    code: '64',
    patronStatus: noPatronFlags(),
    language: '000',
    transactionDate: sip2DateFrom(new Date(2026, 2, 15)),
    holdItemsCount: 0,
    overdueItemsCount: 0,
    chargedItemsCount: 0,
    fineItemsCount: 0,
    recallItemsCount: 0,
    unavailableHoldsCount: 0,
    institutionId: 'X',
    patronIdentifier: 'p1',
    personalName: 'P',
    validPatron: true,
    ...extra,
  };
}

function fees(dialect: DialectName, entries: string[], extra: Partial<PatronInformationResponse> = {}) {
  const reports: UnparsedSummary[] = [];
  const record = feeRecord(first(extra), entries, { dialect: loadDialect(dialect), uris: URIS, currency: 'USD' }, (s) =>
    reports.push(s),
  );
  return { record, reports };
}

describe('readAmountInText', () => {
  it('reads the one two-decimal amount and never a barcode, id, year or date', () => {
    const cases: Array<[string, bigint | null]> = [
      ['Overdue fine 30002 2.50', 250n],
      ['2.50 Overdue materials Der Zauberberg / Mann, Thomas', 250n],
      ['Amount-Due: 12.00, Title: x', 1200n],
      ['Mahngebühr 1,50', 150n],
      ['Credit -1.00 refund', -100n],
      ['$3.75 replacement', 375n],
      ['Lost item 30003 (2019) 12.00', 1200n],
      ['Overdue fine 30002', null], // whole numbers are never amounts
      ['Computer Time', null],
      ['due 01.08.2019', null], // a date, not 01.08
      ['Version 1.2.30', null],
      ['renewed 2026-11-01', null],
      ['it-12.50 lost', null], // part of an identifier
      ['2.5 hours', null], // one decimal
      ['Fine 2.50 for Faust 2.10', null], // two candidates, none marked: ambiguous
      ['Fine EUR 2.50 for Faust 2.10', 250n], // the one marked with a currency wins
      ['Faust 2.10, fine 2.50 €', 250n],
      ['', null],
    ];
    for (const [text, cents] of cases) expect(readAmountInText(text), text).toBe(cents);
  });
});

describe('feeRecord', () => {
  it('lists an entry no pattern reads when its text carries one amount, the text as about', () => {
    const { record, reports } = fees('generic', ['Overdue fine 30002 2.50', 'Processing fee 1.00'], {
      feeAmount: '3.50',
      currencyType: 'EUR',
    });
    expect(record).toEqual({
      amount: '3.50 EUR',
      fee: [
        { amount: '2.50 EUR', about: 'Overdue fine 30002 2.50' },
        { amount: '1.00 EUR', about: 'Processing fee 1.00' },
      ],
    });
    expect(reports).toEqual([]);
  });

  it('skips empty padding entries silently and reports the rest once per call, by shape only', () => {
    const padding = Array.from({ length: 49 }, () => '');
    const { record, reports } = fees('generic', ['Secret Title 4711', ...padding, ' ', 'Computer Time'], {
      feeAmount: '9.00',
    });
    expect(record).toEqual({ amount: '9.00 USD', fee: [] });
    expect(reports).toEqual([
      {
        unparsed: 2,
        parsed: 0,
        reasons: { pattern: 2 },
        examples: [
          { index: 0, reason: 'pattern', shape: 'Aaaaaa Aaaaa 9999' },
          { index: 51, reason: 'pattern', shape: 'Aaaaaaaa Aaaa' },
        ],
      },
    ]);
    expect(JSON.stringify(reports)).not.toContain('Secret');
  });

  it('without BV: the sum when every entry was read, no amount when any was not', () => {
    expect(fees('koha', ['Overdue fine 30002 2.50', '', 'Lost item 12.00']).record.amount).toBe('14.50 USD');
    const partial = fees('koha', ['Overdue fine 30002 2.50', 'Computer Time']);
    expect(partial.record).toEqual({ fee: [{ amount: '2.50 USD', about: 'Overdue fine 30002' }] });
    expect('amount' in partial.record).toBe(false);
    expect(partial.reports[0]).toMatchObject({ unparsed: 1, parsed: 1 });
    // BV is the ILS's own total: it stands even when entries could not be read.
    expect(fees('koha', ['Computer Time'], { feeAmount: '15.5' }).record).toEqual({ amount: '15.50 USD', fee: [] });
  });

  it('takes the currency from BH, then from the configuration', () => {
    expect(fees('koha', ['Fine 1.00'], { currencyType: 'chf' }).record).toEqual({
      amount: '1.00 CHF',
      fee: [{ amount: '1.00 CHF', about: 'Fine' }],
    });
    expect(fees('koha', ['Fine 1.00'], { currencyType: '$' }).record.amount).toBe('1.00 USD');
  });

  it('reads BV as Perl and Java write it', () => {
    expect(fees('koha', [], { feeAmount: '15.5' }).record.amount).toBe('15.50 USD');
    expect(fees('folio', [], { feeAmount: '12.0' }).record.amount).toBe('12.00 USD');
    expect(fees('koha', [], { feeAmount: '12' }).record.amount).toBe('12.00 USD');
  });
});

describe("the simulator profiles' fine formats, read by the shipped dialects", () => {
  const fine = (over: Partial<Fine>): Fine => ({
    id: 'f-1',
    patron: 'p',
    amountCents: 250,
    type: 'overdue',
    date: new Date(2026, 0, 5),
    item: '30002',
    about: 'Der Zauberberg',
    ...over,
  });
  const overdue = fine({});
  const note = fine({ id: 'f-2', amountCents: 100, type: 'processing', item: undefined, about: 'Processing fee' });
  const read = (text: string, dialect: DialectName) => {
    const result = parseFee(text, 'EUR', { dialect: loadDialect(dialect), uris: URIS });
    return 'fee' in result ? result.fee : result;
  };

  it('koha: the default av_field_template, by pattern', () => {
    expect(read(fineText(fine({ about: 'Overdue fine 30002' }), 'koha')!, 'koha')).toEqual({
      amount: '2.50 EUR',
      about: 'Overdue fine 30002',
    });
    expect(read(fineText(note, 'koha')!, 'koha')).toEqual({ amount: '1.00 EUR', about: 'Processing fee' });
  });

  it('evergreen: eg_legacy, 3m/swyer_a and swyer_b, by pattern', () => {
    expect(read(fineText(overdue, 'eg-legacy')!, 'evergreen')).toEqual({
      amount: '2.50 EUR',
      about: 'Overdue materials Der Zauberberg',
    });
    expect(read(fineText(note, 'eg-legacy')!, 'evergreen')).toEqual({
      amount: '1.00 EUR',
      about: 'processing Processing fee',
    });
    expect(read(fineText(overdue, 'eg-3m')!, 'evergreen')).toEqual({
      amount: '2.50 EUR',
      about: 'Der Zauberberg',
      feetype: 'FINE',
    });
    expect(read(fineText(note, 'eg-swyer-b')!, 'evergreen')).toEqual({
      amount: '1.00 EUR',
      about: 'Processing fee',
      feetype: 'FEE',
    });
    expect(read('17 $2.50 "Der Zauberberg"', 'evergreen')).toEqual({ amount: '2.50 EUR', about: 'Der Zauberberg' });
  });

  it('every dialect still reads a Koha or Evergreen text by its one amount', () => {
    for (const dialect of ['generic', 'folio'] as const) {
      expect(read('Overdue fine 30002 2.50', dialect)).toEqual({
        amount: '2.50 EUR',
        about: 'Overdue fine 30002 2.50',
      });
      expect(read(fineText(overdue, 'eg-swyer-b')!, dialect)).toMatchObject({ amount: '2.50 EUR' });
    }
  });

  it('sipserver and folio texts carry no amount: left out, for BV or no total to speak', () => {
    for (const dialect of BUILTIN_DIALECTS) {
      expect(read(fineText(overdue, 'sipserver')!, dialect)).toEqual({ reason: 'pattern' });
      expect(read(fineText(overdue, 'folio')!, dialect)).toEqual({ reason: 'pattern' });
    }
  });

  it('keeps an item and date where the format carries them', () => {
    expect(read('overdue 20260105 30002 Der Zauberberg 2.50', 'koha')).toEqual({
      amount: '2.50 EUR',
      about: 'Der Zauberberg',
      item: I('30002'),
      date: '2026-01-05',
      feetype: 'overdue',
    });
  });
});
