import {
  type Dialect,
  extraField,
  isoDateOf,
  type PatronInformationResponse,
  parseDialectDate,
  sip2DateFrom,
} from '../sip2/index.js';
import { parseAmount } from './money.js';
import type { AccountState } from './types.js';

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
