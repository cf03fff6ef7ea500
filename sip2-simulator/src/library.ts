import { CIRCULATION_STATUS, PATRON_STATUS_FLAGS, type PatronStatusFlags } from '../../src/sip2/index.js';
import { addDays, dayFrom, type LibraryData, parseCents } from './data.js';
import { foldIdentifier } from './patron-ids.js';
import type { IdMatch } from './profiles.js';

/**
 * The simulated library: in-memory state built from the data file, and the
 * circulation operations the SIP2 session performs on it. Knows nothing of
 * SIP2 wire formats; returns plain results that responses.ts turns into
 * messages. Every operation changes memory only; reload() goes back to the file.
 */

export interface Patron {
  readonly barcode: string;
  readonly password: string;
  readonly name: string;
  readonly email: string | undefined;
  readonly address: string | undefined;
  readonly phone: string | undefined;
  readonly patronClass: string | undefined;
  readonly homeLibrary: string;
  /** End of the last valid day; null = never expires. */
  readonly expires: Date | null;
  readonly feeLimitCents: number | null;
  readonly flags: Partial<PatronStatusFlags>;
  /** YYYY-MM-DD. */
  readonly birthDate: string | undefined;
  readonly internetProfile: string | undefined;
  readonly holdItemsLimit: number | undefined;
  readonly overdueItemsLimit: number | undefined;
  readonly chargedItemsLimit: number | undefined;
  readonly screenMessage: string | undefined;
  readonly printLine: string | undefined;
  /** Set by 01 Block Patron (or the data), cleared by 25 Patron Enable. */
  blocked: { readonly reason: string } | null;
}

export interface Fine {
  readonly id: string;
  readonly patron: string;
  amountCents: number;
  readonly type: string;
  readonly date: Date;
  readonly item: string | undefined;
  readonly about: string;
}

type ItemState = 'available' | 'in-transit' | 'lost' | 'missing';

interface Loan {
  readonly patron: string;
  due: Date;
  renewals: number;
  readonly checkedOut: Date;
}

export interface Item {
  readonly barcode: string;
  readonly titleId: string;
  readonly title: string;
  readonly callNumber: string;
  readonly mediaType: string;
  readonly permanentLocation: string;
  currentLocation: string;
  readonly owner: string;
  itemProperties: string | undefined;
  state: ItemState;
  loan: Loan | null;
}

export type HoldTarget = { kind: 'item'; barcode: string } | { kind: 'title'; titleId: string };

export interface Hold {
  readonly id: string;
  readonly patron: string;
  readonly target: HoldTarget;
  pickupLocation: string;
  readonly placed: Date;
  readonly expires: Date;
  /** Set when an item waits on the hold shelf for this patron (for a title-level hold: the copy that filled it). */
  waiting: { readonly pickupBy: Date; readonly item: string } | null;
}

export type Refusal = { ok: false; reason: string };

export type RenewResult = { ok: true; item: Item; due: Date } | (Refusal & { item?: Item });

export type HoldResult =
  | { ok: true; hold: Hold; queuePosition: number; available: boolean; item?: Item; titleId?: string }
  | (Refusal & { item?: Item; titleId?: string });

export type FeeResult = { ok: true; paidCents: number } | Refusal;

export type CheckoutResult = { ok: true; item: Item; due: Date; renewal: boolean } | (Refusal & { item?: Item });

/** Where a returned item goes next, and why (the 10's alert, CV and CT follow from it). */
export type CheckinRoute =
  | { kind: 'shelf' }
  | { kind: 'hold-shelf'; hold: Hold }
  | { kind: 'hold-transit'; hold: Hold; to: string }
  | { kind: 'home-transit'; to: string };

export type CheckinResult =
  | { ok: true; item: Item; returnedBy: Patron | undefined; route: CheckinRoute }
  | (Refusal & { item?: Item });

const BLOCKED_CARD_REASON = 'Card blocked: please contact library staff';

