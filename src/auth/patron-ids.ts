import { createHmac } from 'node:crypto';

/**
 * How the public patron identifier (the one in core URLs and the login
 * response) is derived from the ILS barcode:
 * - `barcode`: the barcode itself (what Lukida expects when usernames are barcodes);
 * - `opaque`: HMAC-SHA256(secret, barcode), base64url, so barcodes stay out
 *   of URLs, proxy logs and browser histories. Stable for a given secret.
 */
export const PATRON_ID_MODES = ['barcode', 'opaque'] as const;
export type PatronIdMode = (typeof PATRON_ID_MODES)[number];

/** Shortest secret accepted for opaque identifiers (`openssl rand -base64 48` gives 64 characters). */
export const MIN_PATRON_ID_SECRET_LENGTH = 32;

export class PatronIds {
  readonly mode: PatronIdMode;
  readonly #secret: string | null;

  constructor(mode: PatronIdMode, secret?: string | null) {
    if (mode !== 'barcode' && mode !== 'opaque')
      throw new Error(`unknown patron id mode ${String(mode)}: use barcode or opaque`);
    if (mode === 'opaque') {
      if (typeof secret !== 'string' || secret.length < MIN_PATRON_ID_SECRET_LENGTH) {
        throw new Error(`opaque patron ids need a secret of at least ${MIN_PATRON_ID_SECRET_LENGTH} characters`);
      }
      this.#secret = secret;
    } else {
      this.#secret = null;
    }
    this.mode = mode;
  }

  /** The public identifier of the patron with this barcode. */
  fromBarcode(barcode: string): string {
    if (this.#secret === null) return barcode;
    return createHmac('sha256', this.#secret).update(barcode, 'utf8').digest('base64url');
  }
}
