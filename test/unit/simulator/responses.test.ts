import { describe, expect, it } from 'vitest';
import { loadLibraryData } from '../../../sip2-simulator/src/data.js';
import { Library } from '../../../sip2-simulator/src/library.js';
import { parseProfile } from '../../../sip2-simulator/src/profiles.js';
import {
  type HandledRequest,
  REJECTED_BY_FAULT,
  rejectedResponse,
  respond,
  SUPPORTED_MESSAGES_BX,
} from '../../../sip2-simulator/src/responses.js';
import { decodeFrame, encodeMessage, extraField, noPatronFlags } from '../../../src/sip2/codec.js';
import { sip2DateFrom } from '../../../src/sip2/date.js';
import {
  BUILTIN_DIALECTS,
  type DialectName,
  loadDialect,
  parseDialectDate,
  parseFineItem,
} from '../../../src/sip2/dialect.js';
import type {
  Checkin,
  CheckinResponse,
  Checkout,
  CheckoutResponse,
  ItemInformationResponse,
  ItemStatusUpdateResponse,
  PatronEnableResponse,
  PatronInformation,
  PatronInformationResponse,
  PatronStatusResponse,
  Sip2Message,
} from '../../../src/sip2/spec.js';

const NOW = new Date(2026, 2, 15, 12, 0, 0);
const NO_FLAGS = noPatronFlags();
const tx = sip2DateFrom(NOW);

function setup(dialectName: DialectName) {
  const library = new Library(loadLibraryData(), { now: () => NOW });
  const dialect = loadDialect(dialectName);
  const ctx = { library, dialect };
  /** Runs the request and round-trips the response through the real codec in the dialect's charset. */
  const ask = <M extends Sip2Message>(request: HandledRequest): M => {
    const response = respond(request, ctx);
    const wire = { charset: dialect.charset, errorDetection: true };
    const bytes = encodeMessage(response, { ...wire, sequence: 1, unencodable: 'replace' });
    const decoded = decodeFrame(bytes.subarray(0, bytes.length - 1), wire);
    if (decoded.kind !== 'message') throw new Error('not a catalogue message');
    return decoded.message as M;
  };
  return { library, dialect, ctx, ask };
}

const patronInfo = (
  patron: string,
  summary: PatronInformation['summary'],
  extra: Partial<PatronInformation> = {},
): PatronInformation => ({
  code: '63',
  language: '001',
  transactionDate: tx,
  summary,
  institutionId: 'DEMO',
  patronIdentifier: patron,
  ...extra,
});