/** A view of one patron's account at one moment. */
export interface PatronSummary {
  readonly patron: Patron;
  readonly flags: PatronStatusFlags;
  readonly expired: boolean;
  readonly loans: readonly Item[];
  readonly overdue: readonly Item[];
  readonly holds: readonly Hold[];
  /** Holds whose item waits on the hold shelf. */
  readonly readyHolds: readonly Hold[];
  /** Holds not yet available. */
  readonly pendingHolds: readonly Hold[];
  readonly fines: readonly Fine[];
  readonly totalFinesCents: number;
}

interface State {
  patrons: Map<string, Patron>;
  /** By foldIdentifier(barcode); the first patron in the file wins a shared key. */
  patronsByFold: Map<string, Patron>;
  items: Map<string, Item>;
  fines: Fine[];
  holds: Hold[];
  nextHoldId: number;
}

export interface LibraryOptions {
  /** The clock; tests pin it. */
  now?: () => Date;
}

export class Library {
  readonly now: () => Date;
  private data: LibraryData;
  private state: State;

  constructor(data: LibraryData, options: LibraryOptions = {}) {
    this.now = options.now ?? (() => new Date());
    this.data = data;
    this.state = buildState(data, this.now());
  }

  get institution(): string {
    return this.data.institution;
  }
  get libraryName(): string {
    return this.data.libraryName;
  }
  get currency(): string {
    return this.data.currency;
  }
  get defaultLocation(): string {
    return this.data.defaultLocation;
  }
  get rules(): LibraryData['rules'] {
    return this.data.rules;
  }

  /** Rebuilds the state from (new) data, with dates relative to now. */
  reload(data: LibraryData = this.data): void {
    this.data = data;
    this.state = buildState(data, this.now());
  }

  // ------------------------------------------------------------ lookups

  /** The terminal account's location, or null when CN/CO do not match one. */
  authenticateTerminal(login: string, password: string): { location: string | undefined } | null {
    const terminal = this.data.terminals.find((t) => t.login === login && t.password === password);
    return terminal ? { location: terminal.location } : null;
  }

  patron(barcode: string): Patron | undefined {
    return this.state.patrons.get(barcode);
  }

  /**
   * The patron a client names in AA. Folded (a `_ci` SQL collation): the
   * patron whose barcode has the same foldIdentifier key, the exact barcode
   * first when two share a key (a database's unique index would not let them).
   */
  findPatron(identifier: string, match: IdMatch): Patron | undefined {
    const exact = this.state.patrons.get(identifier);
    if (exact || match === 'exact') return exact;
    return this.state.patronsByFold.get(foldIdentifier(identifier));
  }

  item(barcode: string): Item | undefined {
    return this.state.items.get(barcode);
  }

  items(): IterableIterator<Item> {
    return this.state.items.values();
  }

  holds(): readonly Hold[] {
    return this.state.holds;
  }

  /** Items of a title, found by title id or, failing that, by exact title. */
  titleItems(titleIdOrTitle: string): Item[] {
    const all = [...this.state.items.values()];
    const byId = all.filter((item) => item.titleId === titleIdOrTitle);
    return byId.length > 0 ? byId : all.filter((item) => item.title === titleIdOrTitle);
  }

  isExpired(patron: Patron): boolean {
    return patron.expires !== null && patron.expires.getTime() < this.now().getTime();
  }

  finesOf(barcode: string): Fine[] {
    return this.state.fines.filter((fine) => fine.patron === barcode && fine.amountCents > 0);
  }

  totalFinesCents(barcode: string): number {
    return this.finesOf(barcode).reduce((sum, fine) => sum + fine.amountCents, 0);
  }

