import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  formatSip2Date,
  isoDateOf,
  LOCAL_ZONE,
  parseSip2Date,
  type Sip2DateTime,
  sip2DateFrom,
  toDate,
  UNSUPPORTED_DATE,
  UTC_ZONE,
} from '../../../src/sip2/date.js';
import { Sip2Messages } from '../../../src/sip2/messages.js';

const at = (zone: string, year = 2026, month = 11, day = 21, hour = 17, minute = 29, second = 31): Sip2DateTime => ({
  year,
  month,
  day,
  hour,
  minute,
  second,
  zone,
});

describe('parseSip2Date', () => {
  it('reads local time (four blanks)', () => {
    expect(parseSip2Date('20261121    172931')).toStrictEqual(at('    '));
    expect(LOCAL_ZONE).toBe('    ');
  });

  it('reads UTC ("   Z")', () => {
    expect(parseSip2Date('20261121   Z172931')).toStrictEqual(at('   Z'));
    expect(UTC_ZONE).toBe('   Z');
  });

  it('reads the "0000" zone some servers send', () => {
    expect(parseSip2Date('202611210000172931')).toStrictEqual(at('0000'));
  });

  it('keeps other zone letters as sent (3M: "Q" for Atlantic time)', () => {
    expect(parseSip2Date('20261121   Q080000')).toStrictEqual(at('   Q', 2026, 11, 21, 8, 0, 0));
    expect(parseSip2Date('20261121 EST080000')?.zone).toBe(' EST');
  });

  it('reads the all-zero "unsupported" value as null', () => {
    expect(UNSUPPORTED_DATE).toBe('000000000000000000');
    expect(parseSip2Date('000000000000000000')).toBeNull();
  });

  it('reads midnight, end of day and leap days', () => {
    expect(parseSip2Date('20260101    000000')).toStrictEqual(at('    ', 2026, 1, 1, 0, 0, 0));
    expect(parseSip2Date('20261231    235959')).toStrictEqual(at('    ', 2026, 12, 31, 23, 59, 59));
    expect(parseSip2Date('20240229    120000')).toStrictEqual(at('    ', 2024, 2, 29, 12, 0, 0));
    expect(parseSip2Date('20000229    120000')).toStrictEqual(at('    ', 2000, 2, 29, 12, 0, 0));
    expect(parseSip2Date('20261130    120000')?.day).toBe(30);
  });

  it.each([
    ['', 'empty'],
    ['                  ', '18 blanks (some SCs send blanks for "no date")'],
    ['20261121    17293', '17 chars'],
    ['20261121    1729310', '19 chars'],
    ['2026112     172931', 'a blank in the date part'],
    ['20261321    172931', 'month 13'],
    ['20260021    172931', 'month 00'],
    ['20261100    172931', 'day 00'],
    ['20261131    172931', 'November 31'],
    ['20260230    172931', 'February 30'],
    ['20250229    172931', 'February 29 of a common year'],
    ['21000229    172931', 'February 29 of 2100 (century, not a leap year)'],
    ['20261121    242931', 'hour 24'],
    ['20261121    176031', 'minute 60'],
    ['20261121    172961', 'second 61'],
    ['2026-11-21  172931', 'ISO separators'],
    ['20261121   z172931', 'lower-case zone letter'],
    ['20261121   |172931', 'a delimiter in the zone'],
    ['20261121\t\t\t\t172931', 'tabs as zone'],
    ['２０２６1121    172931', 'non-ASCII digits'],
    ['20261121    1729３1', 'a non-ASCII digit in the time'],
  ])('reads %j as null (%s)', (text) => {
    expect(parseSip2Date(text)).toBeNull();
  });

  it('reads year 0000 as no date, whatever month, day, zone and time follow (ILSs write it for "none")', () => {
    for (const text of ['00000000    000000', '00000101    000000', '00000101   Z000000', '000012310000235959']) {
      expect(parseSip2Date(text), text).toBeNull();
    }
    // Year 0001 is a date (the codec reads what is stated); only 0000 means none.
    expect(parseSip2Date('00010101    000000')).toStrictEqual(at('    ', 1, 1, 1, 0, 0, 0));
  });

  it('accepts a leap second (60)', () => {
    expect(parseSip2Date('20261231   Z235960')?.second).toBe(60);
  });
});

