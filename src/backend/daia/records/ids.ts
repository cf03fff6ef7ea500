import type { UriTemplate } from '../../uris.js';

/**
 * Which DAIA request ids name records (the ILS's bibliographic ids), and
 * which record: pure. An edition URI (paia.editionUri) carries its title id,
 * which is the record id; an id starting with the configured prefix (VuFind's
 * daiaIdPrefix, "ppn:" unless a library sets another) carries the record id
 * after it, as the discovery system wrote it (no decoding: VuFind puts its
 * record id after the prefix as it is). Item URIs are checked before this.
 */
export interface RecordIds {
  edition: UriTemplate;
  /** daia.records.idPrefix; null: only edition URIs name records. */
  idPrefix: string | null;
}

/** The record id a request id names, or null when it names none. */
export function recordIdOf(requested: string, ids: RecordIds): string | null {
  const title = ids.edition.match(requested);
  if (title !== null) return title.trim() === '' ? null : title;
  if (ids.idPrefix === null || !requested.startsWith(ids.idPrefix)) return null;
  const record = requested.slice(ids.idPrefix.length);
  return record.trim() === '' ? null : record;
}