  /** The 14 status flags: the library's own plus those that follow from expiry and fees. */
  flagsOf(patron: Patron): PatronStatusFlags {
    const flags = Object.fromEntries(
      PATRON_STATUS_FLAGS.map((flag) => [flag, patron.flags[flag] === true]),
    ) as PatronStatusFlags;
    if (this.isExpired(patron)) {
      flags.chargePrivilegesDenied = true;
      flags.renewalPrivilegesDenied = true;
      flags.recallPrivilegesDenied = true;
      flags.holdPrivilegesDenied = true;
    }
    if (patron.feeLimitCents !== null && this.totalFinesCents(patron.barcode) > patron.feeLimitCents) {
      flags.chargePrivilegesDenied = true;
      flags.excessiveOutstandingFines = true;
    }
    // As the Perl SIPServer blocks a card: every privilege denied until a 25 enables it again.
    if (patron.blocked) {
      flags.chargePrivilegesDenied = true;
      flags.renewalPrivilegesDenied = true;
      flags.recallPrivilegesDenied = true;
      flags.holdPrivilegesDenied = true;
    }
    // At the limit already counts: the patron may not take one more.
    if (patron.chargedItemsLimit !== undefined || patron.overdueItemsLimit !== undefined) {
      const loans = this.loansOf(patron.barcode);
      if (patron.chargedItemsLimit !== undefined && loans.length >= patron.chargedItemsLimit)
        flags.tooManyItemsCharged = true;
      const now = this.now().getTime();
      const overdue = loans.filter((item) => item.loan!.due.getTime() < now).length;
      if (patron.overdueItemsLimit !== undefined && overdue >= patron.overdueItemsLimit)
        flags.tooManyItemsOverdue = true;
    }
    return flags;
  }

  loansOf(barcode: string): Item[] {
    return [...this.state.items.values()].filter((item) => item.loan?.patron === barcode);
  }

  holdsOf(barcode: string): Hold[] {
    return this.state.holds.filter((hold) => hold.patron === barcode);
  }

  summary(barcode: string): PatronSummary | undefined {
    const patron = this.patron(barcode);
    if (!patron) return undefined;
    const now = this.now().getTime();
    const loans = this.loansOf(barcode);
    const holds = this.holdsOf(barcode);
    const fines = this.finesOf(barcode);
    return {
      patron,
      flags: this.flagsOf(patron),
      expired: this.isExpired(patron),
      loans,
      overdue: loans.filter((item) => item.loan!.due.getTime() < now),
      holds,
      readyHolds: holds.filter((hold) => hold.waiting !== null),
      pendingHolds: holds.filter((hold) => hold.waiting === null),
      fines,
      totalFinesCents: fines.reduce((sum, fine) => sum + fine.amountCents, 0),
    };
  }

  // ------------------------------------------------------------ items and holds

  /** The SIP2 circulation status of an item. */
  circulationStatus(item: Item): number {
    if (item.state === 'lost') return CIRCULATION_STATUS.lost;
    if (item.state === 'missing') return CIRCULATION_STATUS.missing;
    if (item.state === 'in-transit') return CIRCULATION_STATUS.inTransit;
    if (this.waitingHoldOn(item)) return CIRCULATION_STATUS.holdShelf;
    if (item.loan) return CIRCULATION_STATUS.charged;
    return CIRCULATION_STATUS.available;
  }

  waitingHoldOn(item: Item): Hold | undefined {
    return this.state.holds.find((hold) => hold.waiting?.item === item.barcode);
  }

  /** Holds that could take this item: on the item itself, or on its title, in queue order. */
  holdsOnItem(item: Item): Hold[] {
    return this.queue(this.state.holds.filter((hold) => targets(hold, item)));
  }

  /** The queue a hold stands in: the holds on the same target, waiting ones first, then by placement. */
  queueOf(target: HoldTarget): Hold[] {
    return this.queue(this.state.holds.filter((hold) => sameTarget(hold.target, target)));
  }

  queuePosition(hold: Hold): number {
    return this.queueOf(hold.target).indexOf(hold) + 1;
  }

  /** Holds by other patrons that block renewing this item (pending ones on the item or its title). */
  blockingHolds(item: Item, patron: string): Hold[] {
    return this.holdsOnItem(item).filter((hold) => hold.patron !== patron && hold.waiting === null);
  }

