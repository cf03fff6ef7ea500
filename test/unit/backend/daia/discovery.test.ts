/**
 * What discovery systems act on in a DAIA item (issue 25): the request links
 * (`href`) and the department. Each expectation is what VuFind's DAIA driver
 * decides from the item (test/helpers/vufind-daia.ts restates the functions of
 * vufind-org/vufind module/VuFind/src/VuFind/ILS/Driver/DAIA.php it encodes).
 */
import { describe, expect, it } from 'vitest';
import {
  type DaiaMappingContext,
  daiaDocument,
  daiaItem,
  libraryDepartment,
} from '../../../../src/backend/daia/mapping.js';
import { RequestLink, requestLinkProblem } from '../../../../src/backend/daia/request-link.js';
import { DaiaService } from '../../../../src/backend/daia/service.js';
import { compileUriTemplates } from '../../../../src/backend/uris.js';
import { sip2DateFrom } from '../../../../src/sip2/date.js';
import { loadDialect } from '../../../../src/sip2/dialect.js';
import { Sip2Messages } from '../../../../src/sip2/messages.js';
import { CIRCULATION_STATUS, type ItemInformationResponse } from '../../../../src/sip2/spec.js';
import { daiaSchemaErrors } from '../../../helpers/daia-schema.js';
import { ilsLink, isRecallable, isStorageRetrievalRequest, itemDepartment } from '../../../helpers/vufind-daia.js';

const uris = compileUriTemplates({
  item: 'https://lib.example.org/item/{barcode}',
  edition: 'https://lib.example.org/title/{title}',
  storage: null,
  patronType: null,
});
const link = new RequestLink('https://opac.example.org/hold?item={item}&copy={barcode}');
const base = { dialect: loadDialect('generic'), uris, institution: 'DEMO' };
const withRequests = (holds: boolean, onShelf: boolean): DaiaMappingContext => ({
  ...base,
  department: { content: 'Demo Public Library' },
  requests: { link, holds, onShelf },
});

function info(fields: Partial<ItemInformationResponse> = {}): ItemInformationResponse {
  return {
    code: '18',
    circulationStatus: CIRCULATION_STATUS.available,
    securityMarker: 2,
    feeType: 1,
    transactionDate: sip2DateFrom(new Date(2025, 2, 10, 12, 0, 0)),
    itemIdentifier: 'it 1',
    titleIdentifier: 'Faust',
    holdQueueLength: '0',
    dueDate: '20250320    120000',
    owner: 'DEMO',
    ...fields,
  };
}

const HREF = 'https://opac.example.org/hold?item=https%3A%2F%2Flib.example.org%2Fitem%2Fit%25201&copy=it%201';

describe('request links (href) where a patron can ask for the copy', () => {
  // Circulation statuses of a copy that comes back: a hold or recall on it makes sense.
  const comesBack: Array<[string, number]> = [
    ['04 charged', CIRCULATION_STATUS.charged],
    ['05 charged, no recall yet', CIRCULATION_STATUS.chargedNoRecall],
    ['07 recalled', CIRCULATION_STATUS.recalled],
    ['08 on the hold shelf', CIRCULATION_STATUS.holdShelf],
    ['10 in transit', CIRCULATION_STATUS.inTransit],
    ['02 on order', CIRCULATION_STATUS.onOrder],
    ['06 in process', CIRCULATION_STATUS.inProcess],
  ];
  for (const [name, status] of comesBack) {
    it(`${name}: the link on both unavailable services when the ILS takes holds (VuFind checkIsRecallable: true)`, () => {
      const item = daiaItem('it 1', info({ circulationStatus: status }), withRequests(true, false))!;
      expect(item.unavailable?.map((s) => [s.service, s.href])).toEqual([
        ['loan', HREF],
        ['presentation', HREF],
      ]);
      expect(isRecallable(item)).toBe(true);
      // getItemOnSiteStatus: ilslink, the link VuFind shows where it cannot place the hold itself.
      expect(ilsLink(item)).toBe(HREF);
      expect(daiaSchemaErrors({ document: [{ id: item.id, item: [item] }] })).toEqual([]);
    });

    it(`${name}: no link when the ILS takes no holds (its 98 BX says N): no recall button`, () => {
      const item = daiaItem('it 1', info({ circulationStatus: status }), withRequests(false, true))!;
      expect(item.unavailable?.every((s) => s.href === undefined)).toBe(true);
      expect(isRecallable(item)).toBe(false);
    });
  }

  for (const [name, status] of [
    ['12 lost', CIRCULATION_STATUS.lost],
    ['13 missing', CIRCULATION_STATUS.missing],
    ['11 claimed returned', CIRCULATION_STATUS.claimedReturned],
  ] as const) {
    it(`${name}: never a link, the copy may never come back`, () => {
      const item = daiaItem('it 1', info({ circulationStatus: status }), withRequests(true, true))!;
      expect(item.unavailable?.every((s) => s.href === undefined)).toBe(true);
      expect(isRecallable(item)).toBe(false);
    });
  }

  it('on the shelf: no link by default (VuFind checkIsStorageRetrievalRequest: false)', () => {
    for (const holds of [true, false]) {
      const item = daiaItem('it 1', info(), withRequests(holds, false))!;
      expect(item.available?.every((s) => s.href === undefined)).toBe(true);
      expect(isStorageRetrievalRequest(item)).toBe(false);
      expect(isRecallable(item)).toBe(false);
    }
  });

  it('on the shelf with shelf requests: the link on both available services (checkIsStorageRetrievalRequest: true)', () => {
    for (const status of [CIRCULATION_STATUS.available, CIRCULATION_STATUS.reshelving]) {
      const item = daiaItem('it 1', info({ circulationStatus: status }), withRequests(false, true))!;
      expect(item.available?.map((s) => s.href)).toEqual([HREF, HREF]);
      expect(isStorageRetrievalRequest(item)).toBe(true);
      expect(isRecallable(item)).toBe(false);
      expect(daiaSchemaErrors({ document: [{ id: item.id, item: [item] }] })).toEqual([]);
    }
  });

  it('no links without requests in the context, and none on an item whose status is unknown', () => {
    expect(JSON.stringify(daiaItem('it 1', info({ circulationStatus: 4 }), base))).not.toContain('href');
    expect(daiaItem('it 1', info({ circulationStatus: 1 }), withRequests(true, true))).toMatchObject({
      id: 'https://lib.example.org/item/it%201',
    });
    expect(JSON.stringify(daiaItem('it 1', info({ circulationStatus: 1 }), withRequests(true, true)))).not.toContain(
      'href',
    );
  });
});

