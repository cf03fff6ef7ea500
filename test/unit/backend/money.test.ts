import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatMoney, parseAmount, parseCurrency } from '../../../src/backend/money.js';

const PAIA_MONEY = /^-?[0-9]+\.[0-9][0-9] [A-Z][A-Z][A-Z]$/;

describe('parseAmount', () => {
  it.each([
    ['2.5', 250n],
    ['2.50', 250n],
    ['12', 1200n],
    ['-1.00', -100n],
    ['1,50', 150n],
    ['+3', 300n],
    ['0', 0n],
    ['0.00', 0n],
    ['-0.00', 0n],
    ['.5', 50n],
    ['7.', 700n],
    [' 3.25 ', 325n],
    ['2.500', 250n],
    ['00012.30', 1230n],
    ['123456789012345678901234.99', 12345678901234567890123499n],
  ])('reads %j as %s cents', (text, cents) => {
    expect(parseAmount(text)).toBe(cents);
  });

  it.each([
    '',
    ' ',
    '-',
    '.',
    ',',
    'abc',
    '2.5.0',
    '1,5,0',
    '2.505',
    '2.501',
    '€2.50',
    '2.50 EUR',
    '1e3',
    '0x10',
    '--1',
    '1-',
    'NaN',
    'Infinity',
    '1 000',
    '9'.repeat(40),
  ])('refuses %j', (text) => {
    expect(parseAmount(text)).toBeNull();
  });

  it('is exact where floats are not (0.1 + 0.2)', () => {
    const a = { cents: parseAmount('0.1')!, currency: 'EUR' };
    const b = { cents: parseAmount('0.2')!, currency: 'EUR' };
    expect(formatMoney({ cents: a.cents + b.cents, currency: 'EUR' })).toBe('0.30 EUR');
  });

  it('round-trips every cents value through format and parse', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), (cents) => {
        const text = formatMoney({ cents, currency: 'EUR' });
        expect(text.endsWith(' EUR')).toBe(true);
        expect(parseAmount(text.slice(0, -4))).toBe(cents);
      }),
    );
  });
});

describe('formatMoney', () => {
  it.each([
    [0n, '0.00 EUR'],
    [5n, '0.05 EUR'],
    [50n, '0.50 EUR'],
    [250n, '2.50 EUR'],
    [1200n, '12.00 EUR'],
    [-100n, '-1.00 EUR'],
    [-5n, '-0.05 EUR'],
    [123456789n, '1234567.89 EUR'],
  ])('writes %s cents as %j', (cents, text) => {
    expect(formatMoney({ cents, currency: 'EUR' })).toBe(text);
  });

  it('fits the spec pattern (with a leading minus for negative sums)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }), (cents) => {
        expect(formatMoney({ cents, currency: 'USD' })).toMatch(PAIA_MONEY);
        if (cents >= 0n)
          expect(formatMoney({ cents, currency: 'USD' })).toMatch(/^[0-9]+\.[0-9][0-9] [A-Z][A-Z][A-Z]$/);
      }),
    );
  });

  it('refuses a currency that is not three upper-case letters', () => {
    expect(() => formatMoney({ cents: 1n, currency: 'eur' })).toThrow();
    expect(() => formatMoney({ cents: 1n, currency: '€' })).toThrow();
  });
});

describe('currencies and arithmetic', () => {
  it('normalises currency codes and refuses others', () => {
    expect(parseCurrency('EUR')).toBe('EUR');
    expect(parseCurrency(' usd ')).toBe('USD');
    expect(parseCurrency('$')).toBeNull();
    expect(parseCurrency('EURO')).toBeNull();
    expect(parseCurrency('')).toBeNull();
    expect(parseCurrency(undefined)).toBeNull();
  });

  it('sums exactly whatever the order', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -100000, max: 100000 }), { maxLength: 50 }), (values) => {
        const texts = values.map(
          (v) => `${v < 0 ? '-' : ''}${Math.floor(Math.abs(v) / 100)}.${String(Math.abs(v) % 100).padStart(2, '0')}`,
        );
        const sum = texts.reduce((acc, t) => acc + parseAmount(t)!, 0n);
        expect(sum).toBe(BigInt(values.reduce((a, b) => a + b, 0)));
      }),
    );
  });
});
