/**
 * Patron identifiers compared the way Koha's database compares them
 * (profile ids=folded). Koha finds a patron with `userid = ?` and then
 * `cardnumber = ?` on columns of collation utf8mb4_unicode_ci, so the
 * database, not Koha, decides what matches: UCA 4.0.0 primary weights
 * (case and accents ignored, compatibility variants equal, ß = ss, œ = oe,
 * digits of other scripts equal to ASCII digits) and PAD SPACE (trailing
 * spaces ignored). This key models only that subset, and never folds what
 * the collation keeps apart in the Latin script; the README ("Server
 * profiles", `ids=`) lists what it leaves out and cites the sources.
 */

/**
 * Combining Diacritical Marks (U+0300-U+0362): weighed only at the accent
 * level, so ignored by a `_ci` collation. The rest of the block, U+0363 to
 * U+036F, are letters (below).
 */
const DIACRITICS = /[\u0300-\u0362]/g;

/**
 * What UCA 4.0.0 weighs as ASCII letters or digits and neither NFKC nor
 * removing accents reaches: the weight keys of allkeys-4.0.0.txt as compiled
 * into MySQL (strings/uca_data.h, e.g. U+0152 Œ = the weights of O and E) and
 * MariaDB, read for every code point of the Basic Multilingual Plane with
 * WEIGHT_STRING(... COLLATE utf8mb4_unicode_ci) on MariaDB 10.11. Keys in
 * lower case (they are looked up after toLowerCase).
 */
const SPELLED: ReadonlyArray<readonly [characters: string, spelled: string]> = [
  // Expansions without a compatibility decomposition.
  ['œ', 'oe'],
  ['ƍ', 'zw'],
  ['ƾʦ', 'ts'],
  ['ʣ', 'dz'],
  ['ʪ', 'ls'],
  ['ʫ', 'lz'],
  // COMBINING LATIN SMALL LETTER A ... X: letters with a primary weight, not accents.
  ['\u0363', 'a'],
  ['\u0364', 'e'],
  ['\u0365', 'i'],
  ['\u0366', 'o'],
  ['\u0367', 'u'],
  ['\u0368', 'c'],
  ['\u0369', 'd'],
  ['\u036a', 'h'],
  ['\u036b', 'm'],
  ['\u036c', 'r'],
  ['\u036d', 't'],
  ['\u036e', 'v'],
  ['\u036f', 'x'],
];

/** Digits and numerals of other scripts, as runs counting up: [first, last, value of first]. */
const NUMERALS: ReadonlyArray<readonly [first: number, last: number, from: number]> = [
  [0x0660, 0x0669, 0], // Arabic-Indic
  [0x06f0, 0x06f9, 0], // Extended Arabic-Indic
  [0x0966, 0x096f, 0], // Devanagari
  [0x09e6, 0x09ef, 0], // Bengali
  [0x09f4, 0x09f7, 1], // Bengali currency numerators
  [0x0a66, 0x0a6f, 0], // Gurmukhi
  [0x0ae6, 0x0aef, 0], // Gujarati
  [0x0b66, 0x0b6f, 0], // Oriya
  [0x0be7, 0x0bef, 1], // Tamil (its zero came with Unicode 4.1)
  [0x0c66, 0x0c6f, 0], // Telugu
  [0x0ce6, 0x0cef, 0], // Kannada
  [0x0d66, 0x0d6f, 0], // Malayalam
  [0x0e50, 0x0e59, 0], // Thai
  [0x0ed0, 0x0ed9, 0], // Lao
  [0x0f20, 0x0f29, 0], // Tibetan
  [0x0f2a, 0x0f32, 1], // Tibetan half digits
  [0x0f33, 0x0f33, 0], // Tibetan half zero
  [0x1040, 0x1049, 0], // Myanmar
  [0x1369, 0x1371, 1], // Ethiopic
  [0x17e0, 0x17e9, 0], // Khmer
  [0x17f0, 0x17f9, 0], // Khmer lek attak
  [0x1810, 0x1819, 0], // Mongolian
  [0x1946, 0x194f, 0], // Limbu
  [0x24eb, 0x24f4, 11], // negative circled numbers eleven to twenty
  [0x24f5, 0x24fe, 1], // double circled digits one to ten
  [0x24ff, 0x24ff, 0], // negative circled digit zero
  [0x2776, 0x277f, 1], // dingbat negative circled digits
  [0x2780, 0x2789, 1], // dingbat circled sans-serif digits
  [0x278a, 0x2793, 1], // dingbat negative circled sans-serif digits
  [0x3007, 0x3007, 0], // ideographic number zero
  [0x3021, 0x3029, 1], // Hangzhou numerals
];

const SPELLING = new Map<string, string>();
for (const [characters, spelled] of SPELLED) for (const character of characters) SPELLING.set(character, spelled);
for (const [first, last, from] of NUMERALS) {
  for (let code = first; code <= last; code++) SPELLING.set(String.fromCodePoint(code), String(from + code - first));
}

/** The key under which two identifiers match: equal keys, equal identifiers for the collation. */
export function foldIdentifier(identifier: string): string {
  return (
    identifier
      // Compatibility variants first (fullwidth letters, ligatures, superscripts), so the next steps see plain letters.
      .normalize('NFKC')
      .toLowerCase()
      // Case folding beyond toLowerCase that the collation does too: ß expands to ss, final sigma is a sigma.
      .replaceAll('ß', 'ss')
      .replaceAll('ς', 'σ')
      .normalize('NFD')
      .replace(/[^\0-\x7f]/gu, (character) => SPELLING.get(character) ?? character)
      .replace(DIACRITICS, '')
      // PAD SPACE: 'alice' = 'alice  '. Leading and inner spaces count.
      .replace(/ +$/, '')
  );
}
