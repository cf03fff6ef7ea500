import { z } from 'zod';
import { requestLinkProblem } from '../../backend/daia/request-link.js';
import { recordsSection } from './daia-records.js';
import { absoluteUri, clientList, flag, integer, must, section } from './validators.js';

/** daia: anonymous availability, its limits per client and its share of the SIP2 pool. */

/**
 * Default of daia.idsPerMinutePerAddress: 6000, three times what a busy
 * discovery server asks from its one address (100 result pages of 20 records
 * a minute, 2000 ids). A discovery system asks DAIA for all its users from
 * its server, and a page it was refused shows no holdings at all, silently
 * (VuFind's DAIA driver, getStatuses: an error is only logged); 1200 refused
 * a VuFind serving 65 pages a minute. The limit is not what protects patrons:
 * daia.poolShare keeps DAIA to its share of the SIP2 connections whatever the
 * number of ids. It only keeps one address from taking all of that share for
 * long, which takes far more than 6000 ids a minute (100 a second).
 */
const DEFAULT_DAIA_IDS_PER_MINUTE = 6000;
/** Default of daia.poolShare: DAIA may hold half of the SIP2 connections, the other half stays free for patrons. */
const DEFAULT_DAIA_POOL_SHARE = 0.5;

const REQUEST_URL_EXAMPLE = 'https://opac.lib.example.org/hold?item={item}';
const DEPARTMENT_ID_EXAMPLE = 'http://lobid.org/organisations/DE-7';

export const daiaSection = section({
  /** Most document ids answered per DAIA request; the rest goes into a Link rel="next" URL. null: paia.maxDocs. */
  maxIds: integer(1, 1000, 'must be a whole number between 1 and 1000, or null for paia.maxDocs')
    .nullable()
    .default(null),
  /**
   * Document ids one client address may ask for per minute, its requests
   * together (one request with 50 ids counts 50); beyond it 429 with
   * Retry-After. Counted in the state store (shared by every instance with
   * Redis); behind http.trustedProxy per last X-Forwarded-For hop, IPv6 per /64.
   * The default lets a busy discovery server through (why: DEFAULT_DAIA_IDS_PER_MINUTE);
   * an address refused again and again is logged once in a while, naming exemptClients.
   */
  idsPerMinutePerAddress: integer(1, 10_000_000, 'must be a whole number between 1 and 10000000').default(
    DEFAULT_DAIA_IDS_PER_MINUTE,
  ),
  /**
   * Clients not held to idsPerMinutePerAddress: IP addresses and CIDR blocks,
   * e.g. a discovery system that asks on behalf of all its users from one
   * address. They still get only DAIA's share of the pool. [] = none. In the
   * environment: comma-separated.
   */
  exemptClients: clientList().default([]),
  /**
   * Fraction of the SIP2 connections (sip2.pool.max, or fewer when the ILS
   * serves fewer) DAIA's requests may hold at once, at least one: the rest
   * stays free for patrons. 1: DAIA may take them all.
   */
  poolShare: z
    .number(must('must be a fraction between 0 and 1, e.g. 0.5 for half of sip2.pool.max'))
    .gt(0, must('must be a fraction between 0 and 1, e.g. 0.5 for half of sip2.pool.max'))
    .max(1, must('must be a fraction between 0 and 1, e.g. 0.5 for half of sip2.pool.max'))
    .default(DEFAULT_DAIA_POOL_SHARE),
  /**
   * URL template of the page where a patron asks for a copy, the `href` of
   * its loan and presentation services: {item} is the item URI, {barcode}
   * the item barcode (both percent-encoded); an http: or https: URL. Given on
   * unavailable services of a copy that comes back (on loan, on the hold
   * shelf, in transit ...) when the ILS takes holds (its 98), and on
   * available ones with shelfRequests. VuFind's DAIA driver offers a recall
   * or a request only where there is one, and follows it only without PAIA.
   * null: this gateway's own DAIA URL for the copy (http.publicUrl, or where
   * it listens, + /daia?id={item}&format=json). A discovery system that uses
   * DAIA alone: the hold page of the library's OPAC.
   */
  requestUrl: z
    .string(must(`must be a URL template containing {item} or {barcode}, e.g. "${REQUEST_URL_EXAMPLE}", or null`))
    .superRefine((value, ctx) => {
      const problem = requestLinkProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: `${problem}, e.g. "${REQUEST_URL_EXAMPLE}"` });
    })
    .nullable()
    .default(null),
  /**
   * The library takes requests for copies on the shelf (a closed stack, a
   * storage it fetches from): available services carry requestUrl too, and
   * discovery systems offer a request button there. false: only copies that
   * are not on the shelf can be asked for.
   */
  shelfRequests: flag().default(false),
  /**
   * The library as every copy's department (the location discovery systems
   * show; VuFind: "Unknown" without one). A copy whose 18 names another
   * owner (BG) keeps that owner instead.
   */
  department: section({
    /** The library's name; null: the name the ILS sends in its 98 (AM), else sip2.institution. */
    content: z
      .string(must('must be the name of the library, e.g. "Stadtbibliothek Musterstadt", or null'))
      .trim()
      .min(1, must('must be the name of the library, e.g. "Stadtbibliothek Musterstadt", or null'))
      .max(200, must('must be at most 200 characters long'))
      .nullable()
      .default(null),
    /** The library's URI (e.g. its ISIL as a URI, "http://lobid.org/organisations/DE-7"); null: none. */
    id: z
      .string(must(`must be an absolute URI, e.g. "${DEPARTMENT_ID_EXAMPLE}", or null`))
      .refine((value) => absoluteUri(value), must(`must be an absolute URI, e.g. "${DEPARTMENT_ID_EXAMPLE}", or null`))
      .nullable()
      .default(null),
  }),
  /** DAIA by record: which ids name records, and where their copies' barcodes come from. */
  records: recordsSection,
});