describe('formatSip2Date', () => {
  it('writes the 18-char form', () => {
    expect(formatSip2Date(at('    '))).toBe('20261121    172931');
    expect(formatSip2Date(at('   Z', 2026, 1, 2, 3, 4, 5))).toBe('20260102   Z030405');
    expect(formatSip2Date(at('0000', 999, 1, 2, 3, 4, 5))).toBe('099901020000030405');
  });

  it('writes null as the "unsupported" value', () => {
    expect(formatSip2Date(null)).toBe('000000000000000000');
  });

  it('round-trips every valid date (parse . format = id)', () => {
    const zone = fc.constantFrom('    ', '   Z', '0000', '   Q', ' EST', 'Z   ');
    const date = fc
      .record({
        year: fc.integer({ min: 1, max: 9999 }),
        month: fc.integer({ min: 1, max: 12 }),
        day: fc.integer({ min: 1, max: 31 }),
        hour: fc.integer({ min: 0, max: 23 }),
        minute: fc.integer({ min: 0, max: 59 }),
        second: fc.integer({ min: 0, max: 60 }),
        zone,
      })
      .filter((d) => d.day <= [31, isLeap(d.year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][d.month - 1]!);
    fc.assert(
      fc.property(date, (d) => {
        const text = formatSip2Date(d);
        expect(text).toHaveLength(18);
        expect(parseSip2Date(text)).toStrictEqual({ ...d });
      }),
      { numRuns: 1000 },
    );
  });

  it('round-trips valid texts (format . parse = id)', () => {
    for (const text of ['20261121    172931', '20261121   Z000000', '202402290000235959', '19991231 EST235960']) {
      expect(formatSip2Date(parseSip2Date(text))).toBe(text);
    }
  });
});

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

describe('isoDateOf', () => {
  it('is the calendar date as the ILS stated it, whatever the zone', () => {
    expect(isoDateOf(at('    '))).toBe('2026-11-21');
    expect(isoDateOf(at('   Z', 2026, 12, 31, 23, 59, 59))).toBe('2026-12-31');
    expect(isoDateOf(at('0000', 2026, 1, 1, 0, 0, 0))).toBe('2026-01-01');
    expect(isoDateOf(at('    ', 987, 3, 4))).toBe('0987-03-04');
  });
});

describe('toDate', () => {
  const savedTz = process.env.TZ;
  // a zone far from UTC, so that UTC and local readings cannot agree by accident
  beforeEach(() => {
    process.env.TZ = 'America/New_York';
  });
  afterEach(() => {
    if (savedTz === undefined) delete process.env.TZ;
    else process.env.TZ = savedTz;
  });

  it('reads "   Z" as UTC', () => {
    expect(toDate(at('   Z')).toISOString()).toBe('2026-11-21T17:29:31.000Z');
  });

  it('reads "0000" as UTC', () => {
    expect(toDate(at('0000', 2026, 6, 30, 23, 59, 59)).toISOString()).toBe('2026-06-30T23:59:59.000Z');
  });

  it('reads other zone letters as local time (only Z and 0000 are understood)', () => {
    expect(toDate(at('   Q', 2026, 11, 21, 12, 0, 0)).toISOString()).toBe('2026-11-21T17:00:00.000Z');
  });

  it("reads four blanks as the process's local time", () => {
    expect(toDate(at('    ', 2026, 11, 21, 12, 0, 0)).toISOString()).toBe('2026-11-21T17:00:00.000Z');
    const date = toDate(at('    '));
    expect([
      date.getFullYear(),
      date.getMonth(),
      date.getDate(),
      date.getHours(),
      date.getMinutes(),
      date.getSeconds(),
    ]).toEqual([2026, 10, 21, 17, 29, 31]);
  });

  it('keeps years below 100 as stated (JavaScript reads 0-99 as 1900-1999)', () => {
    expect(toDate(at('   Z', 50, 3, 1, 12, 0, 0)).toISOString()).toBe('0050-03-01T12:00:00.000Z');
    const local = toDate(at('    ', 1, 1, 1, 12, 0, 0));
    expect([local.getFullYear(), local.getMonth(), local.getDate(), local.getHours()]).toEqual([1, 0, 1, 12]);
  });

  it('applies the process time zone to local dates (Europe/Berlin, winter and summer)', () => {
    process.env.TZ = 'Europe/Berlin';
    expect(toDate(at('    ')).toISOString()).toBe('2026-11-21T16:29:31.000Z');
    expect(toDate(at('    ', 2026, 7, 1, 12, 0, 0)).toISOString()).toBe('2026-07-01T10:00:00.000Z');
    // and UTC stays UTC
    expect(toDate(at('   Z', 2026, 7, 1, 12, 0, 0)).toISOString()).toBe('2026-07-01T12:00:00.000Z');
  });
});

describe('sip2DateFrom', () => {
  const savedTz = process.env.TZ;
  afterEach(() => {
    if (savedTz === undefined) delete process.env.TZ;
    else process.env.TZ = savedTz;
  });

  it('writes UTC components with the "   Z" zone', () => {
    expect(sip2DateFrom(new Date('2026-11-21T17:29:31.789Z'), 'utc')).toStrictEqual(at('   Z'));
    expect(formatSip2Date(sip2DateFrom(new Date('2026-01-02T03:04:05Z'), 'utc'))).toBe('20260102   Z030405');
  });

  it('writes local components with the blank zone by default', () => {
    process.env.TZ = 'Europe/Berlin';
    expect(sip2DateFrom(new Date('2026-11-21T23:30:00Z'))).toStrictEqual(at('    ', 2026, 11, 22, 0, 30, 0));
    expect(formatSip2Date(sip2DateFrom(new Date('2026-07-01T10:00:00Z'), 'local'))).toBe('20260701    120000');
  });

  it('round-trips through toDate to the second', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1971-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }),
        fc.constantFrom('local' as const, 'utc' as const),
        (date, zone) => {
          const seconds = Math.floor(date.getTime() / 1000) * 1000;
          expect(toDate(sip2DateFrom(date, zone)).getTime()).toBe(seconds);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('transaction dates of built messages', () => {
  it('stamps every message with the second it is built in, reusing one date (and its text) within a second', () => {
    let clock = new Date(2026, 10, 25, 9, 30, 15, 100);
    const requests = new Sip2Messages({ institutionId: 'DEMO', now: () => clock });
    const first = requests.itemInformation('it-1').transactionDate;
    clock = new Date(2026, 10, 25, 9, 30, 15, 900);
    const sameSecond = requests.patronInformation('alice').transactionDate;
    expect(sameSecond).toBe(first);
    expect(formatSip2Date(sameSecond)).toBe('20261125    093015');
    clock = new Date(2026, 10, 25, 9, 30, 16, 0);
    const next = requests.itemInformation('it-1').transactionDate;
    expect(next).not.toBe(first);
    expect(formatSip2Date(next)).toBe('20261125    093016');
    expect(formatSip2Date(first)).toBe('20261125    093015');
  });
});
