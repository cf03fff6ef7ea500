import { describe, expect, it } from 'vitest';
import {
  addDays,
  dayFrom,
  formatCents,
  loadLibraryData,
  parseCents,
  parseLibraryData,
} from '../../../sip2-simulator/src/data.js';
import { Library, pageSlice } from '../../../sip2-simulator/src/library.js';
import { CIRCULATION_STATUS } from '../../../src/sip2/spec.js';

// A fixed local "now": 15 March 2026, noon.
const NOW = new Date(2026, 2, 15, 12, 0, 0);
const demo = () => new Library(loadLibraryData(), { now: () => NOW });
const ymd = (d: Date) =>
  `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;

describe('relative dates', () => {
  it('resolves day offsets to the end of local calendar days', () => {
    expect(dayFrom(NOW, -5)).toEqual(new Date(2026, 2, 10, 23, 59, 59));
    expect(dayFrom(NOW, 17)).toEqual(new Date(2026, 3, 1, 23, 59, 59)); // across a month end
    expect(dayFrom(NOW, 0, [9, 0, 0])).toEqual(new Date(2026, 2, 15, 9, 0, 0));
    expect(addDays(new Date(2026, 1, 20, 23, 59, 59), 28)).toEqual(new Date(2026, 2, 20, 23, 59, 59));
  });

  it('puts the demo data around the clock: overdue, expired, waiting holds', () => {
    const library = demo();
    expect(ymd(library.item('it-0001')!.loan!.due)).toBe('2026-03-10');
    const alice = library.summary('alice')!;
    expect(alice.overdue.map((item) => item.barcode)).toEqual(['it-0001']);
    expect(alice.loans.map((item) => item.barcode)).toEqual(['it-0001', 'it-0002', 'it-0003']);
    expect(alice.expired).toBe(false);
    expect(library.summary('bob')!.expired).toBe(true);
    expect(ymd(library.waitingHoldOn(library.item('it-0010')!)!.waiting!.pickupBy)).toBe('2026-03-20');
  });

  it('gives the same dates relative to any day the data is loaded', () => {
    const later = new Date(2027, 0, 31, 8, 0, 0);
    const library = new Library(loadLibraryData(), { now: () => later });
    expect(ymd(library.item('it-0001')!.loan!.due)).toBe('2027-01-26');
  });
});

describe('money', () => {
  it('parses and formats amounts without floating point', () => {
    expect(parseCents('2.50')).toBe(250);
    expect(parseCents('0.1')).toBe(10);
    expect(parseCents('12')).toBe(1200);
    expect(parseCents('1,05')).toBe(105);
    expect(parseCents('-1.00')).toBeNull();
    expect(parseCents('abc')).toBeNull();
    expect(formatCents(1200)).toBe('12.00');
    expect(formatCents(5)).toBe('0.05');
  });
});

describe('renew rules', () => {
  it('renews from the old due date when it is in the future', () => {
    const library = demo();
    const result = library.renew('alice', 'it-0002');
    expect(result.ok).toBe(true);
    expect(ymd(library.item('it-0002')!.loan!.due)).toBe('2026-04-22'); // 25 March + 28 days
    expect(library.item('it-0002')!.loan!.renewals).toBe(1);
  });

  it('renews an overdue loan from today', () => {
    const library = demo();
    expect(library.renew('alice', 'it-0001').ok).toBe(true);
    expect(ymd(library.item('it-0001')!.loan!.due)).toBe('2026-04-12'); // 15 March + 28 days
    expect(library.summary('alice')!.overdue).toEqual([]);
  });

  it('refuses at the renewal limit, for expired patrons, with holds queued, and for loans of others', () => {
    const library = demo();
    const before = library.item('it-0003')!.loan!.due;
    expect(library.renew('alice', 'it-0003')).toMatchObject({ ok: false, reason: 'Renewal limit reached' });
    expect(library.item('it-0003')!.loan!.due).toEqual(before);
    expect(library.renew('bob', 'it-0060')).toMatchObject({ ok: false, reason: 'Renewal privileges denied' });
    expect(library.renew('frank', 'it-0020')).toMatchObject({ ok: false, reason: 'Item has holds queued' });
    // a title-level hold blocks too
    expect(library.renew('carol', 'it-0070')).toMatchObject({ ok: false, reason: 'Item has holds queued' });
    expect(library.renew('alice', 'it-0020')).toMatchObject({
      ok: false,
      reason: 'Item not checked out to this patron',
    });
    expect(library.renew('alice', 'nope')).toMatchObject({ ok: false, reason: 'Item not found' });
    expect(library.renew('nobody', 'it-0002')).toMatchObject({ ok: false, reason: 'Patron not found' });
  });

  it('counts renewals up to the limit of 3', () => {
    const library = demo();
    for (let i = 0; i < 3; i++) expect(library.renew('alice', 'it-0002').ok).toBe(true);
    expect(library.renew('alice', 'it-0002')).toMatchObject({ ok: false, reason: 'Renewal limit reached' });
  });

  it('renews all it can and lists the rest', () => {
    const library = demo();
    const result = library.renewAll('alice');
    expect(result.ok).toBe(true);
    expect(result.renewed.map((item) => item.barcode)).toEqual(['it-0001', 'it-0002']);
    expect(result.unrenewed.map(({ item, reason }) => [item.barcode, reason])).toEqual([
      ['it-0003', 'Renewal limit reached'],
    ]);
    expect(library.renewAll('bob')).toMatchObject({ ok: false, renewed: [] });
  });
});

describe('hold rules', () => {
  it('places an item hold at the end of the queue with the home library as default pickup', () => {
    const library = demo();
    const result = library.placeHold('dave', { item: 'it-0020' });
    expect(result).toMatchObject({ ok: true, queuePosition: 3, available: false });
    if (!result.ok) throw new Error('unreachable');
    expect(result.hold.pickupLocation).toBe('MAIN');
    expect(result.hold.target).toEqual({ kind: 'item', barcode: 'it-0020' });
    expect(ymd(result.hold.expires)).toBe('2027-03-15');
    expect(library.holdsOnItem(library.item('it-0020')!).map((hold) => hold.patron)).toEqual(['gina', 'alice', 'dave']);
  });

  it('places title-level holds by title id or exact title, and sees them as duplicates', () => {
    const library = demo();
    const result = library.placeHold('emile', { title: 'Die Verwandlung', pickupLocation: 'MAIN' });
    expect(result).toMatchObject({ ok: true, queuePosition: 1, available: true, titleId: 't-verwandlung' });
    expect(library.placeHold('emile', { title: 't-verwandlung' })).toMatchObject({
      ok: false,
      reason: 'Patron already has a hold on this item or title',
    });
    expect(library.placeHold('emile', { item: 'it-0032' })).toMatchObject({
      ok: false,
      reason: 'Patron already has a hold on this item or title',
    });
    expect(library.placeHold('emile', { title: 'no such title' })).toMatchObject({
      ok: false,
      reason: 'Title not found',
    });
  });

  it('refuses duplicates, own loans, blocked patrons, unknown and lost items', () => {
    const library = demo();
    expect(library.placeHold('alice', { item: 'it-0020' })).toMatchObject({
      ok: false,
      reason: 'Patron already has a hold on this item or title',
    });
    expect(library.placeHold('alice', { item: 'it-0002' })).toMatchObject({
      ok: false,
      reason: 'Item is checked out to this patron',
    });
    expect(library.placeHold('bob', { item: 'it-0030' })).toMatchObject({
      ok: false,
      reason: 'Hold privileges denied',
    });
    expect(library.placeHold('alice', { item: 'xx-9999' })).toMatchObject({ ok: false, reason: 'Item not found' });
    expect(library.placeHold('alice', { item: 'it-0050' })).toMatchObject({
      ok: false,
      reason: 'Item is lost and cannot be held',
    });
    expect(library.placeHold('alice', {})).toMatchObject({ ok: false, reason: 'No item or title given' });
    expect(library.holds()).toHaveLength(5);
  });

  it('cancels a hold, moving the queue up; a cancelled waiting hold frees the item', () => {
    const library = demo();
    expect(library.cancelHold('gina', { item: 'it-0020' }).ok).toBe(true);
    const alicesHold = library
      .holdsOf('alice')
      .find((hold) => hold.target.kind === 'item' && hold.target.barcode === 'it-0020')!;
    expect(library.queuePosition(alicesHold)).toBe(1);
    expect(library.cancelHold('gina', { item: 'it-0020' })).toMatchObject({ ok: false, reason: 'No such hold' });
    expect(library.circulationStatus(library.item('it-0010')!)).toBe(CIRCULATION_STATUS.holdShelf);
    expect(library.cancelHold('alice', { item: 'it-0010' }).ok).toBe(true);
    expect(library.circulationStatus(library.item('it-0010')!)).toBe(CIRCULATION_STATUS.available);
    // a title-level hold is found through any item of the title
    expect(library.cancelHold('emile', { item: 'it-0070' }).ok).toBe(true);
  });

  it('changes the pickup location of a pending hold only', () => {
    const library = demo();
    expect(library.changePickup('alice', { item: 'it-0020', pickupLocation: 'MAIN' })).toMatchObject({ ok: true });
    expect(library.findHold('alice', { item: 'it-0020' })!.pickupLocation).toBe('MAIN');
    expect(library.changePickup('alice', { item: 'it-0010', pickupLocation: 'BRANCH' })).toMatchObject({ ok: false });
    expect(library.changePickup('alice', { item: 'it-0020' })).toMatchObject({
      ok: false,
      reason: 'No pickup location given',
    });
  });
});

describe('account state', () => {
  it('derives status flags from expiry, fees and the data', () => {
    const library = demo();
    const flagsOf = (barcode: string) =>
      Object.entries(library.flagsOf(library.patron(barcode)!))
        .filter(([, v]) => v)
        .map(([k]) => k);
    expect(flagsOf('alice')).toEqual([]);
    expect(flagsOf('bob')).toEqual([
      'chargePrivilegesDenied',
      'renewalPrivilegesDenied',
      'recallPrivilegesDenied',
      'holdPrivilegesDenied',
    ]);
    expect(flagsOf('carol')).toEqual(['chargePrivilegesDenied', 'excessiveOutstandingFines']);
    expect(flagsOf('gina')).toEqual(['cardReportedLost']);
    expect(library.totalFinesCents('carol')).toBe(1200);
    expect(library.totalFinesCents('alice')).toBe(350);
  });

  it('pays fees against one fine or oldest first, and refuses overpayment', () => {
    const library = demo();
    expect(library.payFee('carol', '2.00')).toEqual({ ok: true, paidCents: 200 });
    expect(library.totalFinesCents('carol')).toBe(1000);
    // the oldest fine (lost, 9.00) was reduced; at the limit, no longer blocked
    expect(library.finesOf('carol').map((fine) => [fine.id, fine.amountCents])).toEqual([
      ['f-0003', 700],
      ['f-0004', 300],
    ]);
    expect(library.flagsOf(library.patron('carol')!).chargePrivilegesDenied).toBe(false);
    expect(library.payFee('alice', '2.50', { feeId: 'f-0001' })).toMatchObject({ ok: true });
    expect(library.finesOf('alice').map((fine) => fine.id)).toEqual(['f-0002']);
    expect(library.payFee('alice', '5.00')).toMatchObject({
      ok: false,
      reason: 'Amount exceeds the outstanding balance',
    });
    expect(library.payFee('alice', '1.00', { feeId: 'f-0001' })).toMatchObject({ ok: false, reason: 'No such fee' });
    expect(library.payFee('alice', '0.00')).toMatchObject({ ok: false, reason: 'Invalid amount' });
    expect(library.payFee('alice', '1.00', { currency: 'USD' })).toMatchObject({ ok: false });
  });

  it('reload() returns to the data file', () => {
    const library = demo();
    library.renew('alice', 'it-0002');
    library.placeHold('dave', { item: 'it-0030' });
    library.reload();
    expect(library.item('it-0002')!.loan!.renewals).toBe(0);
    expect(library.holds()).toHaveLength(5);
  });
});

describe('checkout', () => {
  it('lends an available item for the loan period', () => {
    const library = demo();
    const result = library.checkout('hanna', 'sc-0001', { scRenewalPolicy: true, noBlock: false });
    expect(result).toMatchObject({ ok: true, renewal: false });
    if (!result.ok) throw new Error('unreachable');
    expect(ymd(result.due)).toBe('2026-04-12');
    expect(library.item('sc-0001')!.loan).toMatchObject({ patron: 'hanna', renewals: 0 });
    expect(library.loansOf('hanna').map((item) => item.barcode)).toEqual(['sc-0001', 'sc-0002', 'sc-0003']);
    expect(library.circulationStatus(library.item('sc-0001')!)).toBe(CIRCULATION_STATUS.charged);
  });

  it('refuses unknown patrons and items, loans of others, blocked, expired and fee-blocked patrons, and items not on the shelf', () => {
    const library = demo();
    const out = (patron: string, item: string) =>
      library.checkout(patron, item, { scRenewalPolicy: true, noBlock: false });
    expect(out('nobody', 'sc-0001')).toMatchObject({ ok: false, reason: 'Patron not found' });
    expect(out('hanna', 'xx-9999')).toMatchObject({ ok: false, reason: 'Item not found' });
    expect(out('hanna', 'it-0020')).toMatchObject({ ok: false, reason: 'Item is checked out to another patron' });
    expect(out('jonas', 'sc-0001')).toMatchObject({
      ok: false,
      reason: 'Card retained at self-check: please see the front desk',
    });
    expect(out('bob', 'sc-0001')).toMatchObject({ ok: false, reason: 'Charge privileges denied' });
    expect(out('carol', 'sc-0001')).toMatchObject({ ok: false, reason: 'Charge privileges denied' });
    expect(out('hanna', 'it-0050')).toMatchObject({ ok: false, reason: 'Item is lost' });
    expect(out('hanna', 'it-0040')).toMatchObject({ ok: false, reason: 'Item is in-transit' });
    expect(library.item('sc-0001')!.loan).toBeNull();
  });

  it("refuses an item held for another patron, and fills the patron's own hold", () => {
    const library = demo();
    const out = (patron: string, item: string) =>
      library.checkout(patron, item, { scRenewalPolicy: true, noBlock: false });
    // it-0010 waits on the hold shelf for alice
    expect(out('hanna', 'it-0010')).toMatchObject({ ok: false, reason: 'Item is on hold for another patron' });
    expect(out('alice', 'it-0010')).toMatchObject({ ok: true });
    expect(library.holdsOf('alice').map((hold) => hold.id)).toEqual(['h-0003']);
    expect(library.circulationStatus(library.item('it-0010')!)).toBe(CIRCULATION_STATUS.charged);
  });

  it('renews an item the patron already has when the SC allows renewals (renewal ok), refuses otherwise', () => {
    const library = demo();
    expect(library.checkout('alice', 'it-0002', { scRenewalPolicy: false, noBlock: false })).toMatchObject({
      ok: false,
      reason: 'Item is already checked out to this patron',
    });
    const renewed = library.checkout('alice', 'it-0002', { scRenewalPolicy: true, noBlock: false });
    expect(renewed).toMatchObject({ ok: true, renewal: true });
    expect(library.item('it-0002')!.loan!.renewals).toBe(1);
    expect(library.checkout('alice', 'it-0003', { scRenewalPolicy: true, noBlock: false })).toMatchObject({
      ok: false,
      reason: 'Renewal limit reached',
    });
  });

  it('stops at the charged items limit and flags it', () => {
    const data = parseLibraryData({
      institution: 'X',
      libraryName: 'X',
      currency: 'EUR',
      defaultLocation: 'MAIN',
      terminals: [{ login: 'a', password: 'b' }],
      patrons: [{ barcode: 'p1', password: 'pw', name: 'P', chargedItemsLimit: 1, holdItemsLimit: 0 }],
      items: [
        { barcode: 'i1', title: 'T1', callNumber: 'C1' },
        { barcode: 'i2', title: 'T2', callNumber: 'C2' },
      ],
    });
    const library = new Library(data, { now: () => NOW });
    expect(library.flagsOf(library.patron('p1')!).tooManyItemsCharged).toBe(false);
    expect(library.checkout('p1', 'i1', { scRenewalPolicy: true, noBlock: false }).ok).toBe(true);
    expect(library.flagsOf(library.patron('p1')!).tooManyItemsCharged).toBe(true);
    expect(library.checkout('p1', 'i2', { scRenewalPolicy: true, noBlock: false })).toMatchObject({
      ok: false,
      reason: 'Charged items limit reached',
    });
    expect(library.placeHold('p1', { item: 'i2' })).toMatchObject({ ok: false, reason: 'Hold limit reached' });
  });

  it("records a no-block checkout (done off-line) whatever blocks the patron, with the SC's due date", () => {
    const library = demo();
    const nbDue = new Date(2026, 2, 29, 23, 59, 59);
    const result = library.checkout('jonas', 'sc-0001', { scRenewalPolicy: false, noBlock: true, nbDueDate: nbDue });
    expect(result).toMatchObject({ ok: true, due: nbDue });
    expect(library.item('sc-0001')!.loan!.patron).toBe('jonas');
  });
});

describe('checkin', () => {
  it('ends the loan; the first pending hold for this location puts the item on the hold shelf', () => {
    const library = demo();
    const result = library.checkin('it-0020', 'MAIN');
    expect(result).toMatchObject({
      ok: true,
      returnedBy: { barcode: 'frank' },
      route: { kind: 'hold-shelf', hold: { id: 'h-0002', patron: 'gina' } },
    });
    const item = library.item('it-0020')!;
    expect(item.loan).toBeNull();
    expect(library.loansOf('frank')).toEqual([]);
    expect(library.circulationStatus(item)).toBe(CIRCULATION_STATUS.holdShelf);
    expect(ymd(library.waitingHoldOn(item)!.waiting!.pickupBy)).toBe('2026-03-22');
    // alice, second in the queue, still waits
    expect(library.summary('alice')!.pendingHolds.map((hold) => hold.id)).toEqual(['h-0003']);
    expect(library.summary('gina')!.readyHolds.map((hold) => hold.id)).toEqual(['h-0002']);
  });

  it('sends an item held for another location in transit, and onto that hold shelf when it arrives', () => {
    const library = demo();
    expect(library.checkin('sc-0002', 'MAIN')).toMatchObject({
      ok: true,
      route: { kind: 'hold-transit', to: 'BRANCH', hold: { patron: 'ida' } },
    });
    expect(library.circulationStatus(library.item('sc-0002')!)).toBe(CIRCULATION_STATUS.inTransit);
    expect(library.item('sc-0002')!.currentLocation).toBe('MAIN');
    expect(library.checkin('sc-0002', 'BRANCH')).toMatchObject({
      ok: true,
      returnedBy: undefined,
      route: { kind: 'hold-shelf', hold: { patron: 'ida' } },
    });
    expect(library.circulationStatus(library.item('sc-0002')!)).toBe(CIRCULATION_STATUS.holdShelf);
  });

  it('fills a title-level hold with the returned copy', () => {
    const library = demo();
    // emile's hold on t-vorleser picks up at emile's home library, BRANCH
    expect(library.checkin('it-0070', 'BRANCH')).toMatchObject({
      ok: true,
      route: { kind: 'hold-shelf', hold: { id: 'h-0004', patron: 'emile' } },
    });
    expect(library.waitingHoldOn(library.item('it-0070')!)!.id).toBe('h-0004');
  });

  it('sends an item of another location home, and shelves the others', () => {
    const library = demo();
    expect(library.checkin('sc-0003', 'MAIN')).toMatchObject({
      ok: true,
      route: { kind: 'home-transit', to: 'BRANCH' },
    });
    expect(library.checkin('it-0002', 'MAIN')).toMatchObject({
      ok: true,
      returnedBy: { barcode: 'alice' },
      route: { kind: 'shelf' },
    });
    expect(library.circulationStatus(library.item('it-0002')!)).toBe(CIRCULATION_STATUS.available);
  });

  it('refuses unknown items and items that were not checked out, changing nothing', () => {
    const library = demo();
    expect(library.checkin('xx-9999', 'MAIN')).toMatchObject({ ok: false, reason: 'Item not found' });
    expect(library.checkin('it-0030', 'BRANCH')).toMatchObject({ ok: false, reason: 'Item was not checked out' });
    expect(library.item('it-0030')!.currentLocation).toBe('MAIN');
  });
});

describe('block, enable, item status update', () => {
  it('a block denies every privilege until an enable lifts it; flags from the data stay', () => {
    const library = demo();
    const on = (barcode: string) =>
      Object.entries(library.flagsOf(library.patron(barcode)!))
        .filter(([, v]) => v)
        .map(([k]) => k);
    library.block('gina', 'card left behind');
    expect(on('gina')).toEqual([
      'chargePrivilegesDenied',
      'renewalPrivilegesDenied',
      'recallPrivilegesDenied',
      'holdPrivilegesDenied',
      'cardReportedLost',
    ]);
    expect(library.patron('gina')!.blocked).toEqual({ reason: 'card left behind' });
    expect(library.enable('gina')).toBe(true);
    expect(on('gina')).toEqual(['cardReportedLost']);
    expect(library.enable('gina')).toBe(false);
    library.block('alice', '   ');
    expect(library.patron('alice')!.blocked!.reason).toBe('Card blocked: please contact library staff');
    expect(library.block('nobody', 'x')).toBeUndefined();
    expect(on('jonas')).toEqual([
      'chargePrivilegesDenied',
      'renewalPrivilegesDenied',
      'recallPrivilegesDenied',
      'holdPrivilegesDenied',
    ]);
  });

  it('stores item properties', () => {
    const library = demo();
    expect(library.item('sc-0001')!.itemProperties).toBe('RFID tag 3M-0001');
    expect(library.updateItemProperties('sc-0001', 'weight 310 g')!.itemProperties).toBe('weight 310 g');
    expect(library.updateItemProperties('xx-9999', 'x')).toBeUndefined();
  });
});

describe('items', () => {
  it('maps every shelf state to its circulation status', () => {
    const library = demo();
    const status = (barcode: string) => library.circulationStatus(library.item(barcode)!);
    expect(status('it-0030')).toBe(3);
    expect(status('it-0020')).toBe(4);
    expect(status('it-0010')).toBe(8);
    expect(status('it-0040')).toBe(10);
    expect(status('it-0050')).toBe(12);
    expect(status('it-0051')).toBe(13);
  });

  it('counts item and title holds in the hold queue', () => {
    const library = demo();
    expect(library.holdsOnItem(library.item('it-0020')!)).toHaveLength(2);
    expect(library.holdsOnItem(library.item('it-0070')!)).toHaveLength(1);
    expect(library.holdsOnItem(library.item('it-0030')!)).toHaveLength(0);
  });
});

describe('pageSlice', () => {
  const list = Array.from({ length: 120 }, (_, i) => i + 1);
  it('is 1-based and inclusive', () => {
    expect(pageSlice(list, '1', '5', 50)).toEqual([1, 2, 3, 4, 5]);
    expect(pageSlice(list, '51', '100', 50)).toEqual(list.slice(50, 100));
    expect(pageSlice(list, '101', '150', 50)).toEqual(list.slice(100));
  });
  it('never returns more than the limit', () => {
    expect(pageSlice(list, '1', '120', 50)).toHaveLength(50);
    expect(pageSlice(list, undefined, undefined, 20)).toEqual(list.slice(0, 20));
    expect(pageSlice(list, '11', undefined, 20)).toEqual(list.slice(10, 30));
  });
  it('copes with empty, reversed and unreadable ranges', () => {
    expect(pageSlice(list, '130', '140', 50)).toEqual([]);
    expect(pageSlice(list, '10', '5', 50)).toEqual([]);
    expect(pageSlice(list, 'x', ' 3', 50)).toEqual([1, 2, 3]);
    expect(pageSlice(list, '0', '2', 50)).toEqual([1, 2]);
    expect(pageSlice([], '1', '10', 50)).toEqual([]);
  });
});

describe('data file', () => {
  const minimal = () => ({
    institution: 'X',
    libraryName: 'X library',
    currency: 'EUR',
    defaultLocation: 'MAIN',
    terminals: [{ login: 'a', password: 'b' }],
    patrons: [{ barcode: 'p1', password: 'pw', name: 'P One' }],
    items: [{ barcode: 'i1', title: 'T', callNumber: 'C 1', loan: { patron: 'p1', dueInDays: 3 } }],
  });

  it('accepts a minimal file and fills defaults', () => {
    const data = parseLibraryData(minimal());
    expect(data.rules).toEqual({ loanPeriodDays: 28, renewalLimit: 3, holdExpiryDays: 365, holdPickupDays: 7 });
    expect(data.items[0]!.mediaType).toBe('001');
    const library = new Library(data, { now: () => NOW });
    expect(library.item('i1')!.titleId).toBe('t-i1');
  });

  it('rejects values SIP2 cannot carry and dangling references, naming the record and the field', () => {
    const withBar = minimal();
    withBar.patrons[0]!.name = 'A|B';
    expect(() => parseLibraryData(withBar)).toThrow(/patrons\[0\] \(barcode "p1"\)\.name: must not contain "\|"/);
    const tooLong = minimal();
    tooLong.items[0]!.title = 'x'.repeat(256);
    expect(() => parseLibraryData(tooLong)).toThrow(/items\[0\] \(barcode "i1"\)\.title: must be at most 255/);
    const dangling = minimal();
    dangling.items[0]!.loan.patron = 'ghost';
    expect(() => parseLibraryData(dangling)).toThrow(
      /items\[0\] \(barcode "i1"\)\.loan\.patron: unknown patron "ghost"/,
    );
    expect(() => parseLibraryData({ ...minimal(), holds: [{ patron: 'p1', item: 'i1', title: 't-i1' }] })).toThrow(
      /exactly one of/,
    );
    expect(() => parseLibraryData({ ...minimal(), surprise: 1 })).toThrow(/surprise/);
  });

  it('checks the patron fields of the 64 (birth date, limits, block) and names the record', () => {
    const withPatron = (fields: Record<string, unknown>) => ({
      ...minimal(),
      patrons: [
        { barcode: 'p1', password: 'pw', name: 'P One' },
        { barcode: 'emile', password: 'pw', name: 'E', ...fields },
      ],
    });
    expect(() => parseLibraryData(withPatron({ birthDate: '30.06.1985' }))).toThrow(
      'patrons[1] (barcode "emile").birthDate: must be YYYY-MM-DD',
    );
    expect(() => parseLibraryData(withPatron({ birthDate: '1985-02-30' }))).toThrow(
      'patrons[1] (barcode "emile").birthDate: must be YYYY-MM-DD',
    );
    expect(() => parseLibraryData(withPatron({ chargedItemsLimit: 10000 }))).toThrow(
      /patrons\[1\] \(barcode "emile"\)\.chargedItemsLimit: .*9999/,
    );
    expect(() => parseLibraryData(withPatron({ blocked: 3 }))).toThrow(
      'patrons[1] (barcode "emile").blocked: must be true, false or the reason as text',
    );
    expect(() => parseLibraryData(withPatron({ blocked: 'lost|found' }))).toThrow(
      'patrons[1] (barcode "emile").blocked: must be at most 255 characters without "|", CR, LF or NUL',
    );
    expect(() => parseLibraryData(withPatron({ internetProfile: 'a|b' }))).toThrow(
      /patrons\[1\] \(barcode "emile"\)\.internetProfile: must not contain/,
    );
    expect(() =>
      parseLibraryData(withPatron({ fines: [{ id: 'f-1', amount: '2,50', type: 'overdue', dateInDays: -1 }] })),
    ).toThrow(/patrons\[1\] \(barcode "emile"\)\.fines\[0\] \(id "f-1"\)\.amount: must be an amount like "2\.50"/);
    expect(() => parseLibraryData({ ...minimal(), holds: [{ patron: 'ghost', item: 'i1' }] })).toThrow(
      'holds[0] (patron "ghost").patron: unknown patron "ghost"',
    );
    const data = parseLibraryData(
      withPatron({
        birthDate: '1985-06-30',
        internetProfile: 'Y',
        holdItemsLimit: 2,
        overdueItemsLimit: 1,
        chargedItemsLimit: 3,
        screenMessage: 'Hi',
        printLine: 'Thanks',
        blocked: 'Lost card',
      }),
    );
    const patron = new Library(data, { now: () => NOW }).patron('emile')!;
    expect(patron).toMatchObject({
      birthDate: '1985-06-30',
      internetProfile: 'Y',
      holdItemsLimit: 2,
      chargedItemsLimit: 3,
      blocked: { reason: 'Lost card' },
    });
  });

  it('ships demo data with the documented patrons', () => {
    const library = demo();
    expect(library.summary('dave')!.loans).toHaveLength(120);
    expect(library.patron('emile')!.name).toBe('Émile Zoë Ångström');
    expect(library.loansOf('emile').map((item) => item.title)).toEqual([
      'Der Zauberberg – Roman',
      'Harry Potter y el cáliz de fuego',
      'ノルウェイの森',
    ]);
    expect(library.authenticateTerminal('paia', 'paia-secret')).toEqual({ location: 'MAIN' });
    expect(library.authenticateTerminal('paia', 'wrong')).toBeNull();
  });
});