describe('64 Patron Information per dialect', () => {
  it('generic/evergreen/folio: AS lists every hold, CD the pending ones', () => {
    for (const name of ['generic', 'evergreen', 'folio'] as const) {
      const { ask } = setup(name);
      const holds = ask<PatronInformationResponse>(patronInfo('alice', 'hold'));
      expect(holds.holdItems).toEqual(['it-0010', 'it-0020']);
      expect(holds.holdItemsCount).toBe(2);
      expect(holds.unavailableHoldsCount).toBe(1);
      expect(ask<PatronInformationResponse>(patronInfo('alice', 'unavailableHold')).unavailableHoldItems).toEqual([
        'it-0020',
      ]);
    }
  });

  it('unavailable-holds=closed (FOLIO edge-sip2): CD lists no pending hold, AS still lists every hold', () => {
    const { library, dialect } = setup('folio');
    const ctx = { library, dialect, profile: parseProfile(['folio']) };
    const holds = respond(patronInfo('alice', 'hold'), ctx) as PatronInformationResponse;
    expect(holds.holdItems).toEqual(['it-0010', 'it-0020']);
    const cd = respond(patronInfo('alice', 'unavailableHold'), ctx) as PatronInformationResponse;
    expect(cd.unavailableHoldItems).toEqual([]);
  });

  it('koha: AS lists only holds ready for pickup', () => {
    const { ask } = setup('koha');
    const holds = ask<PatronInformationResponse>(patronInfo('alice', 'hold'));
    expect(holds.holdItems).toEqual(['it-0010']);
    expect(holds.holdItemsCount).toBe(1);
    expect(holds.unavailableHoldsCount).toBe(1);
  });

  it('lists a title-level hold by its title id', () => {
    const { ask } = setup('generic');
    expect(ask<PatronInformationResponse>(patronInfo('emile', 'unavailableHold')).unavailableHoldItems).toEqual([
      't-vorleser',
    ]);
  });

  it('fills counts, fees, contact data, expiry and patron class; one list only', () => {
    const { ask } = setup('generic');
    const r = ask<PatronInformationResponse>(patronInfo('alice', 'charged', { patronPassword: 'alice-pass' }));
    expect(r).toMatchObject({
      validPatron: true,
      validPatronPassword: true,
      personalName: 'Alice Example',
      language: '001',
      holdItemsCount: 2,
      overdueItemsCount: 1,
      chargedItemsCount: 3,
      fineItemsCount: 2,
      recallItemsCount: 0,
      unavailableHoldsCount: 1,
      currencyType: 'EUR',
      feeAmount: '3.50',
      feeLimit: '10.00',
      homeAddress: 'Hauptstraße 1, 12345 Demostadt',
      emailAddress: 'alice@example.org',
      homePhoneNumber: '+49 30 1234567',
      chargedItems: ['it-0001', 'it-0002', 'it-0003'],
    });
    expect(r.holdItems).toBeUndefined();
    expect(r.fineItems).toBeUndefined();
    expect(extraField(r, 'PA')).toBe('20270315');
    expect(extraField(r, 'PC')).toBe('adult');
  });

  it('sends CQ only when AD was sent, N for a wrong one', () => {
    const { ask } = setup('generic');
    expect(ask<PatronInformationResponse>(patronInfo('alice', null)).validPatronPassword).toBeUndefined();
    expect(
      ask<PatronInformationResponse>(patronInfo('alice', null, { patronPassword: 'nope' })).validPatronPassword,
    ).toBe(false);
  });

  it('folio sends no expiry field; an expired patron shows only in the flags', () => {
    const { ask } = setup('folio');
    const r = ask<PatronInformationResponse>(patronInfo('bob', null));
    expect(extraField(r, 'PA')).toBeUndefined();
    expect(r.patronStatus.renewalPrivilegesDenied).toBe(true);
    expect(r.patronStatus.holdPrivilegesDenied).toBe(true);
  });

  it('flags a patron over the fee limit', () => {
    const { ask } = setup('generic');
    const r = ask<PatronInformationResponse>(patronInfo('carol', null));
    expect(r.feeAmount).toBe('12.00');
    expect(r.feeLimit).toBe('10.00');
    expect(r.patronStatus.chargePrivilegesDenied).toBe(true);
    expect(r.patronStatus.excessiveOutstandingFines).toBe(true);
    expect(r.patronStatus.renewalPrivilegesDenied).toBe(false);
  });

  it('answers an unknown patron with BL N, empty AE and zero counts', () => {
    const { ask } = setup('generic');
    const r = ask<PatronInformationResponse>(patronInfo('nobody', 'charged', { patronPassword: 'x' }));
    expect(r).toMatchObject({
      validPatron: false,
      validPatronPassword: false,
      personalName: '',
      holdItemsCount: 0,
      overdueItemsCount: 0,
      chargedItemsCount: 0,
      fineItemsCount: 0,
      recallItemsCount: 0,
      unavailableHoldsCount: 0,
    });
    expect(r.chargedItems).toBeUndefined();
  });

  it('writes AV entries that the dialect pattern reads back', () => {
    for (const name of BUILTIN_DIALECTS) {
      const { ask, dialect } = setup(name);
      const r = ask<PatronInformationResponse>(patronInfo('alice', 'fine'));
      expect(r.fineItems).toHaveLength(2);
      const parsed = r.fineItems!.map((entry) => parseFineItem(entry, dialect));
      expect(parsed.map((p) => p?.amount)).toEqual(['2.50', '1.00']);
      expect(parsed[0]!.about ?? 'Der Zauberberg').toContain('Der Zauberberg');
      if (name === 'generic')
        expect(parsed[0]).toEqual({
          amount: '2.50',
          currency: 'EUR',
          type: 'overdue',
          date: '20260313',
          item: 'it-0001',
          about: 'Der Zauberberg',
        });
      if (name === 'evergreen') expect(parsed[1]).toMatchObject({ id: 'f-0002', about: 'Effi Briest' });
    }
  });

  it('pages a list and never sends more than listLimit entries', () => {
    for (const name of BUILTIN_DIALECTS) {
      const { ask, dialect } = setup(name);
      const r = ask<PatronInformationResponse>(patronInfo('dave', 'charged', { startItem: '1', endItem: '120' }));
      expect(r.chargedItemsCount).toBe(120);
      expect(r.chargedItems).toHaveLength(Math.min(120, dialect.listLimit));
      expect(r.chargedItems![0]).toBe('dv-0001');
    }
  });

  it('replaces characters the charset cannot carry instead of failing (cp850 and Japanese)', () => {
    const { ctx } = setup('generic');
    const item = respond({ code: '17', transactionDate: tx, institutionId: 'DEMO', itemIdentifier: 'em-0003' }, ctx);
    const bytes = encodeMessage(item, { charset: 'cp850', errorDetection: true, sequence: 0, unencodable: 'replace' });
    const decoded = decodeFrame(bytes.subarray(0, -1), { charset: 'cp850', errorDetection: true });
    expect(decoded.kind === 'message' && decoded.message.code === '18' && decoded.message.titleIdentifier).toBe(
      '???????',
    );
  });
});

