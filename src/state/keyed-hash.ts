import { createHash, createHmac } from 'node:crypto';

/**
 * How identifiers a patron could be recognised by (usernames, barcodes,
 * patron ids) appear outside the process, as keys in the state store and as
 * digests in log lines: keyed hashes (HMAC-SHA-256 with paia.patronIdSecret)
 * when there is a secret, since a barcode has too little entropy for a plain
 * hash to hide it from someone trying them all; without a secret, plain
 * SHA-256 (docs/operations.md says what that leaves open). Callers put a purpose
 * prefix before the text, so that the hashes of one purpose never meet
 * another's.
 */
export class KeyedHash {
  readonly #secret: string | null;

  constructor(secret: string | null = null) {
    this.#secret = secret === '' ? null : secret;
  }

  digest(text: string): Buffer {
    return this.#secret === null
      ? createHash('sha256').update(text).digest()
      : createHmac('sha256', this.#secret).update(text).digest();
  }
}