  private queue(holds: Hold[]): Hold[] {
    return holds.sort(
      (a, b) => Number(b.waiting !== null) - Number(a.waiting !== null) || a.placed.getTime() - b.placed.getTime(),
    );
  }

  // ------------------------------------------------------------ circulation

  /** Renews one loan: new due = max(old due, today) + loan period. */
  renew(patronBarcode: string, itemBarcode: string): RenewResult {
    const patron = this.patron(patronBarcode);
    if (!patron) return { ok: false, reason: 'Patron not found' };
    const item = this.item(itemBarcode);
    if (!item) return { ok: false, reason: 'Item not found' };
    return this.renewItem(patron, item);
  }

  /** Renews every loan of the patron that can be renewed. */
  renewAll(patronBarcode: string): {
    ok: boolean;
    reason?: string;
    renewed: Item[];
    unrenewed: Array<{ item: Item; reason: string }>;
  } {
    const patron = this.patron(patronBarcode);
    if (!patron) return { ok: false, reason: 'Patron not found', renewed: [], unrenewed: [] };
    const renewed: Item[] = [];
    const unrenewed: Array<{ item: Item; reason: string }> = [];
    for (const item of this.loansOf(patronBarcode)) {
      const result = this.renewItem(patron, item);
      if (result.ok) renewed.push(item);
      else unrenewed.push({ item, reason: result.reason });
    }
    const denied = this.flagsOf(patron).renewalPrivilegesDenied;
    return denied
      ? { ok: false, reason: 'Renewal privileges denied', renewed, unrenewed }
      : { ok: true, renewed, unrenewed };
  }

  /** Whether a loan could be renewed now, and why not. */
  renewalRefusal(patron: Patron, item: Item): string | null {
    if (!item.loan || item.loan.patron !== patron.barcode) return 'Item not checked out to this patron';
    if (this.flagsOf(patron).renewalPrivilegesDenied) return 'Renewal privileges denied';
    if (this.blockingHolds(item, patron.barcode).length > 0) return 'Item has holds queued';
    if (item.loan.renewals >= this.data.rules.renewalLimit) return 'Renewal limit reached';
    return null;
  }

  private renewItem(patron: Patron, item: Item): RenewResult {
    const refusal = this.renewalRefusal(patron, item);
    if (refusal !== null || !item.loan) return { ok: false, reason: refusal ?? 'Item not checked out', item };
    const today = dayFrom(this.now(), 0);
    const base = item.loan.due.getTime() > today.getTime() ? item.loan.due : today;
    item.loan.due = addDays(base, this.data.rules.loanPeriodDays);
    item.loan.renewals += 1;
    return { ok: true, item, due: item.loan.due };
  }

  /**
   * Lends an item (11 Checkout). The patron's own hold on it (or its title) is
   * filled; another patron's hold first in the queue refuses the checkout. An
   * item already on loan to the same patron is renewed when the SC's renewal
   * policy allows it. A no-block checkout (done while the ACS was off-line)
   * skips the patron's blocks and the holds, and keeps the SC's due date.
   */
  checkout(
    patronBarcode: string,
    itemBarcode: string,
    options: { scRenewalPolicy: boolean; noBlock: boolean; nbDueDate?: Date | undefined },
  ): CheckoutResult {
    const patron = this.patron(patronBarcode);
    if (!patron) return { ok: false, reason: 'Patron not found' };
    const item = this.item(itemBarcode);
    if (!item) return { ok: false, reason: 'Item not found' };
    if (item.loan?.patron === patron.barcode) {
      if (!options.scRenewalPolicy) return { ok: false, reason: 'Item is already checked out to this patron', item };
      const renewed = this.renewItem(patron, item);
      return renewed.ok
        ? { ok: true, item, due: renewed.due, renewal: true }
        : { ok: false, reason: renewed.reason, item };
    }
    if (item.loan) return { ok: false, reason: 'Item is checked out to another patron', item };
    if (!options.noBlock) {
      if (item.state !== 'available') return { ok: false, reason: `Item is ${item.state}`, item };
      const flags = this.flagsOf(patron);
      if (flags.chargePrivilegesDenied)
        return { ok: false, reason: patron.blocked ? patron.blocked.reason : 'Charge privileges denied', item };
      if (flags.tooManyItemsCharged) return { ok: false, reason: 'Charged items limit reached', item };
      const next = this.holdsOnItem(item)[0];
      if (next && next.patron !== patron.barcode)
        return { ok: false, reason: 'Item is on hold for another patron', item };
    }
    const own = this.holdsOnItem(item).find((hold) => hold.patron === patron.barcode);
    if (own) this.state.holds.splice(this.state.holds.indexOf(own), 1);
    const now = this.now();
    const due = options.noBlock && options.nbDueDate ? options.nbDueDate : dayFrom(now, this.data.rules.loanPeriodDays);
    item.state = 'available';
    item.loan = { patron: patron.barcode, due, renewals: 0, checkedOut: now };
    return { ok: true, item, due, renewal: false };
  }