describe('18 Item Information', () => {
  const itemInfo = (barcode: string): HandledRequest => ({
    code: '17',
    transactionDate: tx,
    institutionId: 'DEMO',
    itemIdentifier: barcode,
  });

  it('describes a loan with due date in the dialect format, call number in CS', () => {
    const expected = {
      generic: '20260325    235959',
      koha: '20260325    235959',
      evergreen: '2026-03-25 23:59:59',
    } as const;
    for (const [name, due] of Object.entries(expected)) {
      const r = setup(name as DialectName).ask<ItemInformationResponse>(itemInfo('it-0002'));
      expect(r).toMatchObject({
        circulationStatus: 4,
        holdQueueLength: '0',
        dueDate: due,
        titleIdentifier: 'Effi Briest',
        permanentLocation: 'MAIN',
        owner: 'DEMO',
        mediaType: '001',
      });
      expect(extraField(r, 'CS')).toBe('GK 1234 F774 E3');
    }
    const folio = setup('folio').ask<ItemInformationResponse>(itemInfo('it-0002'));
    expect(folio.dueDate).toMatch(/^\d{8} {3}Z\d{6}$/);
    expect(parseDialectDate(String(folio.dueDate), 'sip2-utc')).not.toBeNull();
  });

  it('shows the hold shelf with a pickup date, the queue, transit and lost items', () => {
    const { ask } = setup('generic');
    expect(ask<ItemInformationResponse>(itemInfo('it-0010'))).toMatchObject({
      circulationStatus: 8,
      holdPickupDate: '20260320    235959',
      holdQueueLength: '1',
    });
    expect(ask<ItemInformationResponse>(itemInfo('it-0020'))).toMatchObject({
      circulationStatus: 4,
      holdQueueLength: '2',
    });
    expect(ask<ItemInformationResponse>(itemInfo('it-0040'))).toMatchObject({
      circulationStatus: 10,
      permanentLocation: 'BRANCH',
      currentLocation: 'MAIN',
    });
    expect(ask<ItemInformationResponse>(itemInfo('it-0050')).circulationStatus).toBe(12);
    expect(ask<ItemInformationResponse>(itemInfo('it-0030')).dueDate).toBeUndefined();
  });

  it('answers an unknown barcode with status 01, empty AJ and "Item not found"', () => {
    const r = setup('generic').ask<ItemInformationResponse>(itemInfo('zz-404'));
    expect(r).toMatchObject({
      circulationStatus: 1,
      titleIdentifier: '',
      itemIdentifier: 'zz-404',
      screenMessage: ['Item not found'],
    });
  });
});

