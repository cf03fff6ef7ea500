import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sip2DateTime } from '../../../src/sip2/date.js';
import {
  BUILTIN_DIALECTS,
  DATE_FORMATS,
  type DateFormat,
  type Dialect,
  type FineItemParts,
  formatDialectDate,
  formatFineItem,
  loadDialect,
  parseDialectDate,
  parseFineItem,
  terminatorOf,
} from '../../../src/sip2/dialect.js';
import { sip2DateArb } from './arbitraries.js';

describe('built-in dialects', () => {
  // The one list a new dialect is added to by hand (besides its file and its README row): everything else reads the files.
  it('are the files of config/dialects/, generic (the default) first', () => {
    expect(BUILTIN_DIALECTS).toEqual(['generic', 'evergreen', 'folio', 'koha']);
  });

  it.each(BUILTIN_DIALECTS)('%s loads and is named after its file', (name) => {
    const dialect = loadDialect(name);
    expect(dialect.name).toBe(name);
    expect(Object.isFrozen(dialect)).toBe(true);
    expect(dialect.pageSize).toBeGreaterThan(0);
    expect(dialect.pageSize).toBeLessThanOrEqual(dialect.listLimit);
  });

  it('carry the settings of their ILS', () => {
    const generic = loadDialect('generic');
    expect(generic).toMatchObject({
      charset: 'cp850',
      terminator: 'CR',
      holdLists: 'all-in-AS',
      dueDateFormat: 'sip2',
    });
    expect(generic.expiry).toEqual({ field: 'PA', format: 'YYYYMMDD' });
    expect(loadDialect('koha')).toMatchObject({ charset: 'utf-8', holdLists: 'ready-in-AS', dueDateFormat: 'sip2' });
    expect(loadDialect('evergreen')).toMatchObject({
      charset: 'utf-8',
      holdLists: 'all-in-AS',
      dueDateFormat: 'YYYY-MM-DD HH:MM:SS',
    });
    expect(loadDialect('folio')).toMatchObject({
      charset: 'utf-8',
      terminator: 'CRLF',
      expiry: null,
      dueDateFormat: 'sip2-utc',
    });
  });

  it('trust their 64 counts, and say which lists are part of the charged list (config/dialects/*.yaml has the sources)', () => {
    expect(
      Object.fromEntries(
        BUILTIN_DIALECTS.map((name) => {
          const { listCounts, chargedIncludes } = loadDialect(name);
          return [name, { listCounts, chargedIncludes }];
        }),
      ),
    ).toEqual({
      generic: { listCounts: 'reliable', chargedIncludes: ['recall'] },
      koha: { listCounts: 'reliable', chargedIncludes: ['overdue'] },
      evergreen: { listCounts: 'reliable', chargedIncludes: ['overdue'] },
      folio: { listCounts: 'reliable', chargedIncludes: ['overdue', 'recall'] },
    });
  });

  it('terminatorOf maps CR and CRLF', () => {
    expect(terminatorOf(loadDialect('generic'))).toBe('\r');
    expect(terminatorOf(loadDialect('folio'))).toBe('\r\n');
  });

  it('an unknown name is a readable error', () => {
    expect(() => loadDialect('sierra')).toThrow(
      `dialect "sierra" not found (built-in dialects: ${BUILTIN_DIALECTS.join(', ')})`,
    );
  });
});

