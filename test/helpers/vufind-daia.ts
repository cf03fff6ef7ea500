/**
 * What VuFind's DAIA driver reads in a DAIA item, restated for tests (our own
 * words, not its code): vufind-org/vufind,
 * module/VuFind/src/VuFind/ILS/Driver/DAIA.php. Its PAIA driver extends it, so
 * a library running VuFind on PAIA and DAIA gets exactly these decisions.
 */

interface Service {
  service?: string;
  href?: string;
}

export interface VuFindDaiaItem {
  department?: { content?: string; id?: string };
  available?: Service[];
  unavailable?: Service[];
}

/** DAIA.php $onSiteServices, as shipped (DAIA.ini daiaOnSiteServices unset). */
const ON_SITE = ['loan', 'presentation'];

const onSite = (services: Service[] | undefined) =>
  (services ?? []).filter((s) => s.service !== undefined && ON_SITE.includes(s.service));

/**
 * checkIsRecallable: some on-site service is unavailable with an href, and an
 * unavailable on-site service is not also available. VuFind then sets
 * is_holdable and addLink (getItemOnSiteStatus), the hold/recall button.
 */
export function isRecallable(item: VuFindDaiaItem): boolean {
  const available = onSite(item.available).map((s) => s.service);
  const unavailable = onSite(item.unavailable);
  const href = unavailable.some((s) => s.href !== undefined);
  return href && unavailable.some((s) => !available.includes(s.service));
}

/**
 * checkIsStorageRetrievalRequest: some on-site service is available with an
 * href, and an available one is not also unavailable. VuFind asks it only
 * when the item is not holdable (getItemOnSiteStatus,
 * addStorageRetrievalRequestLink), the request button.
 */
export function isStorageRetrievalRequest(item: VuFindDaiaItem): boolean {
  const unavailable = onSite(item.unavailable).map((s) => s.service);
  const available = onSite(item.available);
  const href = available.some((s) => s.href !== undefined);
  return href && available.some((s) => !unavailable.includes(s.service));
}

/** getItemDepartment: department.content when not empty, else "Unknown": the location VuFind shows. */
export function itemDepartment(item: VuFindDaiaItem): string {
  const content = item.department?.content;
  return content !== undefined && content !== '' ? content : 'Unknown';
}

/** getItemOnSiteStatus: ilslink is the href of the loan service (getHoldLink's link, for drivers without placeHold). */
export function ilsLink(item: VuFindDaiaItem): string | undefined {
  let link: string | undefined;
  for (const s of [...(item.available ?? []), ...(item.unavailable ?? [])]) {
    if (s.service === 'loan' && s.href !== undefined) link = s.href;
  }
  return link;
}
