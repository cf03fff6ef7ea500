/**
 * DaiaService with records (daia.records): which ids are records, and the
 * record's document as VuFind's DAIA driver reads it
 * (vufind-org/vufind module/VuFind/src/VuFind/ILS/Driver/DAIA.php):
 * generateURI() asks for daiaIdPrefix . $id ("ppn:" by default, init()),
 * extractDaiaDoc() with multiQuery keeps the document whose `id` equals
 * generateURI($id) and that has `item`, and parseDaiaArray() turns each
 * item into a holding (item_id from item.id). The 17s are counted on a
 * stubbed send; the same send as item documents use.
 */
import { describe, expect, it } from 'vitest';
import { recordIdOf } from '../../../../../src/backend/daia/records/ids.js';
import type { RecordSource } from '../../../../../src/backend/daia/records/source.js';
import { firstKnown } from '../../../../../src/backend/daia/records/source.js';
import { DaiaService } from '../../../../../src/backend/daia/service.js';
import { compileUriTemplates } from '../../../../../src/backend/uris.js';
import { loadDialect } from '../../../../../src/sip2/dialect.js';
import { Sip2Messages } from '../../../../../src/sip2/messages.js';
import type { ItemInformation, ItemInformationResponse } from '../../../../../src/sip2/spec.js';
import { daiaSchemaErrors } from '../../../../helpers/daia-schema.js';

const uris = compileUriTemplates({
  item: 'https://lib.example.org/item/{barcode}',
  edition: 'https://lib.example.org/title/{title}',
  storage: null,
  patronType: null,
});
const ids = { edition: uris.edition, idPrefix: 'ppn:' };

/** The 18 for a barcode: a copy on the shelf whose title is its barcode's record; "gone-*" the ILS does not know. */
function answer(barcode: string): ItemInformationResponse {
  if (barcode.startsWith('gone-'))
    return {
      code: '18',
      circulationStatus: 1,
      securityMarker: 0,
      feeType: 1,
      transactionDate: '',
      itemIdentifier: barcode,
      titleIdentifier: '',
      extra: [],
    } as unknown as ItemInformationResponse;
  return {
    code: '18',
    circulationStatus: 3,
    securityMarker: 2,
    feeType: 1,
    transactionDate: '20250310    120000',
    itemIdentifier: barcode,
    titleIdentifier: `Title of ${barcode}`,
    permanentLocation: 'MAIN',
    extra: [],
  } as unknown as ItemInformationResponse;
}

function mapping(records: Record<string, string[]>): RecordSource & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    failures: 0,
    close: () => {},
    barcodesOf: async (record) => {
      asked.push(record);
      return records[record] ?? [];
    },
  };
}

function service(source: RecordSource | null) {
  const sent: string[] = [];
  const svc = new DaiaService({
    send: async (message: ItemInformation) => {
      sent.push(message.itemIdentifier);
      return answer(message.itemIdentifier);
    },
    messages: new Sip2Messages({ institutionId: 'DEMO' }),
    dialect: loadDialect('generic'),
    uris,
    institution: 'DEMO',
    records: source && { source, ids },
  });
  return { svc, sent };
}

describe('record ids', () => {
  it('an edition URI names its title id; the prefix names what follows it, as written; nothing else is a record', () => {
    expect(recordIdOf('https://lib.example.org/title/t-faust', ids)).toBe('t-faust');
    expect(recordIdOf('https://lib.example.org/title/t%20x', ids)).toBe('t x');
    expect(recordIdOf('ppn:027586081', ids)).toBe('027586081');
    expect(recordIdOf('ppn:a%20b', ids)).toBe('a%20b');
    expect(recordIdOf('ppn:', ids)).toBeNull();
    expect(recordIdOf('PPN:1', ids)).toBeNull();
    expect(recordIdOf('urn:isbn:123', ids)).toBeNull();
    expect(recordIdOf('it-0001', ids)).toBeNull();
    expect(recordIdOf('ppn:1', { ...ids, idPrefix: null })).toBeNull();
    expect(recordIdOf('https://lib.example.org/title/t-faust', { ...ids, idPrefix: null })).toBe('t-faust');
  });
});

describe('DAIA by record', () => {
  it('VuFind multiQuery: one document per asked id, its id exactly "ppn:" + the record id, each known copy an item', async () => {
    const source = mapping({ '1234': ['it-1', 'it-2', 'gone-3'], '5678': ['it-5'] });
    const { svc, sent } = service(source);
    // DAIA.php generateMultiURIs(): "ppn:1234|ppn:5678|ppn:0000"
    const response = await svc.availability(['ppn:1234', 'ppn:5678', 'ppn:0000']);
    expect(daiaSchemaErrors(response)).toEqual([]);
    // extractDaiaDoc(): $doc['id'] == generateURI($id), and isset($doc['item']).
    const byId = new Map(response.document.map((doc) => [doc.id, doc]));
    expect(byId.get('ppn:1234')).toMatchObject({
      about: 'Title of it-1',
      item: [{ id: 'https://lib.example.org/item/it-1' }, { id: 'https://lib.example.org/item/it-2' }],
    });
    expect(byId.get('ppn:5678')?.item?.map((item) => item.id)).toEqual(['https://lib.example.org/item/it-5']);
    // A record nobody maps: a document without items, which extractDaiaDoc() skips.
    expect(byId.get('ppn:0000')).toEqual({ id: 'ppn:0000' });
    expect(response.document.map((doc) => doc.requested)).toEqual([undefined, undefined, undefined]);
    expect(sent.sort()).toEqual(['gone-3', 'it-1', 'it-2', 'it-5']);
    expect(source.asked).toEqual(['1234', '5678', '0000']);
  });

  it('edition URIs are records; item URIs and plain barcodes stay items; a copy asked for twice costs one 17', async () => {
    const { svc, sent } = service(mapping({ 't-faust': ['it-30', 'it-31'] }));
    const response = await svc.availability([
      'https://lib.example.org/title/t-faust',
      'https://lib.example.org/item/it-30',
      'it-31',
      'ppn:t-faust',
    ]);
    expect(daiaSchemaErrors(response)).toEqual([]);
    expect(response.document.map((doc) => [doc.id, doc.item?.length])).toEqual([
      ['https://lib.example.org/title/t-faust', 2],
      ['https://lib.example.org/item/it-30', 1],
      ['https://lib.example.org/item/it-31', 1],
      ['ppn:t-faust', 2],
    ]);
    expect(sent.sort()).toEqual(['it-30', 'it-31']);
  });

  it('without a record source, record ids are unknown documents as before', async () => {
    const { svc, sent } = service(null);
    const response = await svc.availability(['ppn:1234', 'https://lib.example.org/title/t-faust']);
    expect(response.document).toEqual([{ id: 'ppn:1234' }, { id: 'https://lib.example.org/title/t-faust' }]);
    expect(sent).toEqual([]);
  });

  it('with a file and a lookup, the file answers the records it lists and the lookup the others', async () => {
    const file = mapping({ a: ['it-a'] });
    const lookup = mapping({ a: ['it-x'], b: ['it-b'] });
    const both = firstKnown([file, lookup]);
    expect(await both.barcodesOf('a')).toEqual(['it-a']);
    expect(await both.barcodesOf('b')).toEqual(['it-b']);
    expect(await both.barcodesOf('c')).toEqual([]);
    expect(lookup.asked).toEqual(['b', 'c']);
  });
});