describe('fine items (AV)', () => {
  it.each([
    [
      'generic',
      '2.50 EUR overdue 20261101 it-0001 Der Zauberberg',
      { amount: '2.50', currency: 'EUR', type: 'overdue', date: '20261101', item: 'it-0001', about: 'Der Zauberberg' },
    ],
    [
      'koha',
      'overdue 20261101 it-0001 Der Zauberberg 2.50',
      { type: 'overdue', date: '20261101', item: 'it-0001', about: 'Der Zauberberg', amount: '2.50' },
    ],
    ['evergreen', '17 $2.50 "Der Zauberberg"', { id: '17', amount: '2.50', about: 'Der Zauberberg' }],
    ['folio', '2.50 overdue Der Zauberberg', { amount: '2.50', type: 'overdue', about: 'Der Zauberberg' }],
  ] as const)('%s reads %j', (name, text, parts) => {
    const dialect = loadDialect(name);
    expect(parseFineItem(text, dialect)).toStrictEqual(parts);
    expect(formatFineItem(parts, dialect)).toBe(text);
  });

  it.each([
    ['generic', 'Overdue fine for Der Zauberberg'],
    ['koha', 'overdue 20261101 it-0001 Der Zauberberg'],
    ['evergreen', '17 2.50 "Der Zauberberg"'],
    ['folio', 'EUR 2.50 overdue'],
  ] as const)('%s returns null for %j', (name, text) => {
    expect(parseFineItem(text, loadDialect(name))).toBeNull();
  });

  it('negative amounts (credits) are read too', () => {
    expect(parseFineItem('-1.00 credit Refund', loadDialect('folio'))).toMatchObject({
      amount: '-1.00',
      type: 'credit',
    });
  });

  const token = fc.stringMatching(/^[A-Za-z0-9-]{1,12}$/);
  const about = fc
    .array(fc.constantFrom(...[...'abcXYZ äöüßé 東京 🦊-.,:"']), { maxLength: 40 })
    .map((chars) => chars.join(''));
  const partsArb: fc.Arbitrary<FineItemParts> = fc.record({
    amount: fc
      .tuple(fc.boolean(), fc.nat({ max: 99999 }), fc.nat({ max: 99 }))
      .map(([negative, units, cents]) => `${negative ? '-' : ''}${units}.${String(cents).padStart(2, '0')}`),
    currency: fc.constantFrom('EUR', 'USD', 'GBP'),
    type: token,
    date: fc.integer({ min: 19000101, max: 20991231 }).map(String),
    item: token,
    about,
    id: token,
  });

  /** The groups each dialect's template writes. */
  const GROUPS: Record<string, (keyof FineItemParts)[]> = {
    generic: ['amount', 'currency', 'type', 'date', 'item', 'about'],
    koha: ['type', 'date', 'item', 'about', 'amount'],
    evergreen: ['id', 'amount', 'about'],
    folio: ['amount', 'type', 'about'],
  };

  it.each(BUILTIN_DIALECTS)('%s: parseFineItem(formatFineItem(parts)) gives the parts back', (name) => {
    const dialect = loadDialect(name);
    const groups = GROUPS[name]!;
    fc.assert(
      fc.property(partsArb, (all) => {
        const parts = Object.fromEntries(groups.map((group) => [group, all[group]])) as FineItemParts;
        const text = formatFineItem(parts, dialect);
        expect(text).not.toMatch(/[{}|]/);
        expect(parseFineItem(text, dialect)).toStrictEqual(parts);
      }),
      { numRuns: 300 },
    );
  });
});

