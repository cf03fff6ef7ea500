/**
 * Patron identifiers compared the way Koha's database compares them
 * (profile ids=folded). Koha finds a patron with `userid = ?` and then
 * `cardnumber = ?` on columns of collation utf8mb4_unicode_ci, so the
 * database, not Koha, decides what matches: UCA 4.0.0 primary weights
 * (case and accents ignored, compatibility variants equal, ß = ss) and PAD
 * SPACE (trailing spaces ignored). This key models only that subset, and
 * never folds what the collation keeps apart; the README ("Server profiles",
 * `ids=`) lists what it leaves out and cites the sources.
 */

/** Combining Diacritical Marks (U+0300-U+036F): weighed only at the accent level, so ignored by a `_ci` collation. */
const DIACRITICS = /[\u0300-\u036f]/g;

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
      .replace(DIACRITICS, '')
      // PAD SPACE: 'alice' = 'alice  '. Leading and inner spaces count.
      .replace(/ +$/, '')
  );
}
