import { describe, expect, it } from 'vitest';
import { canonicalUsername, SubjectKeys } from '../../../src/auth/canonical-username.js';

/**
 * What the ILS's collation equates must fold to one canonical username, or
 * each spelling gets its own free guesses (issue 24). The pairs below are
 * what MySQL/MariaDB's collations compare equal (read from their weights,
 * see src/auth/collation-folds.ts); the properties check the same against
 * ICU's root collation (Node's Intl.Collator), close to the Unicode
 * Collation Algorithm's default table that utf8mb4_0900_ai_ci and
 * uca1400_ai_ci are built on.
 */

const sameAccount = (a: string, b: string) => expect(canonicalUsername(a), `${a} = ${b}`).toBe(canonicalUsername(b));

describe('canonicalUsername: what the collations equate beyond case and accents', () => {
  it('expansions of utf8mb4_unicode_ci (UCA 4.0.0), Koha’s collation', () => {
    for (const [variant, plain] of [
      ['zŒ', 'zoe'],
      ['zœ', 'ZOE'],
      ['ƍa', 'zwa'],
      ['ʦar', 'tsar'],
      ['ƾar', 'tsar'],
      ['ʣa', 'dza'],
      ['aʪ', 'als'],
      ['aʫ', 'alz'],
      ['zo\u0364', 'zoe'], // COMBINING LATIN SMALL LETTER E: a letter to the collation, not an accent
      ['\u0363lice', 'alice'],
    ]) {
      sameAccount(variant!, plain!);
    }
  });

  it('letters that UCA 5.2.0 and later (unicode_520_ci, 0900_ai_ci, uca1400_ai_ci) weigh as their base letters', () => {
    for (const [variant, plain] of [
      ['Æsa', 'aesa'],
      ['ǽsa', 'aesa'],
      ['Øle', 'ole'],
      ['Ǿle', 'ole'],
      ['Łukasz', 'lukasz'],
      ['Đorđe', 'dorde'],
      ['Ðóra', 'dora'],
      ['Ħanna', 'hanna'],
      ['ℏanna', 'hanna'],
      ['ꜳse', 'aase'],
      ['ỻan', 'llan'],
      ['ŀlum', 'llum'], // l with middle dot: l· is l to UCA 5.2.0 and later (a contraction)
      ['al·la', 'alla'],
      ['Straẞe', 'strasse'],
    ]) {
      sameAccount(variant!, plain!);
    }
  });

  it('digits of every script weigh as the ASCII digits: a barcode has as many spellings as there are digit sets', () => {
    for (const [variant, plain] of [
      ['٢٣٤٥', '2345'], // Arabic-Indic
      ['۲۳۴۵', '2345'], // Extended Arabic-Indic
      ['२३४५', '2345'], // Devanagari
      ['๒๓๔๕', '2345'], // Thai
      ['1٢३4', '1234'],
      ['𝟐𝟑', '23'], // mathematical bold (compatibility)
      ['⓫', '11'], // negative circled number eleven: no decomposition
      ['❶2', '12'],
      ['〡〢', '12'], // Hangzhou numerals
      ['፩፪', '12'], // Ethiopic digits (No, not Nd)
      ['\u{12415}2', '12'], // cuneiform numeric sign one gesh2 (uca1400_ai_ci)
    ]) {
      sameAccount(variant!, plain!);
    }
  });

  it('characters the collations weigh as nothing vanish', () => {
    for (const variant of [
      'zo\u0640e', // ARABIC TATWEEL (uca1400_ai_ci)
      'zo\ufe70e', // ARABIC FATHATAN ISOLATED FORM: compatibility decomposition leaves a space
      'zo\u0345e', // COMBINING GREEK YPOGEGRAMMENI: ignorable, though it upper-cases to a letter
      'zo\u06dee', // ARABIC START OF RUB EL HIZB (unicode_ci)
    ]) {
      sameAccount(variant, 'zoe');
    }
  });

  it('ß is ss to the UCA collations and s to utf8mb4_general_ci: runs of s count as one', () => {
    for (const variant of ['straße', 'STRASSE', 'strase', 'Straẞe', 'strasse']) sameAccount(variant, 'straße');
    sameAccount('jess', 'jes');
  });

  it('keeps apart what no collation equates', () => {
    for (const [a, b] of [
      ['alice', 'bob'],
      ['zoe', 'zo'],
      ['1234', '1235'],
      ['ab', 'a b'],
      ['ŧ', 't'], // t with stroke is a letter of its own in every version
      ['ab', 'a.b'],
    ]) {
      expect(canonicalUsername(a!), `${a} != ${b}`).not.toBe(canonicalUsername(b!));
    }
  });

  it('patron ids fold the same way (SubjectKeys)', () => {
    const keys = new SubjectKeys('k'.repeat(40));
    expect(keys.patron('٢٣٤٥')).toBe(keys.patron('2345'));
    expect(keys.username('zŒ')).toBe(keys.username('zoe'));
    expect(keys.digest('Øle')).toBe(keys.digest('ole'));
  });
});