describe('dialect dates', () => {
  const due: Sip2DateTime = { year: 2026, month: 12, day: 5, hour: 23, minute: 59, second: 0, zone: '    ' };
  const savedTz = process.env.TZ;
  // local SIP2 dates are the process's local time: pin a zone that is not UTC
  beforeEach(() => {
    process.env.TZ = 'Europe/Berlin';
  });
  afterEach(() => {
    if (savedTz === undefined) delete process.env.TZ;
    else process.env.TZ = savedTz;
  });

  it('sip2-utc converts a local date to UTC (Berlin is UTC+1 in December) and keeps a UTC one', () => {
    expect(formatDialectDate(due, 'sip2-utc')).toBe('20261205   Z225900');
    expect(formatDialectDate({ ...due, hour: 0, minute: 30, day: 6 }, 'sip2-utc')).toBe('20261205   Z233000');
    expect(formatDialectDate({ ...due, zone: '   Z' }, 'sip2-utc')).toBe('20261205   Z235900');
    expect(formatDialectDate({ ...due, zone: '0000' }, 'sip2-utc')).toBe('20261205   Z235900');
  });

  it.each([
    ['sip2', '20261205    235900'],
    ['sip2-utc', '20261205   Z225900'],
    ['YYYYMMDD', '20261205'],
    ['YYYY-MM-DD', '2026-12-05'],
    ['YYYY-MM-DD HH:MM:SS', '2026-12-05 23:59:00'],
  ] as const)('%s: written as %j and read back as the calendar date', (format, text) => {
    expect(formatDialectDate(due, format)).toBe(text);
    expect(parseDialectDate(text, format)).toBe('2026-12-05');
  });

  it('covers every format', () => {
    expect([...DATE_FORMATS].sort()).toEqual(['YYYY-MM-DD', 'YYYY-MM-DD HH:MM:SS', 'YYYYMMDD', 'sip2', 'sip2-utc']);
  });

  it('is lenient: a SIP2 date or a bare date is read whatever the configured format', () => {
    expect(parseDialectDate('20261205    235900', 'YYYY-MM-DD')).toBe('2026-12-05');
    // a UTC instant is read as the library's (the process's) calendar date: 23:59Z is the next day in Berlin
    expect(parseDialectDate('20261205   Z235900', 'YYYYMMDD')).toBe('2026-12-06');
    expect(parseDialectDate('20261205   Z225900', 'YYYYMMDD')).toBe('2026-12-05');
    expect(parseDialectDate('20261205', 'sip2')).toBe('2026-12-05');
    expect(parseDialectDate('2026-12-05', 'YYYY-MM-DD HH:MM:SS')).toBe('2026-12-05');
    expect(parseDialectDate('2026-12-05T23:59:00Z', 'YYYY-MM-DD')).toBe('2026-12-05');
    expect(parseDialectDate('2026-12-05 23:59', 'YYYY-MM-DD HH:MM:SS')).toBe('2026-12-05');
    expect(parseDialectDate(' 2026-12-05 ', 'YYYY-MM-DD')).toBe('2026-12-05');
  });

  it.each([
    ['20240229', 'YYYYMMDD', '2024-02-29'],
    ['2000-02-29', 'YYYY-MM-DD', '2000-02-29'],
    ['00040229', 'YYYYMMDD', '0004-02-29'],
    ['20261231', 'YYYYMMDD', '2026-12-31'],
  ] as const)('reads the leap day or last day %j (%s) as %s', (text, format, expected) => {
    expect(parseDialectDate(text, format)).toBe(expected);
  });

  it.each([
    ['', 'sip2'],
    ['000000000000000000', 'sip2'],
    ['20261305    235900', 'sip2'],
    ['20260230', 'YYYYMMDD'],
    ['20250229', 'YYYYMMDD'],
    ['2100-02-29', 'YYYY-MM-DD'],
    ['20260431', 'YYYYMMDD'],
    ['20260001', 'YYYYMMDD'],
    ['20260100', 'YYYYMMDD'],
    ['2026-02-30', 'YYYY-MM-DD'],
    ['2026-13-01 00:00:00', 'YYYY-MM-DD HH:MM:SS'],
    ['05.12.2026', 'YYYY-MM-DD'],
    ['12/05/2026', 'YYYYMMDD'],
    ['2026-12-05 junk', 'YYYY-MM-DD HH:MM:SS'],
    ['soon', 'sip2-utc'],
    // Year 0000 is "no date" in every format (a UTC one was 1900-01-01, JavaScript's reading of year 0).
    ['00000000    000000', 'YYYYMMDD'],
    ['00000101   Z000000', 'sip2-utc'],
    ['00000101    000000', 'sip2'],
    ['00000101', 'YYYYMMDD'],
    ['0000-01-01', 'YYYY-MM-DD'],
    ['0000-01-01 00:00:00', 'YYYY-MM-DD HH:MM:SS'],
  ] as const)('reads %j (%s) as null', (text, format) => {
    expect(parseDialectDate(text, format)).toBeNull();
  });

  it.each(DATE_FORMATS)(
    '%s: parseDialectDate(formatDialectDate(d)) is the calendar date of d',
    (format: DateFormat) => {
      // sip2-utc converts local times to UTC, which may change the calendar date: give it UTC dates here
      const dates = sip2DateArb
        // 9999-12-31T23:00Z is already year 10000 in Berlin, which no 4-digit date format can state
        .filter((d) => d.year >= 1000 && d.year <= 9998)
        .map((d) => (format === 'sip2-utc' ? { ...d, zone: '   Z' } : d));
      fc.assert(
        fc.property(dates, (d) => {
          const stated = `${String(d.year).padStart(4, '0')}-${String(d.month).padStart(2, '0')}-${String(d.day).padStart(2, '0')}`;
          // UTC instants become Berlin calendar dates (oracle: Intl, not our code); other zones keep the date as stated
          const utc = d.zone === '   Z' || d.zone === '0000';
          const text = formatDialectDate(d, format);
          const written = format === 'sip2-utc' || (format === 'sip2' && utc);
          const instant = new Date(Date.UTC(d.year, d.month - 1, d.day, d.hour, d.minute, d.second));
          const expected = written && utc ? instant.toLocaleDateString('sv-SE', { timeZone: 'Europe/Berlin' }) : stated;
          expect(parseDialectDate(text, format)).toBe(expected);
        }),
        { numRuns: 300 },
      );
    },
  );
});

