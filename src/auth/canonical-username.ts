import { KeyedHash } from '../state/keyed-hash.js';
import { IGNORED, markSpelledAs, spelledAs } from './collation-folds.js';

/**
 * The form of a username under which failed logins are counted. Many ILSs
 * find patrons case- and accent-insensitively (Koha looks them up in
 * MySQL/MariaDB columns of collation utf8mb4_unicode_ci, where `ÄLICE` and
 * `alice` are one patron), so every spelling the ILS would take for the same
 * account must count against that account, or each variant gets its own free
 * guesses: compatibility folding (NFKC: full-width and ligature forms), accents
 * and invisible characters removed, case folding, and what the collations
 * equate beyond that (collation-folds.ts: `œ` = `oe`, `ø` = `o`, digits of
 * other scripts, letters written as combining marks, ignored characters).
 *
 * The ILS's collation is not known here, so this folds what any of them
 * folds, and where two disagree it folds both ways: `ß` is `ss` to the
 * UCA-based collations and `s` to utf8mb4_general_ci, so runs of `s` count
 * as one; `l·` is `l` to UCA 5.2.0 and later. Characters outside the Basic
 * Multilingual Plane that the tables do not spell all count as one:
 * utf8mb4_unicode_ci and general_ci weigh them all alike.
 *
 * Folding more than the ILS does only makes two accounts share a lockout
 * (a nuisance, bounded by the lockout); folding less reopens the bypass.
 */
export function canonicalUsername(username: string): string {
  return (
    username
      // Before NFKC too: it turns some of them into a space and a mark.
      .replace(IGNORED, '')
      .normalize('NFKC')
      .normalize('NFD')
      // Marks go before case folding: a lone iota subscript would upper-case to a letter.
      .replace(/\p{M}/gu, markSpelledAs)
      .replace(/[\p{Cf}\p{Cc}]+/gu, '')
      .replace(IGNORED, '')
      // Upper then lower approximates full case folding (ß -> SS -> ss, final sigma, Kelvin sign ...).
      .toUpperCase()
      .toLowerCase()
      .replace(/[^\0-\x7f]/gu, spelledAs)
      .replace(/l\u00b7/g, 'l')
      .replace(/s+/g, 's')
      .replace(/[\u{10000}-\u{10ffff}]/gu, '\ufffd')
      .trim()
      .normalize('NFC')
  );
}

/**
 * How the subjects of logins appear outside the process, as keys in the
 * state store and as digests in log lines: keyed hashes (KeyedHash, with
 * paia.patronIdSecret). Patron ids are folded like usernames: the ILS
 * matches them the same way. Client ids are not folded (a client is found by
 * its exact id), and their purpose prefix keeps every client apart from
 * every username, whatever the username folds to.
 */
export class SubjectKeys {
  readonly #hash: KeyedHash;

  constructor(secret: string | null = null) {
    this.#hash = new KeyedHash(secret);
  }

  /** The key a username's counters are stored under. */
  username(username: string): string {
    return this.#hash.digest(`u\0${canonicalUsername(username)}`).toString('base64url');
  }

  /**
   * The key a client id's counters are stored under (client credentials logins); never a username's.
   * Attempts from outside the client's own addresses (or at an unknown id) count under another key.
   */
  client(id: string, fromItsHosts: boolean): string {
    return this.#hash.digest(`${fromItsHosts ? 'c' : 'e'}\0${id}`).toString('base64url');
  }

  /** The key an ILS patron identifier's counters are stored under. */
  patron(patron: string): string {
    return this.#hash.digest(`p\0${canonicalUsername(patron)}`).toString('base64url');
  }

  /** 12 hex digits for log lines: enough to correlate lines, not to read a barcode back (with a secret). */
  digest(text: string): string {
    return this.#hash
      .digest(`d\0${canonicalUsername(text)}`)
      .toString('hex')
      .slice(0, 12);
  }
}