describe('other responses', () => {
  it('98 announces the supported messages', () => {
    const r = setup('generic').ask<Sip2Message>({
      code: '99',
      statusCode: 0,
      maxPrintWidth: 80,
      protocolVersion: '2.00',
    });
    expect(r).toMatchObject({
      code: '98',
      onlineStatus: true,
      checkinOk: true,
      checkoutOk: true,
      statusUpdateOk: true,
      offlineOk: false,
      acsRenewalPolicy: true,
      timeoutPeriod: 30,
      retriesAllowed: 3,
      protocolVersion: '2.00',
      institutionId: 'DEMO',
      libraryName: 'Demo Public Library',
      supportedMessages: SUPPORTED_MESSAGES_BX,
    });
    expect(SUPPORTED_MESSAGES_BX).toBe('YYYYYYYYYYYYYYYY');
  });

  it("98 BX as the profile's bx= says (an ILS that takes no holds)", () => {
    const { ctx } = setup('generic');
    const scStatus = { code: '99', statusCode: 0, maxPrintWidth: 80, protocolVersion: '2.00' } as const;
    const response = respond(scStatus, { ...ctx, profile: parseProfile(['bx=YYYYYYYYYYYYYNYY']) });
    expect(response).toMatchObject({ code: '98', supportedMessages: 'YYYYYYYYYYYYYNYY' });
  });

  it('30 carries the new due date; a refusal says why and changes nothing', () => {
    const { ask, library } = setup('evergreen');
    const renew = (item: string) =>
      ask<Sip2Message>({
        code: '29',
        thirdPartyAllowed: false,
        noBlock: false,
        transactionDate: tx,
        nbDueDate: null,
        institutionId: 'DEMO',
        patronIdentifier: 'alice',
        itemIdentifier: item,
      });
    expect(renew('it-0002')).toMatchObject({
      code: '30',
      ok: true,
      renewalOk: true,
      dueDate: '2026-04-22 23:59:59',
      titleIdentifier: 'Effi Briest',
    });
    expect(renew('it-0003')).toMatchObject({
      code: '30',
      ok: false,
      renewalOk: false,
      screenMessage: ['Renewal limit reached'],
      dueDate: '2026-03-29 23:59:59',
    });
    expect(library.item('it-0003')!.loan!.renewals).toBe(3);
  });

  it('16 places, changes and cancels holds', () => {
    const { ask } = setup('generic');
    const hold = (mode: string, fields: Record<string, string>) =>
      ask<Sip2Message>({
        code: '15',
        holdMode: mode,
        transactionDate: tx,
        institutionId: 'DEMO',
        patronIdentifier: 'dave',
        ...fields,
      });
    expect(hold('+', { itemIdentifier: 'it-0020', holdType: '3' })).toMatchObject({
      code: '16',
      ok: true,
      available: false,
      queuePosition: '3',
      pickupLocation: 'MAIN',
      itemIdentifier: 'it-0020',
      expirationDate: '20270315    235959',
    });
    expect(
      hold('+', {
        titleIdentifier: 't-faust',
        holdType: '2',
        pickupLocation: 'BRANCH',
        expirationDate: '20260601    000000',
      }),
    ).toMatchObject({
      ok: true,
      available: true,
      titleIdentifier: 't-faust',
      pickupLocation: 'BRANCH',
      expirationDate: '20260601    235959',
    });
    expect(hold('+', { itemIdentifier: 'it-0020' })).toMatchObject({
      ok: false,
      screenMessage: ['Patron already has a hold on this item or title'],
    });
    expect(hold('*', { itemIdentifier: 'it-0020', pickupLocation: 'BRANCH' })).toMatchObject({
      ok: true,
      pickupLocation: 'BRANCH',
    });
    expect(hold('-', { itemIdentifier: 'it-0020' })).toMatchObject({ ok: true });
    expect(hold('-', { itemIdentifier: 'it-0020' })).toMatchObject({ ok: false, screenMessage: ['No such hold'] });
    expect(hold('?', { itemIdentifier: 'it-0020' })).toMatchObject({ ok: false });
  });

  it('38 accepts a payment that reduces a fine, refuses one that does not fit', () => {
    const { ask, library } = setup('generic');
    const pay = (amount: string, feeIdentifier?: string) =>
      ask<Sip2Message>({
        code: '37',
        transactionDate: tx,
        feeType: 1,
        paymentType: 0,
        currencyType: 'EUR',
        feeAmount: amount,
        institutionId: 'DEMO',
        patronIdentifier: 'alice',
        ...(feeIdentifier ? { feeIdentifier } : {}),
      });
    expect(pay('1.00', 'f-0001')).toMatchObject({ code: '38', paymentAccepted: true });
    expect(library.totalFinesCents('alice')).toBe(250);
    expect(pay('9.00')).toMatchObject({ paymentAccepted: false });
  });

  it('24 Patron Status, 36 End Session and 66 Renew All', () => {
    const { ask } = setup('generic');
    expect(
      ask<Sip2Message>({
        code: '23',
        language: '001',
        transactionDate: tx,
        institutionId: 'DEMO',
        patronIdentifier: 'carol',
        terminalPassword: '',
        patronPassword: 'carol-pass',
      }),
    ).toMatchObject({
      code: '24',
      validPatron: true,
      validPatronPassword: true,
      personalName: 'Carol Blocked',
      currencyType: 'EUR',
      feeAmount: '12.00',
      patronStatus: { chargePrivilegesDenied: true },
    });
    expect(
      ask<Sip2Message>({
        code: '23',
        language: '001',
        transactionDate: tx,
        institutionId: 'DEMO',
        patronIdentifier: 'nobody',
        terminalPassword: '',
        patronPassword: '',
      }),
    ).toMatchObject({ code: '24', validPatron: false, personalName: '' });
    expect(
      ask<Sip2Message>({ code: '35', transactionDate: tx, institutionId: 'DEMO', patronIdentifier: 'alice' }),
    ).toMatchObject({ code: '36', endSession: true, patronIdentifier: 'alice' });
    expect(
      ask<Sip2Message>({ code: '65', transactionDate: tx, institutionId: 'DEMO', patronIdentifier: 'alice' }),
    ).toMatchObject({
      code: '66',
      ok: true,
      renewedCount: 2,
      unrenewedCount: 1,
      renewedItems: ['it-0001', 'it-0002'],
      unrenewedItems: ['it-0003'],
    });
    expect(
      ask<Sip2Message>({
        code: '65',
        transactionDate: tx,
        institutionId: 'DEMO',
        patronIdentifier: 'alice',
        patronPassword: 'wrong',
      }),
    ).toMatchObject({
      code: '66',
      ok: false,
      renewedCount: 0,
    });
  });

  it('rejectedResponse refuses without touching the library', () => {
    const { ctx, library } = setup('generic');
    const renew = rejectedResponse(
      {
        code: '29',
        thirdPartyAllowed: false,
        noBlock: false,
        transactionDate: tx,
        nbDueDate: null,
        institutionId: 'DEMO',
        patronIdentifier: 'alice',
        itemIdentifier: 'it-0002',
      },
      ctx,
    );
    expect(renew).toMatchObject({ code: '30', ok: false, screenMessage: [REJECTED_BY_FAULT] });
    expect(library.item('it-0002')!.loan!.renewals).toBe(0);
    expect(rejectedResponse(patronInfo('alice', null), ctx)).toMatchObject({
      code: '64',
      validPatron: false,
      personalName: '',
    });
    expect(
      rejectedResponse({ code: '17', transactionDate: tx, institutionId: 'DEMO', itemIdentifier: 'it-0002' }, ctx),
    ).toMatchObject({ code: '18', circulationStatus: 1 });
  });
});