  /**
   * Returns an item (09 Checkin) at a location, or receives an item in
   * transit there. It then goes to the hold shelf for the first pending hold
   * whose pickup location this is, in transit to another pickup location or
   * to its home, or back on the shelf. Without transfers (a library without
   * locations, as the Perl SIPServer's sample ILS) nothing goes in transit:
   * the first pending hold takes the item here, otherwise it is back on the shelf.
   */
  checkin(itemBarcode: string, location: string, options: { transfers?: boolean } = {}): CheckinResult {
    const transfers = options.transfers ?? true;
    const item = this.item(itemBarcode);
    if (!item) return { ok: false, reason: 'Item not found' };
    const returnedBy = item.loan ? this.patron(item.loan.patron) : undefined;
    if (!item.loan && item.state !== 'in-transit') return { ok: false, reason: 'Item was not checked out', item };
    item.loan = null;
    item.state = 'available';
    item.currentLocation = location;
    const next = this.holdsOnItem(item).find((hold) => hold.waiting === null);
    let route: CheckinRoute;
    if (next && (next.pickupLocation === location || !transfers)) {
      next.waiting = { pickupBy: dayFrom(this.now(), this.data.rules.holdPickupDays), item: item.barcode };
      route = { kind: 'hold-shelf', hold: next };
    } else if (next) {
      item.state = 'in-transit';
      route = { kind: 'hold-transit', hold: next, to: next.pickupLocation };
    } else if (transfers && item.permanentLocation !== location) {
      item.state = 'in-transit';
      route = { kind: 'home-transit', to: item.permanentLocation };
    } else {
      route = { kind: 'shelf' };
    }
    return { ok: true, item, returnedBy, route };
  }

  /** 01 Block Patron: every privilege denied until enable(). */
  block(patronBarcode: string, reason: string): Patron | undefined {
    const patron = this.patron(patronBarcode);
    if (patron) patron.blocked = { reason: reason.trim() || BLOCKED_CARD_REASON };
    return patron;
  }

  /** 25 Patron Enable: lifts a block; whether there was one. Flags from the data, expiry and fees stay. */
  enable(patronBarcode: string): boolean {
    const patron = this.patron(patronBarcode);
    const wasBlocked = patron?.blocked != null;
    if (patron) patron.blocked = null;
    return wasBlocked;
  }

  /** 19 Item Status Update: stores the item properties (CH). */
  updateItemProperties(itemBarcode: string, properties: string): Item | undefined {
    const item = this.item(itemBarcode);
    if (item) item.itemProperties = properties;
    return item;
  }

