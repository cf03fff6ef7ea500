import {
  CIRCULATION_STATUS,
  type Dialect,
  extraField,
  type ItemInformationResponse,
  parseDialectDate,
} from '../../sip2/index.js';
import { isUnknownItem, nonEmpty, queueLength } from '../documents.js';
import type { UriTemplates } from '../uris.js';
import type { RequestLink } from './request-link.js';
import type { DaiaAvailable, DaiaDocument, DaiaEntity, DaiaItem, DaiaUnavailable } from './types.js';

/**
 * DAIA documents from SIP2 18 (Item Information Response): pure functions.
 * Only what SIP2 states is reported; what the ILS does not give stays absent.
 */

export interface DaiaMappingContext {
  dialect: Pick<Dialect, 'dueDateFormat'>;
  uris: Pick<UriTemplates, 'item' | 'storage'>;
  /** sip2.institution: an owner equal to it is no department of its own. */
  institution: string;
  /** The library, every item's department unless its 18 names another owner (libraryDepartment); default: the institution. */
  department?: DaiaEntity;
  /** Where and when a patron can ask for a copy; absent or null: no hrefs. */
  requests?: DaiaRequests | null;
}

/** The request links of the services (DAIA `href`): where, and on which services. */
interface DaiaRequests {
  link: RequestLink;
  /** The ILS takes holds (its 98 says so): unavailable services of a copy that comes back carry the link. */
  holds: boolean;
  /** The library takes requests for copies on the shelf (daia.shelfRequests): available services carry it. */
  onShelf: boolean;
}

/** What daia.department sets; null or absent: as the ILS says. */
export interface DepartmentSettings {
  content?: string | null | undefined;
  id?: string | null | undefined;
}

const SERVICES = ['loan', 'presentation'] as const;

function available(extra: Omit<DaiaAvailable, 'service'> = {}): DaiaAvailable[] {
  return SERVICES.map((service) => ({ service, ...extra }));
}

function unavailable(extra: Omit<DaiaUnavailable, 'service'> = {}): DaiaUnavailable[] {
  return SERVICES.map((service) => ({ service, ...extra }));
}

/**
 * What a patron needs to know about one item, by circulation status:
 * on the shelf: loan and presentation available; on loan (charged,
 * recalled): unavailable until the due date (`expected`, "unknown" when the
 * date cannot be read) with the hold queue; on the hold shelf: unavailable,
 * with the queue, no expected date (it goes to the patron who asked for it);
 * in transit, on order, in process: unavailable, expected "unknown" (it will
 * come); being re-shelved: available with an unknown delay; lost, missing,
 * claimed returned: unavailable, no expected date; other/unknown status: no
 * services (availability unknown).
 */
export function availabilityOf(
  info: ItemInformationResponse,
  ctx: Pick<DaiaMappingContext, 'dialect'>,
): Pick<DaiaItem, 'available' | 'unavailable'> {
  const queue = queueLength(info.holdQueueLength);
  const withQueue = queue === undefined ? {} : { queue };
  switch (info.circulationStatus) {
    case CIRCULATION_STATUS.available:
      return { available: available() };
    case CIRCULATION_STATUS.charged:
    case CIRCULATION_STATUS.chargedNoRecall:
    case CIRCULATION_STATUS.recalled: {
      const due = info.dueDate === undefined ? null : parseDialectDate(info.dueDate, ctx.dialect.dueDateFormat);
      return { unavailable: unavailable({ expected: due ?? 'unknown', ...withQueue }) };
    }
    case CIRCULATION_STATUS.holdShelf:
      return { unavailable: unavailable(withQueue) };
    case CIRCULATION_STATUS.inTransit:
    case CIRCULATION_STATUS.onOrder:
    case CIRCULATION_STATUS.inProcess:
      return { unavailable: unavailable({ expected: 'unknown', ...withQueue }) };
    case CIRCULATION_STATUS.reshelving:
      return { available: available({ delay: 'unknown' }) };
    case CIRCULATION_STATUS.lost:
    case CIRCULATION_STATUS.missing:
    case CIRCULATION_STATUS.claimedReturned:
      return { unavailable: unavailable(withQueue) };
    default:
      return {};
  }
}