describe('checkout, checkin, block, enable, item status update', () => {
  const checkout = (patron: string, item: string, extra: Partial<Checkout> = {}): Checkout => ({
    code: '11',
    scRenewalPolicy: true,
    noBlock: false,
    transactionDate: tx,
    nbDueDate: null,
    institutionId: 'DEMO',
    patronIdentifier: patron,
    itemIdentifier: item,
    terminalPassword: '',
    ...extra,
  });
  const checkin = (item: string, location = 'MAIN'): Checkin => ({
    code: '09',
    noBlock: false,
    transactionDate: tx,
    returnDate: tx,
    currentLocation: location,
    institutionId: 'DEMO',
    itemIdentifier: item,
    terminalPassword: '',
  });
  const itemInfo = (barcode: string): HandledRequest => ({
    code: '17',
    transactionDate: tx,
    institutionId: 'DEMO',
    itemIdentifier: barcode,
  });
  const status = (patron: string): HandledRequest => ({
    code: '23',
    language: '001',
    transactionDate: tx,
    institutionId: 'DEMO',
    patronIdentifier: patron,
    terminalPassword: '',
    patronPassword: '',
  });

  it('12 lends the item with the due date in the dialect format; 18 and 64 show the loan', () => {
    const { ask } = setup('evergreen');
    expect(ask<CheckoutResponse>(checkout('hanna', 'sc-0001'))).toMatchObject({
      code: '12',
      ok: true,
      renewalOk: false,
      magneticMedia: 'N',
      desensitize: 'Y',
      patronIdentifier: 'hanna',
      itemIdentifier: 'sc-0001',
      titleIdentifier: 'Der Schimmelreiter',
      dueDate: '2026-04-12 23:59:59',
      mediaType: '001',
      itemProperties: 'RFID tag 3M-0001',
      screenMessage: ['Item checked out'],
    });
    expect(ask<ItemInformationResponse>(itemInfo('sc-0001'))).toMatchObject({
      circulationStatus: 4,
      dueDate: '2026-04-12 23:59:59',
    });
    expect(ask<PatronInformationResponse>(patronInfo('hanna', 'charged')).chargedItems).toEqual([
      'sc-0001',
      'sc-0002',
      'sc-0003',
    ]);
  });

  it('12 for magnetic media: magnetic media Y, no desensitizing; renewal ok Y for an item the patron has', () => {
    const { ask } = setup('generic');
    expect(ask<CheckoutResponse>(checkout('hanna', 'sc-0004'))).toMatchObject({
      ok: true,
      magneticMedia: 'Y',
      desensitize: 'N',
      mediaType: '004',
    });
    expect(ask<CheckoutResponse>(checkout('hanna', 'sc-0004'))).toMatchObject({
      ok: true,
      renewalOk: true,
      screenMessage: ['Item renewed'],
    });
  });

  it('12 refused: ok 0, empty AH, the reason in AF; a wrong AD refuses too', () => {
    const { ask, library } = setup('generic');
    expect(ask<CheckoutResponse>(checkout('hanna', 'it-0020'))).toMatchObject({
      ok: false,
      renewalOk: false,
      magneticMedia: 'U',
      desensitize: 'N',
      dueDate: '',
      titleIdentifier: 'Buddenbrooks',
      screenMessage: ['Item is checked out to another patron'],
    });
    expect(ask<CheckoutResponse>(checkout('hanna', 'zz-404'))).toMatchObject({
      ok: false,
      titleIdentifier: '',
      screenMessage: ['Item not found'],
    });
    expect(ask<CheckoutResponse>(checkout('hanna', 'sc-0001', { patronPassword: 'wrong' }))).toMatchObject({
      ok: false,
      screenMessage: ['Invalid patron password'],
    });
    expect(library.item('sc-0001')!.loan).toBeNull();
  });

  it('10 to the hold shelf: alert Y, CV 01, CT here, CY and DA the waiting patron, AA who returned it', () => {
    const { ask } = setup('generic');
    expect(ask<CheckinResponse>(checkin('it-0020'))).toMatchObject({
      code: '10',
      ok: true,
      resensitize: true,
      magneticMedia: 'N',
      alert: true,
      itemIdentifier: 'it-0020',
      permanentLocation: 'MAIN',
      titleIdentifier: 'Buddenbrooks',
      patronIdentifier: 'frank',
      alertType: '01',
      destinationLocation: 'MAIN',
      holdPatronIdentifier: 'gina',
      holdPatronName: 'Gina Lostcard',
      screenMessage: ['Item on hold for gina: put it on the hold shelf (pickup until 2026-03-22)'],
    });
    expect(ask<ItemInformationResponse>(itemInfo('it-0020'))).toMatchObject({
      circulationStatus: 8,
      holdPickupDate: '20260322    235959',
    });
  });

  it("10 in transit: CV 02 to the hold's pickup location, CV 04 home; a plain return has no alert", () => {
    const { ask } = setup('generic');
    expect(ask<CheckinResponse>(checkin('sc-0002'))).toMatchObject({
      ok: true,
      alert: true,
      alertType: '02',
      destinationLocation: 'BRANCH',
      holdPatronIdentifier: 'ida',
      holdPatronName: 'Ida Branchreader',
    });
    expect(ask<CheckinResponse>(checkin('sc-0003'))).toMatchObject({
      ok: true,
      alert: true,
      alertType: '04',
      destinationLocation: 'BRANCH',
    });
    const plain = ask<CheckinResponse>(checkin('it-0002'));
    expect(plain).toMatchObject({
      ok: true,
      alert: false,
      patronIdentifier: 'alice',
      screenMessage: ['Item checked in'],
    });
    expect(plain.alertType).toBeUndefined();
    expect(ask<ItemInformationResponse>(itemInfo('sc-0002'))).toMatchObject({
      circulationStatus: 10,
      currentLocation: 'MAIN',
    });
  });

  it('10 refused: ok 0 and alert Y; an unknown barcode with CV 99 and an empty AQ', () => {
    const { ask } = setup('generic');
    expect(ask<CheckinResponse>(checkin('zz-404'))).toMatchObject({
      ok: false,
      alert: true,
      magneticMedia: 'U',
      alertType: '99',
      permanentLocation: '',
      screenMessage: ['Item not found'],
    });
    const notOut = ask<CheckinResponse>(checkin('it-0030'));
    expect(notOut).toMatchObject({
      ok: false,
      alert: true,
      permanentLocation: 'MAIN',
      titleIdentifier: 'Faust. Eine Tragödie',
      screenMessage: ['Item was not checked out'],
    });
    expect(notOut.patronIdentifier).toBeUndefined();
  });

  it('01 blocks the card and answers a 24 (language 000) whose flags and AF say so; 23 shows it until a 25 lifts it', () => {
    const { ask } = setup('generic');
    const blocked = ask<PatronStatusResponse>({
      code: '01',
      cardRetained: true,
      transactionDate: tx,
      institutionId: 'DEMO',
      blockedCardMessage: 'Card retained',
      patronIdentifier: 'hanna',
      terminalPassword: '',
    });
    const denied = {
      chargePrivilegesDenied: true,
      renewalPrivilegesDenied: true,
      recallPrivilegesDenied: true,
      holdPrivilegesDenied: true,
    };
    expect(blocked).toMatchObject({
      code: '24',
      language: '000',
      validPatron: true,
      personalName: 'Hanna Selfcheck',
      patronStatus: denied,
      screenMessage: ['Card retained', 'Welcome back, Hanna'],
    });
    expect(blocked.validPatronPassword).toBeUndefined();
    expect(ask<PatronStatusResponse>(status('hanna'))).toMatchObject({ patronStatus: denied });
    expect(ask<CheckoutResponse>(checkout('hanna', 'sc-0001'))).toMatchObject({
      ok: false,
      screenMessage: ['Card retained'],
    });

    const enable = (patronPassword?: string) =>
      ask<PatronEnableResponse>({
        code: '25',
        transactionDate: tx,
        institutionId: 'DEMO',
        patronIdentifier: 'hanna',
        ...(patronPassword !== undefined ? { patronPassword } : {}),
      });
    expect(enable('wrong')).toMatchObject({
      code: '26',
      validPatron: true,
      validPatronPassword: false,
      patronStatus: denied,
      screenMessage: ['Invalid patron password', 'Card retained', 'Welcome back, Hanna'],
    });
    expect(enable('hanna-pass')).toMatchObject({
      code: '26',
      language: '000',
      validPatronPassword: true,
      patronStatus: NO_FLAGS,
      screenMessage: ['Card block lifted', 'Welcome back, Hanna'],
    });
    expect(enable()).toMatchObject({ screenMessage: ['Card was not blocked', 'Welcome back, Hanna'] });
    expect(ask<PatronStatusResponse>(status('hanna')).patronStatus).toEqual(NO_FLAGS);
  });

  it('01 and 25 for an unknown patron: BL N, privileges denied, nothing blocked', () => {
    const { ask } = setup('generic');
    expect(
      ask<PatronStatusResponse>({
        code: '01',
        cardRetained: false,
        transactionDate: tx,
        institutionId: 'DEMO',
        blockedCardMessage: '',
        patronIdentifier: 'nobody',
        terminalPassword: '',
      }),
    ).toMatchObject({
      code: '24',
      validPatron: false,
      personalName: '',
      patronStatus: { chargePrivilegesDenied: true },
    });
    expect(
      ask<PatronEnableResponse>({ code: '25', transactionDate: tx, institutionId: 'DEMO', patronIdentifier: 'nobody' }),
    ).toMatchObject({
      code: '26',
      validPatron: false,
      validPatronPassword: false,
      personalName: '',
    });
  });

  it('20 stores the item properties that 18 then shows; an unknown item is ok 0', () => {
    const { ask } = setup('generic');
    const update = (item: string) =>
      ask<ItemStatusUpdateResponse>({
        code: '19',
        transactionDate: tx,
        institutionId: 'DEMO',
        itemIdentifier: item,
        itemProperties: 'weight 310 g',
      });
    expect(update('sc-0001')).toMatchObject({
      code: '20',
      itemPropertiesOk: true,
      itemIdentifier: 'sc-0001',
      titleIdentifier: 'Der Schimmelreiter',
      itemProperties: 'weight 310 g',
    });
    expect(ask<ItemInformationResponse>(itemInfo('sc-0001')).itemProperties).toBe('weight 310 g');
    expect(update('zz-404')).toMatchObject({
      itemPropertiesOk: false,
      itemIdentifier: 'zz-404',
      screenMessage: ['Item not found'],
    });
  });

  it('64 carries limits, home library, birth date, internet profile, screen message and print line when the data has them', () => {
    const { ask } = setup('generic');
    expect(ask<PatronInformationResponse>(patronInfo('hanna', null))).toMatchObject({
      holdItemsLimit: '0005',
      overdueItemsLimit: '0003',
      chargedItemsLimit: '0010',
      homeLibrary: 'MAIN',
      birthDate: '19900412',
      internetProfile: 'Y',
      homeAddress: 'Lindenweg 7, 12345 Demostadt',
      emailAddress: 'hanna@example.org',
      homePhoneNumber: '+49 30 7654321',
      screenMessage: ['Welcome back, Hanna'],
      printLine: ['Demo Public Library - thank you'],
    });
    const frank = ask<PatronInformationResponse>(patronInfo('frank', null));
    expect(frank).toMatchObject({ homeLibrary: 'MAIN' });
    for (const absent of [
      'birthDate',
      'internetProfile',
      'holdItemsLimit',
      'chargedItemsLimit',
      'screenMessage',
      'printLine',
    ] as const)
      expect(frank[absent]).toBeUndefined();
    expect(ask<PatronInformationResponse>(patronInfo('emile', null)).homeLibrary).toBe('BRANCH');
  });

  it('rejectedResponse refuses the new messages without touching the library', () => {
    const { ctx, library } = setup('generic');
    expect(rejectedResponse(checkout('hanna', 'sc-0001'), ctx)).toMatchObject({
      code: '12',
      ok: false,
      screenMessage: [REJECTED_BY_FAULT],
    });
    expect(rejectedResponse(checkin('it-0020'), ctx)).toMatchObject({
      code: '10',
      ok: false,
      screenMessage: [REJECTED_BY_FAULT],
    });
    expect(
      rejectedResponse(
        {
          code: '01',
          cardRetained: false,
          transactionDate: tx,
          institutionId: 'DEMO',
          blockedCardMessage: 'x',
          patronIdentifier: 'hanna',
          terminalPassword: '',
        },
        ctx,
      ),
    ).toMatchObject({ code: '24', validPatron: false, screenMessage: [REJECTED_BY_FAULT] });
    expect(
      rejectedResponse({ code: '25', transactionDate: tx, institutionId: 'DEMO', patronIdentifier: 'jonas' }, ctx),
    ).toMatchObject({ code: '26', screenMessage: [REJECTED_BY_FAULT] });
    expect(
      rejectedResponse(
        { code: '19', transactionDate: tx, institutionId: 'DEMO', itemIdentifier: 'sc-0001', itemProperties: 'x' },
        ctx,
      ),
    ).toMatchObject({ code: '20', itemPropertiesOk: false });
    expect(library.item('sc-0001')).toMatchObject({ loan: null, itemProperties: 'RFID tag 3M-0001' });
    expect(library.item('it-0020')!.loan!.patron).toBe('frank');
    expect(library.patron('hanna')!.blocked).toBeNull();
    expect(library.patron('jonas')!.blocked).not.toBeNull();
  });
});
