import { z } from 'zod';
import { MIN_PATRON_ID_SECRET_LENGTH, PATRON_ID_MODES } from '../../auth/patron-ids.js';
import { isIsoDate } from '../../sip2/index.js';
import { integer, must, PLACEHOLDER_SECRET, secret, section, uriTemplate } from './validators.js';

/** paia: identifiers and limits of PAIA. */

export const paiaSection = section({
  /**
   * URI of an item (copy): how item URIs are written and recognised. {barcode}
   * is the item barcode. Required with sip2.host; null (demo mode only): the
   * gateway's own URL (http.publicUrl, or where it listens, with the base
   * path) followed by /item/{barcode}.
   */
  itemUri: uriTemplate('barcode', 'https://lib.example.org/item/{barcode}', 'items').nullable().default(null),
  /** URI of an edition (title), used for title-level requests. {title} is the title identifier. Required with sip2.host; null (demo mode only): the gateway's own URL followed by /title/{title}. */
  editionUri: uriTemplate('title', 'https://lib.example.org/title/{title}', 'editions').nullable().default(null),
  /** URI of a pickup or shelving location, {location} being the SIP2 location code. null = no storage URIs. */
  storageUri: uriTemplate('location', 'https://lib.example.org/location/{location}', 'locations')
    .nullable()
    .default(null),
  /** URI of a patron type, {class} being the SIP2 patron class (PC). null = no patron type in responses. */
  patronTypeUri: uriTemplate('class', 'https://lib.example.org/patron-type/{class}', 'patron types')
    .nullable()
    .default(null),
  /** How patrons appear in URLs: "barcode" as is, or "opaque" (an HMAC of it, so barcodes stay out of URLs and logs). */
  patronId: z.enum(PATRON_ID_MODES, must('must be "barcode" or "opaque"')).default('barcode'),
  /**
   * Key for opaque patron ids, and for the hashes of usernames and patron ids in the state store and the log
   * (whatever patronId is): at least 32 random characters (openssl rand -base64 48). Changing it changes every
   * opaque patron id and starts every lockout count afresh. Secret.
   */
  patronIdSecret: secret(
    z
      .string(must(`must be a random string of at least ${MIN_PATRON_ID_SECRET_LENGTH} characters, or null`))
      .nullable()
      .default(null),
  ),
  /** Most documents in one renew, request or cancel call. */
  maxDocs: integer(1, 1000, 'must be a whole number between 1 and 1000').default(50),
  /**
   * The date sent as the patron's `expires` for an active account (status 0)
   * when the ILS sends no expiry date: FOLIO never does (dialect expiry: null),
   * other ILSs leave the dialect's field empty for accounts that never expire.
   * VuFind's PAIA driver offers a hold form only to a patron with an `expires`
   * after today; 9999-12-31 is what VuFind's own PAIA test patron carries.
   * null (the default): no `expires` is sent then, as PAIA allows.
   */
  expiresWhenUnknown: z
    .string(must('must be a date YYYY-MM-DD such as 9999-12-31, or null'))
    .refine(isIsoDate, must('must be a date YYYY-MM-DD such as 9999-12-31 (a real day), or null'))
    .nullable()
    .default(null),
}).superRefine(
  (paia, ctx) => {
    const secret = paia.patronIdSecret;
    if (paia.patronId !== 'opaque' || (secret !== null && typeof secret !== 'string')) return;
    const fix =
      'generate one with `openssl rand -base64 48` and set it in paia.patronIdSecret or PAIA_PAIA_PATRON_ID_SECRET';
    if (secret === null || secret === '') {
      ctx.addIssue({
        code: 'custom',
        path: ['patronIdSecret'],
        message: `is required when paia.patronId is "opaque" (at least ${MIN_PATRON_ID_SECRET_LENGTH} characters): ${fix}`,
      });
    } else if (PLACEHOLDER_SECRET.test(secret)) {
      ctx.addIssue({
        code: 'custom',
        path: ['patronIdSecret'],
        message: `is still the placeholder from the example: ${fix}`,
      });
    } else if (secret.length < MIN_PATRON_ID_SECRET_LENGTH) {
      ctx.addIssue({
        code: 'custom',
        path: ['patronIdSecret'],
        message: `must be at least ${MIN_PATRON_ID_SECRET_LENGTH} characters long when paia.patronId is "opaque": ${fix}`,
      });
    }
  },
  { when: () => true },
);
