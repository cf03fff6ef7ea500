import { type Dialect, type HoldResponse, parseDialectDate, type RenewResponse } from '../sip2/index.js';
import { nonEmpty, queueLength, storageOf } from './documents.js';
import type { DocumentRequest, PaiaDocument, ServiceStatus } from './types.js';
import type { UriTemplates } from './uris.js';
import { type Plan, requestedOf, unknownDocument, type WriteKind, type WriteSteps } from './writes.js';

/**
 * What renew (29), request (15 +) and cancel (15 -) send for a document and
 * answer for it: pure steps for the write engine (writes.ts), given the
 * configured URIs and the dialect.
 */

/** The URI templates and the dialect (its due date format) the steps map with. */
export interface PlanContext {
  uris: UriTemplates;
  dialect: Pick<Dialect, 'dueDateFormat'>;
}

/** The 15's target: an item barcode or a title id, and for a request the pickup location (BS). */
export interface HoldTarget {
  item?: string;
  title?: string;
  pickupLocation?: string;
}

const RENEW: WriteKind = { noun: 'renewal', unknownStatus: 3, notSentStatus: 3, unknownDocumentStatus: 0 };
const REQUEST: WriteKind = { noun: 'request', unknownStatus: 0, notSentStatus: 5, unknownDocumentStatus: 5 };
const CANCEL: WriteKind = { noun: 'cancellation', unknownStatus: 1, notSentStatus: 1, unknownDocumentStatus: 0 };

/** Renew: one 29 per item barcode; a document without an item URI is not the ILS's to renew. */
export function renewSteps(
  ctx: PlanContext,
  execute: (item: string) => Promise<RenewResponse>,
): WriteSteps<string, RenewResponse> {
  return {
    kind: RENEW,
    plan: (doc) => {
      if (doc.item === undefined) {
        return {
          done: unknownDocument(doc, RENEW, doc.edition === undefined ? 'unknown item' : 'renewal needs an item URI'),
        };
      }
      const item = ctx.uris.item.match(doc.item);
      return item === null ? { done: unknownDocument(doc, RENEW, 'unknown item') } : { key: item, target: item };
    },
    execute,
    itemOf: (item) => item,
    answer: (doc, item, response) => {
      const result: PaiaDocument = { status: 3, item: ctx.uris.item.build(item), requested: requestedOf(doc) };
      if (!response.ok) {
        result.error = screenMessage(response) ?? 'the library system refused the renewal';
        return result;
      }
      const about = nonEmpty(response.titleIdentifier);
      if (about !== undefined) result.about = about;
      const due = parseDialectDate(response.dueDate, ctx.dialect.dueDateFormat);
      if (due !== null) {
        result.duedate = due;
        result.endtime = due;
      }
      return result;
    },
  };
}

/** Request: one 15 + per item or edition, with the pickup location the document names. */
export function requestSteps(
  ctx: PlanContext,
  execute: (target: HoldTarget) => Promise<HoldResponse>,
): WriteSteps<HoldTarget, HoldResponse> {
  return {
    kind: REQUEST,
    plan: (doc) => {
      const target = holdTarget(doc, REQUEST, ctx.uris);
      if ('done' in target) return target;
      const pickup = pickupLocation(doc, ctx.uris);
      if (pickup === null) return { done: unknownDocument(doc, REQUEST, 'unknown pickup location') };
      return {
        key: target.key,
        target: { ...target.target, ...(pickup === undefined ? {} : { pickupLocation: pickup }) },
      };
    },
    execute,
    itemOf: (target) => target.item,
    answer: (doc, target, response) => {
      const result = holdDocument(doc, target, response.ok ? 1 : 5, ctx.uris);
      if (!response.ok) {
        result.error = screenMessage(response) ?? 'the library system refused the request';
        return result;
      }
      const queue = queueLength(response.queuePosition);
      if (queue !== undefined) result.queue = queue;
      Object.assign(result, storageOf(nonEmpty(response.pickupLocation), { uris: ctx.uris }));
      return result;
    },
  };
}

/** Cancel: one 15 - per item or edition. */
export function cancelSteps(
  ctx: PlanContext,
  execute: (target: HoldTarget) => Promise<HoldResponse>,
): WriteSteps<HoldTarget, HoldResponse> {
  return {
    kind: CANCEL,
    plan: (doc) => holdTarget(doc, CANCEL, ctx.uris),
    execute,
    itemOf: (target) => target.item,
    answer: (doc, target, response) => {
      // A refused cancel leaves the hold as it was; its exact status would cost another round trip, so 1.
      const result = holdDocument(doc, target, response.ok ? 0 : 1, ctx.uris);
      if (!response.ok) result.error = screenMessage(response) ?? 'the library system refused the cancellation';
      return result;
    },
  };
}

/** The 15 target of a document: the item barcode, else the edition's title id. */
function holdTarget(doc: DocumentRequest, kind: WriteKind, uris: UriTemplates): Plan<HoldTarget> {
  if (doc.item !== undefined) {
    const item = uris.item.match(doc.item);
    return item === null
      ? { done: unknownDocument(doc, kind, 'unknown item') }
      : { key: `item:${item}`, target: { item } };
  }
  if (doc.edition !== undefined) {
    const title = uris.edition.match(doc.edition);
    return title === null
      ? { done: unknownDocument(doc, kind, 'unknown edition') }
      : { key: `title:${title}`, target: { title } };
  }
  return { done: unknownDocument(doc, kind, 'the document has neither an item nor an edition URI') };
}

/** BS: the storageid's location code, else the storage text; undefined when neither is given, null when unusable. */
function pickupLocation(doc: DocumentRequest, uris: UriTemplates): string | undefined | null {
  const storage = nonEmpty(doc.storage);
  if (doc.storageid !== undefined) {
    const location = uris.storage?.match(doc.storageid) ?? null;
    if (location !== null) return location;
    return storage ?? null;
  }
  return storage;
}

function holdDocument(
  doc: DocumentRequest,
  target: HoldTarget,
  status: ServiceStatus,
  uris: UriTemplates,
): PaiaDocument {
  const result: PaiaDocument = { status };
  if (target.item !== undefined) result.item = uris.item.build(target.item);
  if (doc.edition !== undefined) result.edition = doc.edition;
  result.requested = requestedOf(doc);
  return result;
}

function screenMessage(response: { screenMessage?: string[] }): string | undefined {
  return nonEmpty(
    response.screenMessage
      ?.map((line) => line.trim())
      .filter(Boolean)
      .join(' '),
  );
}
