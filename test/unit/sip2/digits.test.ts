import { describe, expect, it } from 'vitest';
import { readDigits } from '../../../src/sip2/digits.js';

describe('readDigits', () => {
  it('reads a zero-padded count and a slice of a date', () => {
    expect(readDigits('0012')).toBe(12);
    expect(readDigits('0000')).toBe(0);
    expect(readDigits('20261125    093015', 4, 2)).toBe(11);
    expect(readDigits('20261125    093015', 16, 2)).toBe(15);
  });

  it.each([
    ['', 'nothing'],
    ['    ', 'blanks (an ILS that leaves a count out)'],
    [' 12', 'a leading blank'],
    ['1 2', 'a blank inside'],
    ['-1', 'a sign'],
    ['1e3', 'an exponent'],
    ['０１', 'non-ASCII digits'],
  ])('reads %j as -1 (%s)', (text) => {
    expect(readDigits(text)).toBe(-1);
  });

  it('reads -1 for a range past the end of the text, never a shorter number', () => {
    expect(readDigits('123', 1, 5)).toBe(-1);
    expect(readDigits('123', 3, 1)).toBe(-1);
  });
});
