import { describe, expect, it } from 'vitest';
import { accountState, expiryOf, hasExcessiveFees, localDateOf } from '../../../src/backend/account-state.js';
import type { AccountState } from '../../../src/backend/types.js';
import { noPatronFlags } from '../../../src/sip2/codec.js';
import { sip2DateFrom } from '../../../src/sip2/date.js';
import {
  BUILTIN_DIALECTS,
  DATE_FORMATS,
  type DateFormat,
  type Dialect,
  formatDialectDate,
  loadDialect,
} from '../../../src/sip2/dialect.js';
import type { PatronInformationResponse, PatronStatusFlags } from '../../../src/sip2/spec.js';

const NOW = new Date(2026, 2, 15, 12, 0, 0); // 15 March 2026, local noon
const TODAY = '2026-03-15';

function daysFromNow(days: number): Date {
  return new Date(NOW.getFullYear(), NOW.getMonth(), NOW.getDate() + days, 12, 0, 0);
}

function response64(options: {
  expires?: { field: string; text: string };
  flags?: Partial<PatronStatusFlags>;
  feeAmount?: string;
  feeLimit?: string;
  validPatron?: boolean;
}): PatronInformationResponse {
  return {
    code: '64',
    patronStatus: { ...noPatronFlags(), ...options.flags },
    language: '000',
    transactionDate: sip2DateFrom(NOW),
    holdItemsCount: 0,
    overdueItemsCount: 0,
    chargedItemsCount: 0,
    fineItemsCount: 0,
    recallItemsCount: 0,
    unavailableHoldsCount: 0,
    institutionId: 'DEMO',
    patronIdentifier: 'p1',
    personalName: 'P One',
    validPatron: options.validPatron ?? true,
    currencyType: 'EUR',
    ...(options.feeAmount !== undefined ? { feeAmount: options.feeAmount } : {}),
    ...(options.feeLimit !== undefined ? { feeLimit: options.feeLimit } : {}),
    ...(options.expires ? { extra: [[options.expires.field, options.expires.text]] as Array<[string, string]> } : {}),
  };
}

/** The built-in dialects, plus the generic one with each date format the schema allows for the expiry field. */
const DIALECTS: Array<[string, Dialect]> = [
  ...BUILTIN_DIALECTS.map((name): [string, Dialect] => [name, loadDialect(name)]),
  ...DATE_FORMATS.map((format): [string, Dialect] => [
    `PX as ${format}`,
    { ...loadDialect('generic'), name: 'custom', expiry: { field: 'PX', format } },
  ]),
];

function expiryText(dialect: Dialect, days: number): { field: string; text: string } | undefined {
  if (!dialect.expiry) return undefined;
  return {
    field: dialect.expiry.field,
    text: formatDialectDate(sip2DateFrom(daysFromNow(days)), dialect.expiry.format as DateFormat),
  };
}

describe.each(DIALECTS)('account state (%s)', (_, dialect) => {
  const state = (r: PatronInformationResponse): AccountState => accountState(r, dialect, TODAY);
  const expired = expiryText(dialect, -30);
  const valid = expiryText(dialect, 365);
  const fees = { flags: { excessiveOutstandingFines: true, chargePrivilegesDenied: true } };
  // What an ILS sets for an expired account (as the simulator and SIPServer do).
  const expiredFlags = {
    chargePrivilegesDenied: true,
    renewalPrivilegesDenied: true,
    recallPrivilegesDenied: true,
    holdPrivilegesDenied: true,
  };

  it('0: active', () => {
    expect(state(response64({ expires: valid }))).toBe(0);
    expect(state(response64({}))).toBe(0);
  });

  it('1: inactive (charge privileges denied, card lost, not a valid patron)', () => {
    expect(state(response64({ expires: valid, flags: { chargePrivilegesDenied: true } }))).toBe(1);
    expect(state(response64({ expires: valid, flags: { cardReportedLost: true } }))).toBe(1);
    expect(state(response64({ expires: valid, validPatron: false }))).toBe(1);
  });

  if (dialect.expiry) {
    it('2: expired', () => {
      expect(state(response64({ expires: expired, flags: expiredFlags }))).toBe(2);
      expect(state(response64({ expires: expired }))).toBe(2);
    });

    it('3: outstanding fees (flags, or BV over CC)', () => {
      expect(state(response64({ expires: valid, ...fees }))).toBe(3);
      expect(state(response64({ expires: valid, flags: { excessiveOutstandingFees: true } }))).toBe(3);
      expect(state(response64({ expires: valid, feeAmount: '12.00', feeLimit: '10.00' }))).toBe(3);
    });

    it('4: expired and fees', () => {
      expect(state(response64({ expires: expired, flags: { ...expiredFlags, excessiveOutstandingFines: true } }))).toBe(
        4,
      );
      expect(state(response64({ expires: expired, feeAmount: '10.01', feeLimit: '10' }))).toBe(4);
    });

    it('expires today is not expired yet; yesterday is', () => {
      expect(state(response64({ expires: expiryText(dialect, 0) }))).toBe(0);
      expect(state(response64({ expires: expiryText(dialect, -1) }))).toBe(2);
    });

    it('reads the expiry date', () => {
      expect(expiryOf(response64({ expires: valid }), dialect)).toBe(localDateOf(daysFromNow(365)));
    });
  } else {
    it('2 and 4 cannot be told without an expiry field: an expired account is 1 by its flags, 3 with fees', () => {
      expect(state(response64({ flags: expiredFlags }))).toBe(1);
      expect(state(response64({ flags: { ...expiredFlags, excessiveOutstandingFines: true } }))).toBe(3);
      expect(state(response64({ feeAmount: '12.00', feeLimit: '10.00' }))).toBe(3);
      expect(expiryOf(response64({ expires: { field: 'PA', text: '20200101' } }), dialect)).toBeNull();
    });
  }
});

describe('account state details', () => {
  const generic = loadDialect('generic');

  it('an unreadable or empty expiry field is no expiry, nor is one in year 0000', () => {
    for (const text of ['', '   ', 'never', '20261399', '2026-02-30', '00000000', '00000101', '00000101   Z000000']) {
      const r = response64({ expires: { field: 'PA', text } });
      expect(expiryOf(r, generic)).toBeNull();
      expect(accountState(r, generic, TODAY)).toBe(0);
    }
  });

  it('fees: BV at the limit is fine; unreadable amounts or a missing limit say nothing', () => {
    expect(hasExcessiveFees(response64({ feeAmount: '10.00', feeLimit: '10.00' }))).toBe(false);
    expect(hasExcessiveFees(response64({ feeAmount: '10,01', feeLimit: '10.00' }))).toBe(true);
    expect(hasExcessiveFees(response64({ feeAmount: '-5.00', feeLimit: '0.00' }))).toBe(false);
    expect(hasExcessiveFees(response64({ feeAmount: '99.00' }))).toBe(false);
    expect(hasExcessiveFees(response64({ feeAmount: 'lots', feeLimit: '1.00' }))).toBe(false);
  });

  it('today is the local calendar date', () => {
    expect(localDateOf(NOW)).toBe(TODAY);
    expect(localDateOf(new Date(2026, 0, 1, 0, 0, 1))).toBe('2026-01-01');
    expect(localDateOf(new Date(2025, 11, 31, 23, 59, 59))).toBe('2025-12-31');
  });
});