  /**
   * Places a hold. An item barcode makes an item-level hold (SIP2 hold type 3),
   * a title (id or exact title) a title-level hold (type 2).
   */
  placeHold(
    patronBarcode: string,
    request: {
      item?: string | undefined;
      title?: string | undefined;
      pickupLocation?: string | undefined;
      expires?: Date | null | undefined;
    },
  ): HoldResult {
    const patron = this.patron(patronBarcode);
    if (!patron) return { ok: false, reason: 'Patron not found' };
    if (this.flagsOf(patron).holdPrivilegesDenied) return { ok: false, reason: 'Hold privileges denied' };
    if (patron.holdItemsLimit !== undefined && this.holdsOf(patron.barcode).length >= patron.holdItemsLimit) {
      return { ok: false, reason: 'Hold limit reached' };
    }
    let target: HoldTarget;
    let item: Item | undefined;
    let titleItems: Item[];
    if (request.item) {
      item = this.item(request.item);
      if (!item) return { ok: false, reason: 'Item not found' };
      if (item.state === 'lost' || item.state === 'missing')
        return { ok: false, reason: `Item is ${item.state} and cannot be held`, item };
      target = { kind: 'item', barcode: item.barcode };
      titleItems = [item];
    } else if (request.title) {
      titleItems = this.titleItems(request.title);
      const first = titleItems[0];
      if (!first) return { ok: false, reason: 'Title not found' };
      target = { kind: 'title', titleId: first.titleId };
    } else {
      return { ok: false, reason: 'No item or title given' };
    }
    const titleId = target.kind === 'title' ? target.titleId : undefined;
    const refuse = (reason: string): HoldResult => ({
      ok: false,
      reason,
      ...(item ? { item } : {}),
      ...(titleId ? { titleId } : {}),
    });
    if (titleItems.some((candidate) => candidate.loan?.patron === patron.barcode))
      return refuse('Item is checked out to this patron');
    const duplicate = this.holdsOf(patron.barcode).some((hold) =>
      target.kind === 'item'
        ? sameTarget(hold.target, target) || (hold.target.kind === 'title' && hold.target.titleId === item!.titleId)
        : sameTarget(hold.target, target) || titleItems.some((candidate) => targets(hold, candidate)),
    );
    if (duplicate) return refuse('Patron already has a hold on this item or title');
    const now = this.now();
    const hold: Hold = {
      id: `h-${String(this.state.nextHoldId++).padStart(4, '0')}`,
      patron: patron.barcode,
      target,
      pickupLocation: request.pickupLocation || patron.homeLibrary,
      placed: now,
      expires: request.expires ?? dayFrom(now, this.data.rules.holdExpiryDays),
      waiting: null,
    };
    this.state.holds.push(hold);
    const available = titleItems.some(
      (candidate) => this.circulationStatus(candidate) === CIRCULATION_STATUS.available,
    );
    return {
      ok: true,
      hold,
      queuePosition: this.queuePosition(hold),
      available,
      ...(item ? { item } : {}),
      ...(titleId ? { titleId } : {}),
    };
  }

  /** The patron's hold matching an item barcode (its own hold, or a title hold on its title) or a title. */
  findHold(
    patronBarcode: string,
    request: { item?: string | undefined; title?: string | undefined },
  ): Hold | undefined {
    const holds = this.holdsOf(patronBarcode);
    if (request.item) {
      const item = this.item(request.item);
      return (
        holds.find((hold) => hold.target.kind === 'item' && hold.target.barcode === request.item) ??
        (item ? holds.find((hold) => hold.target.kind === 'title' && hold.target.titleId === item.titleId) : undefined)
      );
    }
    if (request.title) {
      const titleIds = new Set(this.titleItems(request.title).map((item) => item.titleId));
      titleIds.add(request.title);
      return holds.find((hold) => hold.target.kind === 'title' && titleIds.has(hold.target.titleId));
    }
    return undefined;
  }

  cancelHold(
    patronBarcode: string,
    request: { item?: string | undefined; title?: string | undefined },
  ): { ok: true; hold: Hold } | Refusal {
    if (!this.patron(patronBarcode)) return { ok: false, reason: 'Patron not found' };
    const hold = this.findHold(patronBarcode, request);
    if (!hold) return { ok: false, reason: 'No such hold' };
    this.state.holds.splice(this.state.holds.indexOf(hold), 1);
    return { ok: true, hold };
  }

