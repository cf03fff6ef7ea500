import {
  CIRCULATION_STATUS,
  type Dialect,
  extraField,
  type ItemInformationResponse,
  parseDialectDate,
} from '../sip2/index.js';
import type { PaiaDocument } from './types.js';
import type { UriTemplates } from './uris.js';

/**
 * PAIA documents from SIP2 answers: pure functions, one per kind of entry a
 * patron's 64 lists. Only what SIP2 states is reported; a field the ILS does
 * not give stays absent (absent means unknown in PAIA).
 */

/** Which list an entry came from, after the dialect's hold lists are sorted out. */
export type EntryKind = 'held' | 'ready' | 'pending';

/**
 * The entries of an items call's lists, one per item, each with its kind: a loan (charged, overdue,
 * recall) wins over a hold on the same item, a ready hold over a pending one. A dialect whose AS lists
 * every hold (all-in-AS) has its pending ones (CD) taken out of the ready ones.
 */
export function itemEntries(
  lists: Record<'charged' | 'overdue' | 'recall' | 'hold' | 'unavailable', { entries: readonly string[] }>,
  holdLists: Dialect['holdLists'],
): Array<[entry: string, kind: EntryKind]> {
  const { charged, overdue, recall, hold, unavailable } = lists;
  const held = distinct([...charged.entries, ...overdue.entries, ...recall.entries]);
  const pending = distinct(unavailable.entries);
  const pendingSet = new Set(pending);
  const ready =
    holdLists === 'all-in-AS'
      ? distinct(hold.entries).filter((entry) => !pendingSet.has(entry))
      : distinct(hold.entries);

  const seen = new Set<string>();
  const entries: Array<[entry: string, kind: EntryKind]> = [];
  for (const [list, kind] of [
    [held, 'held'],
    [ready, 'ready'],
    [pending, 'pending'],
  ] as const) {
    for (const entry of list) {
      if (seen.has(entry)) continue;
      seen.add(entry);
      entries.push([entry, kind]);
    }
  }
  return entries;
}

/** The entries trimmed, blank ones dropped, each once. */
function distinct(entries: readonly string[]): string[] {
  return [...new Set(entries.map((entry) => entry.trim()).filter((entry) => entry !== ''))];
}

export interface DocumentContext {
  dialect: Dialect;
  uris: UriTemplates;
  /** Whether holds can be cancelled over SIP2 (98 BX "hold"); undefined when not known. */
  canCancel: boolean | undefined;
  /** Whether the patron's loans can be renewed over SIP2 (`renewalOffered`); undefined when not known. */
  canRenew: boolean | undefined;
}

/**
 * `canrenew` of a patron's loans: false when the 64 denies the patron
 * renewal privileges or the 98's BX says the ILS takes no 29 renew; true
 * when BX says it does; undefined (unknown, left out) without a 98. SIP2
 * says nothing per item, so a loan at its renewal limit or wanted by
 * another patron is offered too and its renewal comes back with the ILS's
 * reason in `error`.
 */
export function renewalOffered(renewalPrivilegesDenied: boolean, acsRenews: boolean | undefined): boolean | undefined {
  return renewalPrivilegesDenied ? false : acsRenews;
}

/**
 * Circulation statuses of an 18 that let a hold be ready for pickup: on the
 * hold shelf (08), or a status that says nothing either way (01 other, or
 * none). Every other one contradicts it: still on loan, on the shelf not
 * yet trapped, being re-shelved, on order, in process, in transit, lost,
 * missing or claimed returned.
 */
const MAY_BE_WAITING: ReadonlySet<number | null> = new Set([
  CIRCULATION_STATUS.holdShelf,
  CIRCULATION_STATUS.other,
  null,
]);

/**
 * The kind of a hold once its item's 18 is in. A dialect whose AS lists
 * every hold (all-in-AS) makes each AS entry not also in CD a ready one;
 * but an ILS may keep CD for something else (FOLIO's edge-sip2 lists only
 * closed requests there), so such an entry is ready (4) only when its
 * item's circulation status allows it, and pending otherwise (1, or 2 in
 * transit).
 */