describe('canonicalUsername against ICU’s root collation', () => {
  const collator = new Intl.Collator('und', { sensitivity: 'base' });
  const alphabet = [...'abcdefghijklmnopqrstuvwxyz0123456789'];
  /** Every string of one or two ASCII letters or digits, in the collator's order (no two are equal). */
  const ascii = [...alphabet, ...alphabet.flatMap((a) => alphabet.map((b) => a + b))].sort(collator.compare);

  /** The ASCII string the collator calls equal to `text`, by binary search; undefined if none. */
  function asciiEqual(text: string): string | undefined {
    let low = 0;
    let high = ascii.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const order = collator.compare(text, ascii[middle]!);
      if (order === 0) return ascii[middle];
      if (order < 0) high = middle - 1;
      else low = middle + 1;
    }
    return undefined;
  }

  /** Every assigned code point from U+0080 on (surrogates and private use left out), or those of `ranges`. */
  function* codePoints(ranges: Array<[number, number]> = [[0x80, 0x10ffff]]): Generator<string> {
    for (const [first, last] of ranges) {
      for (let code = first; code <= last; code++) {
        if (code >= 0xd800 && code <= 0xdfff) continue;
        const character = String.fromCodePoint(code);
        if (!/[\p{Cn}\p{Co}]/u.test(character)) yield character;
      }
    }
  }

  const hex = (character: string) => `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

  it('the search finds what the collator equates (or the properties below would pass on nothing)', () => {
    expect(ascii.length).toBe(36 + 36 * 36);
    expect(asciiEqual('Œ')).toBe('oe');
    expect(asciiEqual('ø')).toBe('o');
    expect(asciiEqual('٣')).toBe('3');
    expect(asciiEqual('ŧ')).toBeUndefined();
  });

  it('every code point of the Latin blocks that the collator equates to one or two ASCII letters folds as they do', () => {
    const found: string[] = [];
    const missed: string[] = [];
    for (const character of codePoints([
      [0x00c0, 0x024f],
      [0x1e00, 0x1eff],
    ])) {
      const plain = asciiEqual(character);
      if (plain === undefined) continue;
      found.push(`${character}=${plain}`);
      // Between letters, as in a username: a trailing or leading form would hide a space.
      if (canonicalUsername(`z${character}z`) !== canonicalUsername(`z${plain}z`))
        missed.push(`${hex(character)} ${character}`);
    }
    // What the table adds: letters whose compatibility decomposition, accents removed, is not their ASCII spelling.
    const beyond = found.filter((pair) => {
      const [character, plain] = pair.split('=') as [string, string];
      return character.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase() !== plain;
    });
    console.log(`Latin blocks: ${found.length} letters equal to ASCII; not by decomposition: ${beyond.join(' ')}`);
    expect(found.length).toBeGreaterThan(400);
    expect(missed).toEqual([]);
  });

  it('every code point of every plane that the collator equates to one or two ASCII letters or digits folds as they do', () => {
    const missed: string[] = [];
    let found = 0;
    for (const character of codePoints()) {
      const plain = asciiEqual(character);
      if (plain === undefined) continue;
      found += 1;
      if (canonicalUsername(`z${character}z`) !== canonicalUsername(`z${plain}z`))
        missed.push(`${hex(character)} ${character}=${plain}`);
    }
    console.log(`all planes: ${found} code points equal to one or two ASCII letters or digits`);
    expect(found).toBeGreaterThan(2000);
    expect(missed).toEqual([]);
  });

  it('every code point the collator ignores between two letters vanishes', () => {
    const missed: string[] = [];
    let ignored = 0;
    for (const character of codePoints()) {
      if (collator.compare(`a${character}b`, 'ab') !== 0) continue;
      ignored += 1;
      if (canonicalUsername(`a${character}b`) !== canonicalUsername('ab')) missed.push(hex(character));
    }
    console.log(`all planes: ${ignored} code points ignored`);
    expect(ignored).toBeGreaterThan(1000);
    expect(missed).toEqual([]);
  });
});