  changePickup(
    patronBarcode: string,
    request: { item?: string | undefined; title?: string | undefined; pickupLocation?: string | undefined },
  ): { ok: true; hold: Hold } | Refusal {
    if (!this.patron(patronBarcode)) return { ok: false, reason: 'Patron not found' };
    if (!request.pickupLocation) return { ok: false, reason: 'No pickup location given' };
    const hold = this.findHold(patronBarcode, request);
    if (!hold) return { ok: false, reason: 'No such hold' };
    if (hold.waiting) return { ok: false, reason: 'Hold is already waiting for pickup' };
    hold.pickupLocation = request.pickupLocation;
    return { ok: true, hold };
  }

  /**
   * Pays an amount: against one fine when its id is given (at most its balance),
   * otherwise against the patron's fines oldest first (at most the total).
   */
  payFee(
    patronBarcode: string,
    amount: string,
    options: { feeId?: string | undefined; currency?: string | undefined } = {},
  ): FeeResult {
    if (!this.patron(patronBarcode)) return { ok: false, reason: 'Patron not found' };
    const cents = parseCents(amount);
    if (cents === null || cents <= 0) return { ok: false, reason: 'Invalid amount' };
    if (options.currency && options.currency.trim() !== '' && options.currency !== this.data.currency) {
      return { ok: false, reason: `Currency must be ${this.data.currency}` };
    }
    const fines = options.feeId
      ? this.finesOf(patronBarcode).filter((fine) => fine.id === options.feeId)
      : [...this.finesOf(patronBarcode)].sort((a, b) => a.date.getTime() - b.date.getTime());
    if (options.feeId && fines.length === 0) return { ok: false, reason: 'No such fee' };
    const owed = fines.reduce((sum, fine) => sum + fine.amountCents, 0);
    if (cents > owed) return { ok: false, reason: 'Amount exceeds the outstanding balance' };
    let left = cents;
    for (const fine of fines) {
      const paid = Math.min(left, fine.amountCents);
      fine.amountCents -= paid;
      left -= paid;
      if (left === 0) break;
    }
    return { ok: true, paidCents: cents };
  }
}

// ------------------------------------------------------------ helpers

function sameTarget(a: HoldTarget, b: HoldTarget): boolean {
  return a.kind === 'item'
    ? b.kind === 'item' && a.barcode === b.barcode
    : b.kind === 'title' && a.titleId === b.titleId;
}

/** Whether a hold could be filled by this item (a waiting hold only by the copy that waits for it). */
function targets(hold: Hold, item: Item): boolean {
  if (hold.waiting) return hold.waiting.item === item.barcode;
  return hold.target.kind === 'item' ? hold.target.barcode === item.barcode : hold.target.titleId === item.titleId;
}

