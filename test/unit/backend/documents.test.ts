import { describe, expect, it } from 'vitest';
import { type EntryKind, renewalOffered, settledKind } from '../../../src/backend/documents.js';
import { sip2DateFrom } from '../../../src/sip2/date.js';
import { loadDialect } from '../../../src/sip2/dialect.js';
import { CIRCULATION_STATUS, type ItemInformationResponse } from '../../../src/sip2/spec.js';

const info = (circulationStatus: number | null): ItemInformationResponse => ({
  code: '18',
  circulationStatus,
  securityMarker: 2,
  feeType: 1,
  transactionDate: sip2DateFrom(new Date(2026, 2, 15)),
  itemIdentifier: 'b1',
  titleIdentifier: 'A title',
});

describe('renewalOffered (canrenew)', () => {
  // VuFind PAIA.php myTransactionsMapping: `renewable` and `renew_details` (the renew checkbox) only for a
  // loan whose canrenew is set and true; an absent canrenew is read as false.
  it('false when the 64 denies renewal privileges, whatever the 98 says', () => {
    expect(renewalOffered(true, true)).toBe(false);
    expect(renewalOffered(true, undefined)).toBe(false);
  });

  it("otherwise what the 98's BX renew position says; unknown (left out) without a 98", () => {
    expect(renewalOffered(false, true)).toBe(true);
    expect(renewalOffered(false, false)).toBe(false);
    expect(renewalOffered(false, undefined)).toBeUndefined();
  });
});

describe('settledKind (a hold against its item 18)', () => {
  const allInAs = ['generic', 'evergreen', 'folio'].map((name) => loadDialect(name));
  const S = CIRCULATION_STATUS;

  // VuFind PAIA.php myHoldsMapping: `available` (VuFind's "ready for pickup") is status 4 and nothing else.
  it('all-in-AS: an AS hold whose item is on loan, on the shelf, on its way or gone is pending, not ready', () => {
    for (const dialect of allInAs) {
      const contradicting = [S.charged, S.chargedNoRecall, S.recalled, S.available, S.inTransit, S.onOrder];
      for (const status of [...contradicting, S.inProcess, S.reshelving, S.lost, S.missing, S.claimedReturned]) {
        expect(settledKind('ready', info(status), dialect), `${dialect.name} ${status}`).toBe('pending');
      }
    }
  });

  it('all-in-AS: on the hold shelf, or a status that does not say, stays ready', () => {
    for (const dialect of allInAs) {
      for (const status of [S.holdShelf, S.other, null]) {
        expect(settledKind('ready', info(status), dialect), `${dialect.name} ${status}`).toBe('ready');
      }
    }
  });

  it('koha (ready-in-AS): AS says ready and the 18 is not asked; loans and pending holds are never changed', () => {
    const koha = loadDialect('koha');
    expect(settledKind('ready', info(S.charged), koha)).toBe('ready');
    for (const kind of ['held', 'pending'] as EntryKind[]) {
      for (const dialect of [koha, ...allInAs]) {
        expect(settledKind(kind, info(S.holdShelf), dialect)).toBe(kind);
        expect(settledKind(kind, info(S.available), dialect)).toBe(kind);
      }
    }
  });
});
