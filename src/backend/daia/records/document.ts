import type { ItemInformationResponse } from '../../../sip2/index.js';
import { nonEmpty } from '../../documents.js';
import { type DaiaMappingContext, daiaItem } from '../mapping.js';
import type { DaiaDocument, DaiaItem } from '../types.js';

/** One copy of a record: its barcode and the ILS's 18 for it (null: the barcode could not be asked about). */
export interface RecordCopy {
  barcode: string;
  info: ItemInformationResponse | null;
}

/**
 * The document for a record: its id is the request id as the client sent it
 * (VuFind's DAIA driver keeps the document whose id equals what it asked
 * for), one item per copy the ILS knows, mapped exactly as an item document's
 * (daiaItem); copies it does not know are left out, and a record without
 * known copies is a document without items. `about` is the title of the
 * first known copy (18 AJ).
 */
export function recordDocument(id: string, copies: readonly RecordCopy[], ctx: DaiaMappingContext): DaiaDocument {
  const doc: DaiaDocument = { id };
  const items: DaiaItem[] = [];
  for (const { barcode, info } of copies) {
    const item = info === null ? null : daiaItem(barcode, info, ctx);
    if (item === null) continue;
    if (items.length === 0) {
      const about = nonEmpty(info?.titleIdentifier);
      if (about !== undefined) doc.about = about;
    }
    items.push(item);
  }
  if (items.length > 0) doc.item = items;
  return doc;
}