/** Resolves the data file's relative dates against `now`. */
function buildState(data: LibraryData, now: Date): State {
  const patrons = new Map<string, Patron>();
  const fines: Fine[] = [];
  const items = new Map<string, Item>();
  for (const item of data.items) {
    items.set(item.barcode, {
      barcode: item.barcode,
      titleId: item.titleId ?? `t-${item.barcode}`,
      title: item.title,
      callNumber: item.callNumber,
      mediaType: item.mediaType,
      permanentLocation: item.permanentLocation ?? data.defaultLocation,
      currentLocation: item.currentLocation ?? item.permanentLocation ?? data.defaultLocation,
      owner: item.owner ?? data.institution,
      itemProperties: item.itemProperties,
      state: item.status,
      loan: item.loan
        ? {
            patron: item.loan.patron,
            due: dayFrom(now, item.loan.dueInDays),
            renewals: item.loan.renewals,
            checkedOut: dayFrom(
              now,
              item.loan.checkedOutInDays ?? Math.min(0, item.loan.dueInDays - data.rules.loanPeriodDays),
              [10, 0, 0],
            ),
          }
        : null,
    });
  }
  for (const p of data.patrons) {
    patrons.set(p.barcode, {
      barcode: p.barcode,
      password: p.password,
      name: p.name,
      email: p.email,
      address: p.address,
      phone: p.phone,
      patronClass: p.patronClass,
      homeLibrary: p.homeLibrary ?? data.defaultLocation,
      expires: p.expiresInDays === undefined || p.expiresInDays === null ? null : dayFrom(now, p.expiresInDays),
      feeLimitCents: p.feeLimit === undefined ? null : parseCents(p.feeLimit),
      flags: { ...p.flags },
      birthDate: p.birthDate,
      internetProfile: p.internetProfile,
      holdItemsLimit: p.holdItemsLimit,
      overdueItemsLimit: p.overdueItemsLimit,
      chargedItemsLimit: p.chargedItemsLimit,
      screenMessage: p.screenMessage,
      printLine: p.printLine,
      blocked:
        p.blocked === undefined || p.blocked === false
          ? null
          : { reason: typeof p.blocked === 'string' && p.blocked.trim() ? p.blocked : BLOCKED_CARD_REASON },
    });
    for (const fine of p.fines) {
      fines.push({
        id: fine.id,
        patron: p.barcode,
        amountCents: parseCents(fine.amount) ?? 0,
        type: fine.type,
        date: dayFrom(now, fine.dateInDays, [12, 0, 0]),
        item: fine.item,
        about: fine.about ?? (fine.item ? (items.get(fine.item)?.title ?? '') : fine.type),
      });
    }
  }
  const holds: Hold[] = data.holds.map((hold, i) => ({
    id: hold.id ?? `h-${String(i + 1).padStart(4, '0')}`,
    patron: hold.patron,
    target: hold.item !== undefined ? { kind: 'item', barcode: hold.item } : { kind: 'title', titleId: hold.title! },
    pickupLocation: hold.pickupLocation ?? patrons.get(hold.patron)?.homeLibrary ?? data.defaultLocation,
    // Placement order follows the file when days are equal (seconds apart).
    placed: new Date(dayFrom(now, hold.placedInDays, [9, 0, 0]).getTime() + i * 1000),
    expires: dayFrom(now, hold.expiresInDays ?? data.rules.holdExpiryDays),
    waiting: hold.waiting ? { pickupBy: dayFrom(now, hold.waiting.pickupByInDays), item: hold.item! } : null,
  }));
  const numbered = holds
    .map((hold) => /^h-(\d+)$/.exec(hold.id)?.[1])
    .filter((n) => n !== undefined)
    .map(Number);
  const patronsByFold = new Map<string, Patron>();
  for (const patron of patrons.values()) {
    const key = foldIdentifier(patron.barcode);
    if (!patronsByFold.has(key)) patronsByFold.set(key, patron);
  }
  return { patrons, patronsByFold, items, fines, holds, nextHoldId: Math.max(holds.length, ...numbered) + 1 };
}

// ------------------------------------------------------------ paging

/**
 * The slice of a 64 list that BP/BQ ask for: 1-based, inclusive, never more
 * than `limit` entries. Missing or unreadable BP starts at 1; missing or
 * unreadable BQ means "as many as the limit allows".
 */
export function pageSlice<T>(
  list: readonly T[],
  startItem: string | undefined,
  endItem: string | undefined,
  limit: number,
): T[] {
  const start = parsePosition(startItem) ?? 1;
  const end = parsePosition(endItem) ?? start + limit - 1;
  if (end < start) return [];
  const last = Math.min(end, start + limit - 1, list.length);
  return list.slice(start - 1, last);
}

function parsePosition(text: string | undefined): number | null {
  if (text === undefined || !/^\s*\d+\s*$/.test(text)) return null;
  const n = Number(text);
  return n >= 1 ? n : null;
}
