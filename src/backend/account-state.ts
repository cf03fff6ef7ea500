import {
  type Dialect,
  extraField,
  isoDateOf,
  type PatronInformationResponse,
  parseDialectDate,
  sip2DateFrom,
} from '../sip2/index.js';
import { nonEmpty } from './documents.js';
import { parseAmount } from './money.js';
import type { AccountState, PatronRecord } from './types.js';
import type { UriTemplate } from './uris.js';

/**
 * The account state of a patron, read from a 64:
 *   4 expired and fees, 2 expired, 3 outstanding fees,
 *   1 otherwise inactive (not a valid patron, charge privileges denied, card reported lost),
 *   0 active.
 * Expired: the dialect's expiry field holds a date before today. Fees: the
 * excessive-fines or excessive-fees flag, or BV above CC when both are given.
 * An ILS without an expiry field (folio) shows an expired account only through
 * its flags, which makes it 1.
 */
export function accountState(response: PatronInformationResponse, dialect: Dialect, today: string): AccountState {
  const expires = expiryOf(response, dialect);
  const expired = expires !== null && expires < today;
  const fees = hasExcessiveFees(response);
  if (expired && fees) return 4;
  if (expired) return 2;
  if (fees) return 3;
  const flags = response.patronStatus;
  if (response.validPatron === false || flags.chargePrivilegesDenied || flags.cardReportedLost) return 1;
  return 0;
}

/** The account expiry date (YYYY-MM-DD) from the dialect's field, or null when absent or unreadable. */
export function expiryOf(response: { extra?: PatronInformationResponse['extra'] }, dialect: Dialect): string | null {
  if (!dialect.expiry) return null;
  const text = extraField(response, dialect.expiry.field);
  if (text === undefined || text.trim() === '') return null;
  return parseDialectDate(text, dialect.expiry.format);
}

export function hasExcessiveFees(response: PatronInformationResponse): boolean {
  const flags = response.patronStatus;
  if (flags.excessiveOutstandingFines || flags.excessiveOutstandingFees) return true;
  if (response.feeAmount === undefined || response.feeLimit === undefined) return false;
  const owed = parseAmount(response.feeAmount);
  const limit = parseAmount(response.feeLimit);
  return owed !== null && limit !== null && owed > limit;
}

/** Today's calendar date (YYYY-MM-DD) where the gateway runs, which is the library's local time. */
export function localDateOf(now: Date): string {
  return isoDateOf(sip2DateFrom(now));
}

/**
 * A patron the ILS knows: BL=Y. An ILS that sends no BL at all is taken at
 * its word when it names the patron.
 */
export function isKnownPatron(response: PatronInformationResponse): boolean {
  return response.validPatron === true || (response.validPatron === undefined && response.personalName.trim() !== '');
}

const EMAIL =
  /^[^\s@"(),:;<>[\\\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

/**
 * The PAIA patron of a known patron's 64: name, state, an email that is one,
 * the address, the expiry (or, for an active account without one the dialect
 * can read, `expiresWhenUnknown`) and the patron class as a type URI.
 */
export function patronRecord(
  response: PatronInformationResponse,
  ctx: { dialect: Dialect; today: string; expiresWhenUnknown: string | null; patronType: UriTemplate | null },
): PatronRecord {
  const record: PatronRecord = {
    name: response.personalName.trim(),
    status: accountState(response, ctx.dialect, ctx.today),
  };
  const email = nonEmpty(response.emailAddress);
  if (email !== undefined && email.length <= 254 && EMAIL.test(email)) record.email = email;
  const address = nonEmpty(response.homeAddress);
  if (address !== undefined) record.address = address;
  const expires = expiryOf(response, ctx.dialect) ?? (record.status === 0 ? ctx.expiresWhenUnknown : null);
  if (expires !== null) record.expires = expires;
  const patronClass = nonEmpty(response.extra?.find(([tag]) => tag === 'PC')?.[1]);
  if (ctx.patronType && patronClass !== undefined) record.type = [ctx.patronType.build(patronClass)];
  return record;
}
