import { createHash } from 'node:crypto';

/**
 * The form of a username under which failed logins are counted. Many ILSs
 * find patrons case- and accent-insensitively (Koha looks them up in
 * MySQL/MariaDB, whose default collations compare `ÄLICE` equal to `alice`),
 * so every spelling the ILS would take for the same account must count
 * against that account, or each variant gets its own free guesses:
 * compatibility folding (NFKC: full-width and ligature forms), case folding,
 * accents removed, invisible characters (format and control characters,
 * zero-width spaces, soft hyphens) removed, whitespace trimmed.
 *
 * Folding more than the ILS does only makes two accounts share a lockout
 * (a nuisance, bounded by the lockout); folding less reopens the bypass.
 */
export function canonicalUsername(username: string): string {
  return (
    username
      .normalize('NFKC')
      // Upper then lower approximates full case folding (ß -> SS -> ss, final sigma, Kelvin sign ...).
      .toUpperCase()
      .toLowerCase()
      // The one common letter whose folding the round trip misses: capital sharp s lowers to ß, which folds to ss.
      .replace(/ß/g, 'ss')
      .normalize('NFD')
      .replace(/\p{M}+/gu, '')
      .replace(/[\p{Cf}\p{Cc}]+/gu, '')
      .trim()
      .normalize('NFC')
  );
}

/** A short SHA-256 prefix of a canonical username or patron id: enough to correlate log lines, not to read a barcode. */
export function subjectDigest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

/** The key a username's counters are stored under: a hash, so the store holds no usernames or barcodes. */
export function usernameKey(username: string): string {
  return createHash('sha256')
    .update(`u\0${canonicalUsername(username)}`)
    .digest('base64url');
}

/** The key an ILS patron identifier's counters are stored under. */
export function patronKey(patron: string): string {
  return createHash('sha256').update(`p\0${patron}`).digest('base64url');
}