describe('RequestLink', () => {
  it('fills {item} and {barcode} percent-encoded, each as often as the template has it', () => {
    const both = new RequestLink('https://opac.example.org/{barcode}/hold?id={item}&again={barcode}');
    expect(both.build('https://lib.example.org/item/a/b', 'a/b?&#')).toBe(
      'https://opac.example.org/a%2Fb%3F%26%23/hold?id=https%3A%2F%2Flib.example.org%2Fitem%2Fa%2Fb&again=a%2Fb%3F%26%23',
    );
  });

  it('refuses templates that cannot give DAIA links (URL type: ^https?:) or would not name the copy', () => {
    expect(requestLinkProblem('https://opac.example.org/hold?item={item}')).toBeNull();
    expect(requestLinkProblem('HTTP://opac.example.org/{barcode}')).toBeNull();
    expect(requestLinkProblem('https://opac.example.org/hold')).toMatch(/must contain \{item\} or \{barcode\}/);
    expect(requestLinkProblem('https://opac.example.org/hold?p={patron}')).toMatch(/unknown placeholder \{patron\}/);
    expect(requestLinkProblem('urn:x:{barcode}')).toMatch(/http: or https: URL/);
    expect(requestLinkProblem('{item}')).toMatch(/http: or https: URL/);
    expect(requestLinkProblem('https://opac.example.org/ {item}')).toMatch(/spaces/);
    expect(() => new RequestLink('ftp://x/{item}')).toThrow(
      /request link template "ftp:\/\/x\/\{item\}" must be an http/,
    );
  });
});

describe('department: the location VuFind shows (DAIA.php getItemDepartment)', () => {
  it("the library: daia.department.content, else the 98's library name (AM), else sip2.institution; the id when set", () => {
    expect(libraryDepartment({ content: 'Stadtbibliothek' }, 'Demo Public Library', 'DEMO')).toEqual({
      content: 'Stadtbibliothek',
    });
    expect(libraryDepartment({}, ' Demo Public Library ', 'DEMO')).toEqual({ content: 'Demo Public Library' });
    expect(libraryDepartment({ content: null, id: null }, '  ', 'DEMO')).toEqual({ content: 'DEMO' });
    expect(libraryDepartment({ id: 'http://lobid.org/organisations/DE-7' }, undefined, 'DEMO')).toEqual({
      id: 'http://lobid.org/organisations/DE-7',
      content: 'DEMO',
    });
  });

  it('every item has one, never "Unknown"; an owner other than the institution (18 BG) is kept as it is', () => {
    const ctx = withRequests(true, false);
    const own = daiaItem('it 1', info(), ctx)!;
    expect(own.department).toEqual({ content: 'Demo Public Library' });
    expect(itemDepartment(own)).toBe('Demo Public Library');
    const noOwner = daiaItem('it 1', info({ owner: undefined }), ctx)!;
    expect(itemDepartment(noOwner)).toBe('Demo Public Library');
    const branch = daiaItem('it 1', info({ owner: 'BRANCH' }), ctx)!;
    expect(branch.department).toEqual({ content: 'BRANCH' });
    expect(itemDepartment(branch)).toBe('BRANCH');
    expect(itemDepartment(daiaItem('it 1', info(), base)!)).toBe('DEMO');
  });
});

describe('DaiaService reads what the ILS says at each request', () => {
  it("the library's name and whether it takes holds come from its latest 98, not the one at start", async () => {
    let libraryName: string | undefined = 'Demo Public Library';
    let holds: boolean | undefined = true;
    const service = new DaiaService({
      send: async (message) => info({ itemIdentifier: message.itemIdentifier, circulationStatus: 4 }),
      messages: new Sip2Messages({ institutionId: 'DEMO' }),
      dialect: base.dialect,
      uris,
      institution: 'DEMO',
      department: { id: 'http://lobid.org/organisations/DE-7', libraryName: () => libraryName },
      requests: { link, acsSupportsHolds: () => holds, onShelf: false },
    });
    const first = (await service.availability(['it 1'])).document[0]!.item![0]!;
    expect(first.department).toEqual({ id: 'http://lobid.org/organisations/DE-7', content: 'Demo Public Library' });
    expect(isRecallable(first)).toBe(true);

    libraryName = undefined;
    holds = undefined; // no 98 to go by: no button that might only fail
    const second = (await service.availability(['it 1'])).document[0]!.item![0]!;
    expect(second.department).toEqual({ id: 'http://lobid.org/organisations/DE-7', content: 'DEMO' });
    expect(isRecallable(second)).toBe(false);
  });

  it('a document of the response is valid DAIA with department and links', () => {
    const doc = daiaDocument('it 1', 'it 1', info({ circulationStatus: 4 }), withRequests(true, true));
    expect(daiaSchemaErrors({ document: [doc] })).toEqual([]);
  });
});