export function settledKind(kind: EntryKind, info: ItemInformationResponse, dialect: Dialect): EntryKind {
  if (kind !== 'ready' || dialect.holdLists !== 'all-in-AS') return kind;
  return MAY_BE_WAITING.has(info.circulationStatus) ? kind : 'pending';
}

/** True for an 18 that does not know its item: a list entry that is not a barcode, i.e. a title id. */
export function isUnknownItem(info: ItemInformationResponse): boolean {
  return (
    (info.circulationStatus === CIRCULATION_STATUS.other || info.circulationStatus === null) &&
    info.titleIdentifier.trim() === ''
  );
}

/** One document of the items method from a list entry and its 17 answer. */
export function itemDocument(
  entry: string,
  listed: EntryKind,
  info: ItemInformationResponse,
  ctx: DocumentContext,
): PaiaDocument {
  const kind = settledKind(listed, info, ctx.dialect);
  if (isUnknownItem(info) && kind !== 'held') return titleHoldDocument(entry, kind, ctx);
  const doc: PaiaDocument = { status: statusOf(kind, info), item: ctx.uris.item.build(entry) };
  const about = nonEmpty(info.titleIdentifier);
  if (about !== undefined) doc.about = about;
  const label = nonEmpty(extraField(info, 'CS'));
  if (label !== undefined) doc.label = label;
  const queue = queueLength(info.holdQueueLength);
  if (queue !== undefined) doc.queue = queue;
  switch (kind) {
    case 'held': {
      const due = info.dueDate === undefined ? null : parseDialectDate(info.dueDate, ctx.dialect.dueDateFormat);
      if (due !== null) {
        doc.duedate = due;
        doc.endtime = due;
      }
      if (ctx.canRenew !== undefined) doc.canrenew = ctx.canRenew;
      Object.assign(doc, storageOf(nonEmpty(info.permanentLocation) ?? nonEmpty(info.currentLocation), ctx));
      break;
    }
    case 'ready': {
      // CM is the pickup-by date, an 18-char SIP2 date by the standard.
      const pickupBy = info.holdPickupDate === undefined ? null : parseDialectDate(info.holdPickupDate, 'sip2');
      if (pickupBy !== null) {
        doc.duedate = pickupBy;
        doc.endtime = pickupBy;
      }
      if (ctx.canCancel !== undefined) doc.cancancel = ctx.canCancel;
      Object.assign(doc, storageOf(nonEmpty(info.currentLocation), ctx));
      break;
    }
    case 'pending':
      if (ctx.canCancel !== undefined) doc.cancancel = ctx.canCancel;
      break;
  }
  return doc;
}

/** A hold whose list entry is a title id (17 does not know it): the edition, no item. */
function titleHoldDocument(titleId: string, kind: Exclude<EntryKind, 'held'>, ctx: DocumentContext): PaiaDocument {
  const doc: PaiaDocument = { status: kind === 'ready' ? 4 : 1, edition: ctx.uris.edition.build(titleId) };
  if (ctx.canCancel !== undefined) doc.cancancel = ctx.canCancel;
  return doc;
}

function statusOf(kind: EntryKind, info: ItemInformationResponse): PaiaDocument['status'] {
  switch (kind) {
    case 'held':
      return 3;
    case 'ready':
      return 4;
    case 'pending':
      return info.circulationStatus === CIRCULATION_STATUS.inTransit ? 2 : 1;
  }
}

/** storage (the ILS location code) and storageid (its URI, when a template is configured). */
export function storageOf(
  location: string | undefined,
  ctx: Pick<DocumentContext, 'uris'>,
): Pick<PaiaDocument, 'storage' | 'storageid'> {
  if (location === undefined) return {};
  return ctx.uris.storage ? { storage: location, storageid: ctx.uris.storage.build(location) } : { storage: location };
}

/** CF: a count greater than zero, else absent (zero waiting requests is not worth a field, junk is not a number). */
export function queueLength(text: string | undefined): number | undefined {
  const trimmed = text?.trim() ?? '';
  if (!/^\d{1,6}$/.test(trimmed)) return undefined;
  const n = Number(trimmed);
  return n > 0 ? n : undefined;
}

export function nonEmpty(text: string | undefined): string | undefined {
  const trimmed = text?.trim();
  return trimmed ? trimmed : undefined;
}