describe('invalid dialect files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paia-sip2-dialect-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const valid = {
    name: 'custom',
    description: 'test dialect',
    charset: 'utf-8',
    terminator: 'CR',
    holdLists: 'all-in-AS',
    expiry: { field: 'PA', format: 'YYYYMMDD' },
    dueDateFormat: 'sip2',
    fineItems: { pattern: '^(?<amount>\\d+\\.\\d{2}) (?<about>.*)$', template: '{amount} {about}' },
    listLimit: 10,
    pageSize: 10,
  };

  let n = 0;
  function write(content: unknown): string {
    const path = join(dir, `dialect-${n++}.yaml`);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content)); // JSON is YAML
    return path;
  }

  function loadError(content: unknown): string {
    const path = write(content);
    let message = '';
    try {
      loadDialect(path);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message, 'expected loadDialect to throw').not.toBe('');
    expect(message).toContain(path);
    return message;
  }

  it('a valid file loads (so the failures below are about the one bad field)', () => {
    const dialect: Dialect = loadDialect(write(valid));
    expect(dialect.name).toBe('custom');
    expect(parseFineItem('1.50 Faust', dialect)).toEqual({ amount: '1.50', about: 'Faust' });
  });

  it('a file that says nothing of list counts reads every list (unreliable, nothing in the charged list)', () => {
    expect(loadDialect(write(valid))).toMatchObject({ listCounts: 'unreliable', chargedIncludes: [] });
    expect(loadDialect(write({ ...valid, listCounts: 'reliable', chargedIncludes: ['overdue'] }))).toMatchObject({
      listCounts: 'reliable',
      chargedIncludes: ['overdue'],
    });
    expect(loadError({ ...valid, listCounts: 'mostly' })).toMatch(/listCounts/);
    expect(loadError({ ...valid, chargedIncludes: ['hold'] })).toMatch(/chargedIncludes/);
  });

  it.each([
    ['charset', { ...valid, charset: 'ebcdic' }, /charset/],
    ['terminator', { ...valid, terminator: 'LF' }, /terminator/],
    ['holdLists', { ...valid, holdLists: 'some' }, /holdLists/],
    [
      'expiry.field',
      { ...valid, expiry: { field: 'P', format: 'YYYYMMDD' } },
      /expiry\.field must be a two-character SIP2 field id/,
    ],
    [
      'expiry.field (a field the 64 models)',
      { ...valid, expiry: { field: 'PB', format: 'YYYYMMDD' } },
      /expiry\.field must not be a field the 64 already uses/,
    ],
    ['expiry.format', { ...valid, expiry: { field: 'PA', format: 'DD.MM.YYYY' } }, /expiry\.format/],
    ['dueDateFormat', { ...valid, dueDateFormat: 'whenever' }, /dueDateFormat/],
    [
      'fineItems.pattern (no amount group)',
      { ...valid, fineItems: { pattern: '^(?<about>.*)$', template: '{about}' } },
      /fineItems\.pattern must capture the fine amount/,
    ],
    [
      'fineItems.pattern (not a regex)',
      { ...valid, fineItems: { pattern: '^(?<amount>[0-9', template: '{amount}' } },
      /fineItems\.pattern is not a valid regular expression/,
    ],
    [
      'fineItems.template',
      { ...valid, fineItems: { pattern: valid.fineItems.pattern, template: '' } },
      /fineItems\.template/,
    ],
    [
      'fineItems.pattern (an empty list)',
      { ...valid, fineItems: { pattern: [], template: '{amount}' } },
      /fineItems\.pattern must list at least one pattern/,
    ],
    [
      'fineItems.pattern (the second of a list)',
      { ...valid, fineItems: { pattern: [valid.fineItems.pattern, '^(?<about>.*)$'], template: '{amount}' } },
      /fineItems\.pattern\.1 must capture the fine amount/,
    ],
    ['listLimit', { ...valid, listLimit: 0 }, /listLimit/],
    ['pageSize', { ...valid, pageSize: 2.5 }, /pageSize/],
    ['name', { ...valid, name: 'Custom Dialect' }, /name must be lower-case letters, digits and dashes/],
    ['an unknown key', { ...valid, chraset: 'utf-8' }, /chraset/],
  ])('names the bad field: %s', (_, content, reason) => {
    expect(loadError(content)).toMatch(reason);
  });

  it('tries a list of fine-item patterns in order, the first match winning', () => {
    const dialect = loadDialect(
      write({
        ...valid,
        fineItems: {
          pattern: ['^(?<amount>\\d+\\.\\d{2}) EUR (?<about>.*)$', '^(?<about>.*) (?<amount>\\d+\\.\\d{2})$'],
          template: '{amount} EUR {about}',
        },
      }),
    );
    expect(parseFineItem('1.50 EUR Faust 2.00', dialect)).toEqual({ amount: '1.50', about: 'Faust 2.00' });
    expect(parseFineItem('Faust 2.00', dialect)).toEqual({ amount: '2.00', about: 'Faust' });
    expect(parseFineItem('Faust', dialect)).toBeNull();
  });

  it('names a missing field', () => {
    const { pageSize: _, ...withoutPageSize } = valid;
    expect(loadError(withoutPageSize)).toMatch(/pageSize/);
  });

  it('a file that is not a mapping at all', () => {
    expect(loadError('- just\n- a list\n')).toMatch(/invalid/);
  });
});