/**
 * Unavailable, but the copy comes (back) to the shelf: on loan, recalled, on
 * the hold shelf for someone else, in transit, on order, in process. A hold or
 * recall on it makes sense. Lost, missing and claimed returned copies may
 * never come back, so nobody is offered to queue for them.
 */
const COMES_BACK: ReadonlySet<number> = new Set([
  CIRCULATION_STATUS.charged,
  CIRCULATION_STATUS.chargedNoRecall,
  CIRCULATION_STATUS.recalled,
  CIRCULATION_STATUS.holdShelf,
  CIRCULATION_STATUS.inTransit,
  CIRCULATION_STATUS.onOrder,
  CIRCULATION_STATUS.inProcess,
]);

/**
 * The library as a department: daia.department.content, else the library's
 * name the ILS sends in its 98 (AM), else sip2.institution; with
 * daia.department.id as its URI when set. Discovery systems show the content
 * as the copy's location (VuFind: "Unknown" without one).
 */
export function libraryDepartment(
  settings: DepartmentSettings,
  libraryName: string | undefined,
  institution: string,
): DaiaEntity {
  const content = nonEmpty(settings.content ?? undefined) ?? nonEmpty(libraryName) ?? institution;
  return settings.id ? { id: settings.id, content } : { content };
}

/**
 * The link where the patron can ask for the copy goes on its services: on
 * unavailable ones when the copy comes back and the ILS takes holds (a
 * recall or hold), on available ones when the library takes requests for
 * copies on the shelf. Otherwise none: a button that can only fail helps nobody.
 */
function withRequestLinks(
  item: DaiaItem,
  barcode: string,
  info: ItemInformationResponse,
  ctx: DaiaMappingContext,
): void {
  const { requests } = ctx;
  if (!requests || item.id === undefined) return;
  const href = requests.link.build(item.id, barcode);
  if (item.available && requests.onShelf) item.available = item.available.map((service) => ({ ...service, href }));
  if (item.unavailable && requests.holds && info.circulationStatus !== null && COMES_BACK.has(info.circulationStatus)) {
    item.unavailable = item.unavailable.map((service) => ({ ...service, href }));
  }
}

/** The location entity: the ILS location code, with its URI when paia.storageUri is configured. */
function storageEntity(location: string, ctx: Pick<DaiaMappingContext, 'uris'>): DaiaEntity {
  return ctx.uris.storage ? { id: ctx.uris.storage.build(location), content: location } : { content: location };
}

/** The DAIA item for a barcode the ILS knows; null when the 18 says it does not know the item. */
export function daiaItem(barcode: string, info: ItemInformationResponse, ctx: DaiaMappingContext): DaiaItem | null {
  if (isUnknownItem(info)) return null;
  const item: DaiaItem = { id: ctx.uris.item.build(barcode) };
  const label = nonEmpty(extraField(info, 'CS'));
  if (label !== undefined) item.label = label;
  const owner = nonEmpty(info.owner);
  // Department: the owning library when the 18 names one that is not the institution itself (content only, so it
  // never clashes with storage ids); else the library. Every item has one: it is the location discovery systems show.
  item.department =
    owner !== undefined && owner !== ctx.institution
      ? { content: owner }
      : (ctx.department ?? { content: ctx.institution });
  // Storage: where the item belongs (AQ), else where it is (AP).
  const location = nonEmpty(info.permanentLocation) ?? nonEmpty(info.currentLocation);
  if (location !== undefined) item.storage = storageEntity(location, ctx);
  Object.assign(item, availabilityOf(info, ctx));
  withRequestLinks(item, barcode, info, ctx);
  return item;
}

/**
 * The document for one request identifier resolved to a barcode: its id is
 * the item URI (the document is this copy); `requested` repeats the request
 * identifier when it differs (a plain barcode). No items when the ILS does
 * not know the barcode.
 */
export function daiaDocument(
  requested: string,
  barcode: string,
  info: ItemInformationResponse | null,
  ctx: DaiaMappingContext,
): DaiaDocument {
  const id = ctx.uris.item.build(barcode);
  const doc: DaiaDocument = { id };
  if (requested !== id) doc.requested = requested;
  const item = info === null ? null : daiaItem(barcode, info, ctx);
  if (item === null) return doc;
  const about = nonEmpty(info?.titleIdentifier);
  if (about !== undefined) doc.about = about;
  doc.item = [item];
  return doc;
}
