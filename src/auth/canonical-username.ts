import { KeyedHash } from '../state/keyed-hash.js';

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
