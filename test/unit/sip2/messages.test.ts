import { describe, expect, it } from 'vitest';
import type { Charset } from '../../../src/sip2/charset.js';
import { type Decoded, decodeFrame, encodeMessage } from '../../../src/sip2/codec.js';
import type { Sip2DateTime } from '../../../src/sip2/date.js';
import type {
  AcsStatus,
  BlockPatron,
  Checkin,
  CheckinResponse,
  Checkout,
  CheckoutResponse,
  EndPatronSession,
  EndSessionResponse,
  FeePaid,
  FeePaidResponse,
  Hold,
  HoldResponse,
  ItemInformation,
  ItemInformationResponse,
  ItemStatusUpdate,
  ItemStatusUpdateResponse,
  Login,
  LoginResponse,
  PatronEnable,
  PatronEnableResponse,
  PatronInformation,
  PatronInformationResponse,
  PatronStatusFlags,
  PatronStatusRequest,
  PatronStatusResponse,
  Renew,
  RenewAll,
  RenewAllResponse,
  RenewResponse,
  ScStatus,
  Sip2Message,
} from '../../../src/sip2/spec.js';

/**
 * Every message of the catalogue, written out by hand after the layouts of the
 * 3M text (rev. 2.12): the wire string decodes to the typed message, and the
 * typed message encodes to exactly that wire string.
 */

const D = '20261121    172931';
const DATE: Sip2DateTime = { year: 2026, month: 11, day: 21, hour: 17, minute: 29, second: 31, zone: '    ' };
const DUE = '20261205    235900';
const DUE_DATE: Sip2DateTime = { year: 2026, month: 12, day: 5, hour: 23, minute: 59, second: 0, zone: '    ' };
const HOLD_EXPIRY = '20261231   Z235959';

const NO_FLAGS: PatronStatusFlags = {
  chargePrivilegesDenied: false,
  renewalPrivilegesDenied: false,
  recallPrivilegesDenied: false,
  holdPrivilegesDenied: false,
  cardReportedLost: false,
  tooManyItemsCharged: false,
  tooManyItemsOverdue: false,
  tooManyRenewals: false,
  tooManyClaimsOfItemsReturned: false,
  tooManyItemsLost: false,
  excessiveOutstandingFines: false,
  excessiveOutstandingFees: false,
  recallOverdue: false,
  tooManyItemsBilled: false,
};

function decode(wire: string, charset: Charset = 'utf-8', errorDetection = false): Decoded {
  return decodeFrame(Buffer.from(wire, charset === 'utf-8' ? 'utf8' : 'latin1'), { charset, errorDetection });
}

function decodeMessage(wire: string, charset: Charset = 'utf-8'): Sip2Message {
  const decoded = decode(wire, charset);
  if (decoded.kind !== 'message') throw new Error(`decoded as ${decoded.kind}`);
  expect(decoded.sequence).toBeNull();
  expect(decoded.checksummed).toBe(false);
  return decoded.message;
}

function encode(message: Sip2Message, charset: Charset = 'utf-8'): string {
  const bytes = encodeMessage(message, { charset, errorDetection: false });
  expect(bytes.at(-1)).toBe(0x0d);
  return bytes.toString(charset === 'utf-8' ? 'utf8' : 'latin1');
}

/** The wire string decodes to exactly the message, and the message encodes to exactly the wire string. */
function bothWays(wire: string, message: Sip2Message): void {
  expect(decodeMessage(wire)).toStrictEqual(message);
  expect(encode(message)).toBe(`${wire}\r`);
}

describe('93 Login / 94 Login Response', () => {
  it('93<UID algorithm><PWD algorithm>CN CO CP', () => {
    bothWays('9300CNscclient|COclientpwd|CPcirc|', {
      code: '93',
      uidAlgorithm: '0',
      pwdAlgorithm: '0',
      loginUserId: 'scclient',
      loginPassword: 'clientpwd',
      locationCode: 'circ',
    } satisfies Login);
  });

  it('93 without the optional CP, and an empty password', () => {
    bothWays('9300CNscclient|CO|', {
      code: '93',
      uidAlgorithm: '0',
      pwdAlgorithm: '0',
      loginUserId: 'scclient',
      loginPassword: '',
    } satisfies Login);
  });

  it('94<ok>: 1 and 0', () => {
    bothWays('941', { code: '94', ok: true } satisfies LoginResponse);
    bothWays('940', { code: '94', ok: false } satisfies LoginResponse);
  });

  it('94: anything but 1 is not ok', () => {
    expect(decodeMessage('94Y')).toStrictEqual({ code: '94', ok: false });
  });
});

describe('99 SC Status / 98 ACS Status', () => {
  it('99<status code><max print width><protocol version>', () => {
    bothWays('9900402.00', {
      code: '99',
      statusCode: 0,
      maxPrintWidth: 40,
      protocolVersion: '2.00',
    } satisfies ScStatus);
    bothWays('992999' + '1.00', {
      code: '99',
      statusCode: 2,
      maxPrintWidth: 999,
      protocolVersion: '1.00',
    } satisfies ScStatus);
  });

  it('99 with a blank print width reads it as not available', () => {
    expect(decodeMessage('990   2.00')).toStrictEqual({
      code: '99',
      statusCode: 0,
      maxPrintWidth: null,
      protocolVersion: '2.00',
    });
    expect(encode({ code: '99', statusCode: 0, maxPrintWidth: null, protocolVersion: '2.00' })).toBe('990   2.00\r');
  });

  const acs: AcsStatus = {
    code: '98',
    onlineStatus: true,
    checkinOk: true,
    checkoutOk: true,
    acsRenewalPolicy: false,
    statusUpdateOk: true,
    offlineOk: false,
    timeoutPeriod: 100,
    retriesAllowed: 5,
    dateTimeSync: DATE,
    protocolVersion: '2.00',
    institutionId: 'inst',
    libraryName: 'Main Library',
    supportedMessages: 'YYYNYNYYYYYNNYYY',
    terminalLocation: 'term1',
    screenMessage: ['Welcome'],
    printLine: ['line'],
  };
  const acsWire = `98YYYNYN100005${D}2.00AOinst|AMMain Library|BXYYYNYNYYYYYNNYYY|ANterm1|AFWelcome|AGline|`;

  it('98: six Y/N flags, timeout, retries, date/time sync, version, AO AM BX AN AF AG', () => {
    bothWays(acsWire, acs);
  });

  it('98 with error detection: AY1AZDEC6', () => {
    expect(encodeMessage(acs, { charset: 'utf-8', errorDetection: true, sequence: 1 }).toString('latin1')).toBe(
      `${acsWire}AY1AZDEC6\r`,
    );
    expect(decodeFrame(Buffer.from(`${acsWire}AY1AZDEC6`), { charset: 'cp850', errorDetection: true })).toStrictEqual({
      kind: 'message',
      message: acs,
      sequence: 1,
      checksummed: true,
    });
  });

  it('98 date/time sync "unsupported" (all zeros) reads as null and is written back as zeros', () => {
    const wire = '98NNNNNN000999000000000000000000' + '2.00AOinst|BXNNNNNNNNNNNNNNNN|';
    const message: AcsStatus = {
      code: '98',
      onlineStatus: false,
      checkinOk: false,
      checkoutOk: false,
      acsRenewalPolicy: false,
      statusUpdateOk: false,
      offlineOk: false,
      timeoutPeriod: 0,
      retriesAllowed: 999,
      dateTimeSync: null,
      protocolVersion: '2.00',
      institutionId: 'inst',
      supportedMessages: 'NNNNNNNNNNNNNNNN',
    };
    bothWays(wire, message);
  });
});

describe('23 Patron Status Request / 24 Patron Status Response', () => {
  it('23<language><transaction date>AO AA AC AD', () => {
    bothWays(`23001${D}AOinst|AA2000001|ACterm|ADpin|`, {
      code: '23',
      language: '001',
      transactionDate: DATE,
      institutionId: 'inst',
      patronIdentifier: '2000001',
      terminalPassword: 'term',
      patronPassword: 'pin',
    } satisfies PatronStatusRequest);
  });

  it('23 always writes its required fields, empty when not given', () => {
    expect(
      encode({
        code: '23',
        language: '000',
        transactionDate: DATE,
        institutionId: 'inst',
        patronIdentifier: '2000001',
        terminalPassword: '',
        patronPassword: '',
      }),
    ).toBe(`23000${D}AOinst|AA2000001|AC|AD|\r`);
  });

  it('24<patron status><language><transaction date>AO AA AE BL CQ BH BV AF AG', () => {
    bothWays(`24  Y           001${D}AOinst|AA2000001|AEJane Doe|BLY|CQN|BHEUR|BV2.50|AFmsg one|AFmsg two|AGprint|`, {
      code: '24',
      patronStatus: { ...NO_FLAGS, recallPrivilegesDenied: true },
      language: '001',
      transactionDate: DATE,
      institutionId: 'inst',
      patronIdentifier: '2000001',
      personalName: 'Jane Doe',
      validPatron: true,
      validPatronPassword: false,
      currencyType: 'EUR',
      feeAmount: '2.50',
      screenMessage: ['msg one', 'msg two'],
      printLine: ['print'],
    } satisfies PatronStatusResponse);
  });
});

describe('01 Block Patron (answered with a 24)', () => {
  it('01<card retained><transaction date>AO AL AA AC', () => {
    bothWays(`01Y${D}AOinst|ALcard left in the machine|AA2000001|ACterm|`, {
      code: '01',
      cardRetained: true,
      transactionDate: DATE,
      institutionId: 'inst',
      blockedCardMessage: 'card left in the machine',
      patronIdentifier: '2000001',
      terminalPassword: 'term',
    } satisfies BlockPatron);
  });

  it('01 always writes its four required fields, empty when not given', () => {
    expect(
      encode({
        code: '01',
        cardRetained: false,
        transactionDate: DATE,
        institutionId: 'inst',
        blockedCardMessage: '',
        patronIdentifier: 'p',
        terminalPassword: '',
      }),
    ).toBe(`01N${D}AOinst|AL|AAp|AC|\r`);
  });
});

describe('11 Checkout / 12 Checkout Response', () => {
  it('11<SC renewal policy><no block><transaction date><nb due date>AO AA AB AC CH AD BO BI', () => {
    bothWays(`11YN${D}${DUE}AOinst|AA2000001|ABit-0001|ACterm|CHprops|ADpin|BON|BIN|`, {
      code: '11',
      scRenewalPolicy: true,
      noBlock: false,
      transactionDate: DATE,
      nbDueDate: DUE_DATE,
      institutionId: 'inst',
      patronIdentifier: '2000001',
      itemIdentifier: 'it-0001',
      terminalPassword: 'term',
      itemProperties: 'props',
      patronPassword: 'pin',
      feeAcknowledged: false,
      cancel: false,
    } satisfies Checkout);
  });

  it('11 as self-check machines send it: blank nb due date, empty AC, nothing optional', () => {
    expect(decodeMessage(`11NN${D}${' '.repeat(18)}AOinst|AA2000001|ABit-1|AC|`)).toStrictEqual({
      code: '11',
      scRenewalPolicy: false,
      noBlock: false,
      transactionDate: DATE,
      nbDueDate: null,
      institutionId: 'inst',
      patronIdentifier: '2000001',
      itemIdentifier: 'it-1',
      terminalPassword: '',
    } satisfies Checkout);
  });

  const lent: CheckoutResponse = {
    code: '12',
    ok: true,
    renewalOk: false,
    magneticMedia: 'N',
    desensitize: 'Y',
    transactionDate: DATE,
    institutionId: 'inst',
    patronIdentifier: '2000001',
    itemIdentifier: 'it-0001',
    titleIdentifier: 'Der Zauberberg',
    dueDate: DUE,
    feeType: '06',
    securityInhibit: false,
    currencyType: 'EUR',
    feeAmount: '1.00',
    mediaType: '001',
    itemProperties: 'props',
    transactionId: 'tx-2',
    screenMessage: ['Checked out'],
    printLine: ['slip'],
  };
  const lentWire = `121NNY${D}AOinst|AA2000001|ABit-0001|AJDer Zauberberg|AH${DUE}|BT06|CIN|BHEUR|BV1.00|CK001|CHprops|BKtx-2|AFChecked out|AGslip|`;

  it('12<ok><renewal ok><magnetic media><desensitize><transaction date> and every tagged field', () => {
    bothWays(lentWire, lent);
  });

  it('12 with error detection: AY3AZ checksums the whole text', () => {
    // the bytes of lentWire + "AY3AZ" sum to 0x2E4C (computed apart from the codec): checksum D1B4
    expect(encodeMessage(lent, { charset: 'latin1', errorDetection: true, sequence: 3 }).toString('latin1')).toBe(
      `${lentWire}AY3AZD1B4\r`,
    );
  });

  it('12 refused as the Perl SIPServer writes it: 0NUN, empty AJ and AH, the reason in AF', () => {
    bothWays(`120NUN${D}AOinst|AA2000001|ABnope|AJ|AH|AFItem not found|`, {
      code: '12',
      ok: false,
      renewalOk: false,
      magneticMedia: 'U',
      desensitize: 'N',
      transactionDate: DATE,
      institutionId: 'inst',
      patronIdentifier: '2000001',
      itemIdentifier: 'nope',
      titleIdentifier: '',
      dueDate: '',
      screenMessage: ['Item not found'],
    } satisfies CheckoutResponse);
  });
});

describe('09 Checkin / 10 Checkin Response', () => {
  it('09<no block><transaction date><return date>AP AO AB AC CH BI', () => {
    bothWays(`09N${D}${DUE}APMAIN|AOinst|ABit-0001|ACterm|CHprops|BIN|`, {
      code: '09',
      noBlock: false,
      transactionDate: DATE,
      returnDate: DUE_DATE,
      currentLocation: 'MAIN',
      institutionId: 'inst',
      itemIdentifier: 'it-0001',
      terminalPassword: 'term',
      itemProperties: 'props',
      cancel: false,
    } satisfies Checkin);
  });

  it('10<ok><resensitize><magnetic media><alert><transaction date>, the 3M fields and the hold extensions CV CT CY DA', () => {
    bothWays(
      `101YNY${D}AOinst|ABit-0020|AQMAIN|AJBuddenbrooks|CL2|AAfrank|CK001|CHprops|CV01|CTMAIN|CYgina|DAGina Lostcard|AFon hold|AGslip|`,
      {
        code: '10',
        ok: true,
        resensitize: true,
        magneticMedia: 'N',
        alert: true,
        transactionDate: DATE,
        institutionId: 'inst',
        itemIdentifier: 'it-0020',
        permanentLocation: 'MAIN',
        titleIdentifier: 'Buddenbrooks',
        sortBin: '2',
        patronIdentifier: 'frank',
        mediaType: '001',
        itemProperties: 'props',
        alertType: '01',
        destinationLocation: 'MAIN',
        holdPatronIdentifier: 'gina',
        holdPatronName: 'Gina Lostcard',
        screenMessage: ['on hold'],
        printLine: ['slip'],
      } satisfies CheckinResponse,
    );
  });

  it('10 refused: ok 0, the required AQ written empty', () => {
    expect(
      encode({
        code: '10',
        ok: false,
        resensitize: false,
        magneticMedia: 'U',
        alert: true,
        transactionDate: DATE,
        institutionId: 'inst',
        itemIdentifier: 'x',
        alertType: '99',
      } as CheckinResponse),
    ).toBe(`100NUY${D}AOinst|ABx|AQ|CV99|\r`);
  });
});

describe('19 Item Status Update / 20 Item Status Update Response', () => {
  it('19<transaction date>AO AB AC CH', () => {
    bothWays(`19${D}AOinst|ABit-0001|ACterm|CHweight 300 g|`, {
      code: '19',
      transactionDate: DATE,
      institutionId: 'inst',
      itemIdentifier: 'it-0001',
      terminalPassword: 'term',
      itemProperties: 'weight 300 g',
    } satisfies ItemStatusUpdate);
  });

  it('20<item properties ok><transaction date>AB AJ CH AF AG, and no AO (the 3M layout has none)', () => {
    bothWays(`201${D}ABit-0001|AJDer Zauberberg|CHweight 300 g|AFstored|AGline|`, {
      code: '20',
      itemPropertiesOk: true,
      transactionDate: DATE,
      itemIdentifier: 'it-0001',
      titleIdentifier: 'Der Zauberberg',
      itemProperties: 'weight 300 g',
      screenMessage: ['stored'],
      printLine: ['line'],
    } satisfies ItemStatusUpdateResponse);
    expect(decodeMessage(`200${D}ABx|AOinst|`)).toMatchObject({ itemPropertiesOk: false, extra: [['AO', 'inst']] });
  });
});

describe('25 Patron Enable / 26 Patron Enable Response', () => {
  it('25<transaction date>AO AA AC AD', () => {
    bothWays(`25${D}AOinst|AA2000001|ACterm|ADpin|`, {
      code: '25',
      transactionDate: DATE,
      institutionId: 'inst',
      patronIdentifier: '2000001',
      terminalPassword: 'term',
      patronPassword: 'pin',
    } satisfies PatronEnable);
  });

  it('26<patron status><language><transaction date>AO AA AE BL CQ AF AG', () => {
    bothWays(`26    Y         000${D}AOinst|AA2000001|AEJane Doe|BLY|CQY|AFenabled|AGline|`, {
      code: '26',
      patronStatus: { ...NO_FLAGS, cardReportedLost: true },
      language: '000',
      transactionDate: DATE,
      institutionId: 'inst',
      patronIdentifier: '2000001',
      personalName: 'Jane Doe',
      validPatron: true,
      validPatronPassword: true,
      screenMessage: ['enabled'],
      printLine: ['line'],
    } satisfies PatronEnableResponse);
  });
});

describe('63 Patron Information', () => {
  it('63<language><transaction date><summary>AO AA AC AD BP BQ', () => {
    bothWays(`63001${D}  Y       AOinst|AA2000001|ACterm|ADpin|BP1|BQ10|`, {
      code: '63',
      language: '001',
      transactionDate: DATE,
      summary: 'charged',
      institutionId: 'inst',
      patronIdentifier: '2000001',
      terminalPassword: 'term',
      patronPassword: 'pin',
      startItem: '1',
      endItem: '10',
    } satisfies PatronInformation);
  });

  it('a blank summary asks for no list', () => {
    bothWays(`63001${D}          AOinst|AA2000001|ADpin|`, {
      code: '63',
      language: '001',
      transactionDate: DATE,
      summary: null,
      institutionId: 'inst',
      patronIdentifier: '2000001',
      patronPassword: 'pin',
    } satisfies PatronInformation);
  });

  it.each([
    ['Y         ', 'hold'],
    [' Y        ', 'overdue'],
    ['  Y       ', 'charged'],
    ['   Y      ', 'fine'],
    ['    Y     ', 'recall'],
    ['     Y    ', 'unavailableHold'],
  ] as const)('summary %j is the %s list', (summary, list) => {
    const wire = `63000${D}${summary}AOinst|AA2000001|BP11|BQ20|`;
    const message: PatronInformation = {
      code: '63',
      language: '000',
      transactionDate: DATE,
      summary: list,
      institutionId: 'inst',
      patronIdentifier: '2000001',
      startItem: '11',
      endItem: '20',
    };
    bothWays(wire, message);
  });

  it('a Y in the unused positions 6-9 asks for no list', () => {
    const decoded = decodeMessage(`63000${D}      Y   AOinst|AA2000001|`);
    expect(decoded).toMatchObject({ code: '63', summary: null });
  });
});

describe('64 Patron Information Response', () => {
  const FLAG_ORDER = [
    'chargePrivilegesDenied',
    'renewalPrivilegesDenied',
    'recallPrivilegesDenied',
    'holdPrivilegesDenied',
    'cardReportedLost',
    'tooManyItemsCharged',
    'tooManyItemsOverdue',
    'tooManyRenewals',
    'tooManyClaimsOfItemsReturned',
    'tooManyItemsLost',
    'excessiveOutstandingFines',
    'excessiveOutstandingFees',
    'recallOverdue',
    'tooManyItemsBilled',
  ] as const;

  const full: PatronInformationResponse = {
    code: '64',
    patronStatus: {
      ...NO_FLAGS,
      chargePrivilegesDenied: true,
      cardReportedLost: true,
      excessiveOutstandingFines: true,
      excessiveOutstandingFees: true,
    },
    language: '001',
    transactionDate: DATE,
    holdItemsCount: 2,
    overdueItemsCount: null,
    chargedItemsCount: 3,
    fineItemsCount: 1,
    recallItemsCount: 0,
    unavailableHoldsCount: null,
    institutionId: 'inst',
    patronIdentifier: '2000001',
    personalName: 'Müller, Jürgen',
    holdItemsLimit: '0010',
    overdueItemsLimit: '0005',
    chargedItemsLimit: '0020',
    validPatron: true,
    validPatronPassword: true,
    currencyType: 'EUR',
    feeAmount: '3.50',
    feeLimit: '10.00',
    holdItems: ['hold-1', 'hold-2'],
    overdueItems: ['over-1'],
    chargedItems: ['it-0001', 'it-0002', 'it-0003'],
    fineItems: ['2.50 EUR overdue 20261101 it-0001 Der Zauberberg', '1.00 EUR lost 20261102 it-0002 Faust'],
    recallItems: ['rec-1'],
    unavailableHoldItems: ['pend-1'],
    homeAddress: 'Hauptstr. 1, Berlin',
    emailAddress: 'jm@example.org',
    homePhoneNumber: '+49 30 123',
    homeLibrary: 'MAIN',
    birthDate: '19800101',
    internetProfile: 'Y',
    screenMessage: ['Hello', 'Second'],
    printLine: ['print'],
    extra: [
      ['PA', '20271231'],
      ['PC', 'adult'],
    ],
  };
  const fullWire =
    `64Y   Y     YY  001${D}0002    000300010000    ` +
    'AOinst|AA2000001|AEMüller, Jürgen|BZ0010|CA0005|CB0020|BLY|CQY|BHEUR|BV3.50|CC10.00|' +
    'AShold-1|AShold-2|ATover-1|AUit-0001|AUit-0002|AUit-0003|' +
    'AV2.50 EUR overdue 20261101 it-0001 Der Zauberberg|AV1.00 EUR lost 20261102 it-0002 Faust|' +
    'BUrec-1|CDpend-1|BDHauptstr. 1, Berlin|BEjm@example.org|BF+49 30 123|AQMAIN|PB19800101|PIY|AFHello|AFSecond|AGprint|' +
    'PA20271231|PCadult|';

  it('decodes and encodes every field of the 3M layout and AQ PB PI; unknown PA/PC kept at the end', () => {
    bothWays(fullWire, full);
  });

  it.each([
    ['utf-8', '80EA'],
    ['latin1', '81F0'],
    ['cp850', '82E6'],
  ] as const)("with error detection in %s: AY2AZ%s over the charset's bytes", (charset, sum) => {
    const bytes = encodeMessage(full, { charset, errorDetection: true, sequence: 2 });
    // the text is ASCII apart from ü (utf-8 C3 BC, latin1 FC, cp850 81)
    const u = { 'utf-8': [0xc3, 0xbc], latin1: [0xfc], cp850: [0x81] }[charset];
    const parts = `${fullWire}AY2AZ${sum}\r`.split('ü');
    const expected = Buffer.concat(
      parts.flatMap((part, i) => (i === 0 ? [Buffer.from(part)] : [Buffer.from(u), Buffer.from(part)])),
    );
    expect(bytes).toEqual(expected);
    expect(decodeFrame(bytes.subarray(0, -1), { charset, errorDetection: true })).toStrictEqual({
      kind: 'message',
      message: full,
      sequence: 2,
      checksummed: true,
    });
  });

  it.each(FLAG_ORDER.map((flag, position) => [position, flag] as const))(
    'patron status position %i is %s',
    (position, flag) => {
      const status = `${' '.repeat(position)}Y${' '.repeat(13 - position)}`;
      const wire = `64${status}000${D}${'0000'.repeat(6)}AOinst|AA2000001|AEJane|`;
      const message: PatronInformationResponse = {
        code: '64',
        patronStatus: { ...NO_FLAGS, [flag]: true },
        language: '000',
        transactionDate: DATE,
        holdItemsCount: 0,
        overdueItemsCount: 0,
        chargedItemsCount: 0,
        fineItemsCount: 0,
        recallItemsCount: 0,
        unavailableHoldsCount: 0,
        institutionId: 'inst',
        patronIdentifier: '2000001',
        personalName: 'Jane',
      };
      bothWays(wire, message);
    },
  );

  it('all 14 flags set, and none', () => {
    const all = Object.fromEntries(FLAG_ORDER.map((flag) => [flag, true])) as PatronStatusFlags;
    const counts = '000000000000000000000000';
    bothWays(`64YYYYYYYYYYYYYY000${D}${counts}AOi|AAp|AEn|`, {
      code: '64',
      patronStatus: all,
      language: '000',
      transactionDate: DATE,
      holdItemsCount: 0,
      overdueItemsCount: 0,
      chargedItemsCount: 0,
      fineItemsCount: 0,
      recallItemsCount: 0,
      unavailableHoldsCount: 0,
      institutionId: 'i',
      patronIdentifier: 'p',
      personalName: 'n',
    });
    expect(decodeMessage(`64              000${D}${counts}AOi|AAp|AEn|`)).toMatchObject({ patronStatus: NO_FLAGS });
  });

  it('a patron status flag is true only for Y (blank, N and junk are false)', () => {
    const message = decodeMessage(`64NnyX Y- 0   Y 000${D}000000000000000000000000AOi|AAp|AEn|`);
    expect(message).toMatchObject({
      patronStatus: { ...NO_FLAGS, tooManyItemsCharged: true, recallOverdue: true },
    });
  });

  it('reads each of the six counts by position; four blanks (not available) read as null', () => {
    const message = decodeMessage(`64              000${D}00010020    0300999907  AOi|AAp|AEn|`);
    expect(message).toMatchObject({
      holdItemsCount: 1,
      overdueItemsCount: 20,
      chargedItemsCount: null,
      fineItemsCount: 300,
      recallItemsCount: 9999,
      unavailableHoldsCount: null, // "07  " is not a number
    });
    const blank = decodeMessage(`64              000${D}${' '.repeat(24)}AOi|AAp|AEn|`);
    expect(blank).toMatchObject({
      holdItemsCount: null,
      overdueItemsCount: null,
      chargedItemsCount: null,
      fineItemsCount: null,
      recallItemsCount: null,
      unavailableHoldsCount: null,
    });
  });

  it('writes a null count as four blanks', () => {
    const wire = encode({
      code: '64',
      patronStatus: NO_FLAGS,
      language: '000',
      transactionDate: DATE,
      holdItemsCount: null,
      overdueItemsCount: 7,
      chargedItemsCount: null,
      fineItemsCount: 12,
      recallItemsCount: null,
      unavailableHoldsCount: 123,
      institutionId: 'i',
      patronIdentifier: 'p',
      personalName: 'n',
    });
    expect(wire).toBe(`64              000${D}    0007    0012    0123AOi|AAp|AEn|\r`);
  });

  it('reads tagged fields in any order, repeated list fields in arrival order', () => {
    const wire =
      `64              001${D}0000000000030000    0000` +
      'AUit-3|AEJane|ZZfoo|AUit-1|BLN|AOinst|PA20261231|AUit-2|CQY|AA2000001|';
    expect(decodeMessage(wire)).toStrictEqual({
      code: '64',
      patronStatus: NO_FLAGS,
      language: '001',
      transactionDate: DATE,
      holdItemsCount: 0,
      overdueItemsCount: 0,
      chargedItemsCount: 3,
      fineItemsCount: 0,
      recallItemsCount: null,
      unavailableHoldsCount: 0,
      institutionId: 'inst',
      patronIdentifier: '2000001',
      personalName: 'Jane',
      validPatron: false,
      validPatronPassword: true,
      chargedItems: ['it-3', 'it-1', 'it-2'],
      extra: [
        ['ZZ', 'foo'],
        ['PA', '20261231'],
      ],
    } satisfies PatronInformationResponse);
  });

  it('BL/CQ: Y is true, N (or anything else) is false, absent stays absent', () => {
    const base = `64              001${D}000000000000000000000000AOi|AAp|AEn|`;
    expect(decodeMessage(`${base}BLY|CQY|`)).toMatchObject({ validPatron: true, validPatronPassword: true });
    expect(decodeMessage(`${base}BLN|CQN|`)).toMatchObject({ validPatron: false, validPatronPassword: false });
    expect(decodeMessage(`${base}BLy|CQ|`)).toMatchObject({ validPatron: false, validPatronPassword: false });
    const absent = decodeMessage(base);
    expect(absent).not.toHaveProperty('validPatron');
    expect(absent).not.toHaveProperty('validPatronPassword');
    const message = { ...(absent as PatronInformationResponse), validPatron: true, validPatronPassword: false };
    expect(encode(message)).toBe(`${base}BLY|CQN|\r`);
  });
});

describe('17 Item Information / 18 Item Information Response', () => {
  it('17<transaction date>AO AB AC', () => {
    bothWays(`17${D}AOinst|ABit-0001|ACterm|`, {
      code: '17',
      transactionDate: DATE,
      institutionId: 'inst',
      itemIdentifier: 'it-0001',
      terminalPassword: 'term',
    } satisfies ItemInformation);
  });

  it('18<circulation status><security marker><fee type><transaction date> and every tagged field', () => {
    bothWays(
      `18080201${D}CF2|AH${DUE}|CJ${D}|CM${HOLD_EXPIRY}|ABit-0001|AJDer Zauberberg|BGMain|BHEUR|BV1.00|CK001|` +
        'AQstacks|APdesk|CHweight=300g|AFon hold|AGline|',
      {
        code: '18',
        circulationStatus: 8,
        securityMarker: 2,
        feeType: 1,
        transactionDate: DATE,
        holdQueueLength: '2',
        dueDate: DUE,
        recallDate: D,
        holdPickupDate: HOLD_EXPIRY,
        itemIdentifier: 'it-0001',
        titleIdentifier: 'Der Zauberberg',
        owner: 'Main',
        currencyType: 'EUR',
        feeAmount: '1.00',
        mediaType: '001',
        permanentLocation: 'stacks',
        currentLocation: 'desk',
        itemProperties: 'weight=300g',
        screenMessage: ['on hold'],
        printLine: ['line'],
      } satisfies ItemInformationResponse,
    );
  });

  it('18 circulation status 13 (missing) and unknown fields', () => {
    bothWays(`18130001${D}ABit-9|AJ|CSQA 76.73|ZZ1|`, {
      code: '18',
      circulationStatus: 13,
      securityMarker: 0,
      feeType: 1,
      transactionDate: DATE,
      itemIdentifier: 'it-9',
      titleIdentifier: '',
      extra: [
        ['CS', 'QA 76.73'],
        ['ZZ', '1'],
      ],
    } satisfies ItemInformationResponse);
  });
});

describe('29 Renew / 30 Renew Response', () => {
  it('29<third party allowed><no block><transaction date><nb due date>AO AA AD AB AJ AC CH BO', () => {
    bothWays(`29YN${D}${DUE}AOinst|AA2000001|ADpin|ABit-0001|AJtitle|ACterm|CHprops|BON|`, {
      code: '29',
      thirdPartyAllowed: true,
      noBlock: false,
      transactionDate: DATE,
      nbDueDate: DUE_DATE,
      institutionId: 'inst',
      patronIdentifier: '2000001',
      patronPassword: 'pin',
      itemIdentifier: 'it-0001',
      titleIdentifier: 'title',
      terminalPassword: 'term',
      itemProperties: 'props',
      feeAcknowledged: false,
    } satisfies Renew);
  });

  it('29 without an nb due date writes the 18 zeros, and reads 18 blanks as none', () => {
    const message: Renew = {
      code: '29',
      thirdPartyAllowed: false,
      noBlock: false,
      transactionDate: DATE,
      nbDueDate: null,
      institutionId: 'inst',
      patronIdentifier: '2000001',
      itemIdentifier: 'it-1',
      feeAcknowledged: true,
    };
    bothWays(`29NN${D}000000000000000000AOinst|AA2000001|ABit-1|BOY|`, message);
    expect(decodeMessage(`29NN${D}${' '.repeat(18)}AOinst|AA2000001|ABit-1|BOY|`)).toStrictEqual(message);
  });

  const renewed: RenewResponse = {
    code: '30',
    ok: true,
    renewalOk: true,
    magneticMedia: 'U',
    desensitize: 'N',
    transactionDate: DATE,
    institutionId: 'inst',
    patronIdentifier: '2000001',
    itemIdentifier: 'it-0001',
    titleIdentifier: 'Der Zauberberg',
    dueDate: DUE,
    feeType: '04',
    securityInhibit: false,
    currencyType: 'EUR',
    feeAmount: '0.50',
    mediaType: '001',
    itemProperties: 'props',
    transactionId: 'tx-1',
    screenMessage: ['Renewed'],
    printLine: ['line'],
  };
  const renewedWire = `301YUN${D}AOinst|AA2000001|ABit-0001|AJDer Zauberberg|AH${DUE}|BT04|CIN|BHEUR|BV0.50|CK001|CHprops|BKtx-1|AFRenewed|AGline|`;

  it('30<ok><renewal ok><magnetic media><desensitize><transaction date> and every tagged field', () => {
    bothWays(renewedWire, renewed);
  });

  it('30 with error detection: AY5AZD30F', () => {
    expect(encodeMessage(renewed, { charset: 'latin1', errorDetection: true, sequence: 5 }).toString('latin1')).toBe(
      `${renewedWire}AY5AZD30F\r`,
    );
  });

  it('30 refused: ok 0, renewal N, magnetic media Y, the reason in AF', () => {
    bothWays(`300NYU${D}AOinst|AA2000001|ABit-0001|AJ|AH|AFItem has holds|`, {
      code: '30',
      ok: false,
      renewalOk: false,
      magneticMedia: 'Y',
      desensitize: 'U',
      transactionDate: DATE,
      institutionId: 'inst',
      patronIdentifier: '2000001',
      itemIdentifier: 'it-0001',
      titleIdentifier: '',
      dueDate: '',
      screenMessage: ['Item has holds'],
    } satisfies RenewResponse);
  });
});

describe('65 Renew All / 66 Renew All Response', () => {
  it('65<transaction date>AO AA AD AC BO', () => {
    bothWays(`65${D}AOinst|AA2000001|ADpin|ACterm|BOY|`, {
      code: '65',
      transactionDate: DATE,
      institutionId: 'inst',
      patronIdentifier: '2000001',
      patronPassword: 'pin',
      terminalPassword: 'term',
      feeAcknowledged: true,
    } satisfies RenewAll);
  });

  it('66<ok><renewed count><unrenewed count><transaction date>AO BM BN AF AG', () => {
    bothWays(`66100020001${D}AOinst|BMit-1|BMit-2|BNit-3|AFdone|AGline|`, {
      code: '66',
      ok: true,
      renewedCount: 2,
      unrenewedCount: 1,
      transactionDate: DATE,
      institutionId: 'inst',
      renewedItems: ['it-1', 'it-2'],
      unrenewedItems: ['it-3'],
      screenMessage: ['done'],
      printLine: ['line'],
    } satisfies RenewAllResponse);
  });
});

describe('15 Hold / 16 Hold Response', () => {
  it('15<hold mode><transaction date>BW BS BY AO AA AD AB AJ AC BO', () => {
    bothWays(`15+${D}BW${HOLD_EXPIRY}|BSbranch-1|BY3|AOinst|AA2000001|ADpin|ABit-0001|AJtitle|ACterm|BON|`, {
      code: '15',
      holdMode: '+',
      transactionDate: DATE,
      expirationDate: HOLD_EXPIRY,
      pickupLocation: 'branch-1',
      holdType: '3',
      institutionId: 'inst',
      patronIdentifier: '2000001',
      patronPassword: 'pin',
      itemIdentifier: 'it-0001',
      titleIdentifier: 'title',
      terminalPassword: 'term',
      feeAcknowledged: false,
    } satisfies Hold);
  });

  it('15 delete (-) of a title hold', () => {
    bothWays(`15-${D}BY2|AOinst|AA2000001|AJed-77|`, {
      code: '15',
      holdMode: '-',
      transactionDate: DATE,
      holdType: '2',
      institutionId: 'inst',
      patronIdentifier: '2000001',
      titleIdentifier: 'ed-77',
    } satisfies Hold);
  });

  it('16<ok><available><transaction date>BW BR BS AO AA AB AJ AF AG', () => {
    bothWays(`161N${D}BW${HOLD_EXPIRY}|BR3|BSbranch-1|AOinst|AA2000001|ABit-0001|AJtitle|AFHold placed|AGline|`, {
      code: '16',
      ok: true,
      available: false,
      transactionDate: DATE,
      expirationDate: HOLD_EXPIRY,
      queuePosition: '3',
      pickupLocation: 'branch-1',
      institutionId: 'inst',
      patronIdentifier: '2000001',
      itemIdentifier: 'it-0001',
      titleIdentifier: 'title',
      screenMessage: ['Hold placed'],
      printLine: ['line'],
    } satisfies HoldResponse);
  });
});

describe('35 End Patron Session / 36 End Session Response', () => {
  it('35<transaction date>AO AA AC AD', () => {
    bothWays(`35${D}AOinst|AA2000001|ACterm|ADpin|`, {
      code: '35',
      transactionDate: DATE,
      institutionId: 'inst',
      patronIdentifier: '2000001',
      terminalPassword: 'term',
      patronPassword: 'pin',
    } satisfies EndPatronSession);
  });

  it('36<end session><transaction date>AO AA AF AG', () => {
    bothWays(`36Y${D}AOinst|AA2000001|AFbye|AGline|`, {
      code: '36',
      endSession: true,
      transactionDate: DATE,
      institutionId: 'inst',
      patronIdentifier: '2000001',
      screenMessage: ['bye'],
      printLine: ['line'],
    } satisfies EndSessionResponse);
  });
});

describe('37 Fee Paid / 38 Fee Paid Response', () => {
  it('37<transaction date><fee type><payment type><currency type>BV AO AA AC AD CG BK', () => {
    bothWays(`37${D}0400EURBV2.50|AOinst|AA2000001|ACterm|ADpin|CGfee-17|BKtx-9|`, {
      code: '37',
      transactionDate: DATE,
      feeType: 4,
      paymentType: 0,
      currencyType: 'EUR',
      feeAmount: '2.50',
      institutionId: 'inst',
      patronIdentifier: '2000001',
      terminalPassword: 'term',
      patronPassword: 'pin',
      feeIdentifier: 'fee-17',
      transactionId: 'tx-9',
    } satisfies FeePaid);
  });

  it('38<payment accepted><transaction date>AO AA BK AF AG', () => {
    bothWays(`38Y${D}AOinst|AA2000001|BKtx-9|AFthanks|AGline|`, {
      code: '38',
      paymentAccepted: true,
      transactionDate: DATE,
      institutionId: 'inst',
      patronIdentifier: '2000001',
      transactionId: 'tx-9',
      screenMessage: ['thanks'],
      printLine: ['line'],
    } satisfies FeePaidResponse);
  });
});

describe('96 / 97 resend requests', () => {
  it('have no fields at all', () => {
    bothWays('96', { code: '96' });
    bothWays('97', { code: '97' });
  });
});

describe('unknown fields', () => {
  it('keeps unknown fields in arrival order, even interleaved, and re-encodes them after the known ones', () => {
    const wire = `36Y${D}PAx|AOinst|CSQA 76.73|AA2000001|ZZ|PB19800101|AFbye|`;
    const message = decodeMessage(wire);
    expect(message).toStrictEqual({
      code: '36',
      endSession: true,
      transactionDate: DATE,
      institutionId: 'inst',
      patronIdentifier: '2000001',
      screenMessage: ['bye'],
      extra: [
        ['PA', 'x'],
        ['CS', 'QA 76.73'],
        ['ZZ', ''],
        ['PB', '19800101'],
      ],
    } satisfies EndSessionResponse);
    expect(encode(message)).toBe(`36Y${D}AOinst|AA2000001|AFbye|PAx|CSQA 76.73|ZZ|PB19800101|\r`);
  });

  it('keeps a second copy of a single-valued field in extra instead of overwriting the first', () => {
    expect(decodeMessage(`36Y${D}AOfirst|AOsecond|AA2000001|AAother|`)).toStrictEqual({
      code: '36',
      endSession: true,
      transactionDate: DATE,
      institutionId: 'first',
      patronIdentifier: '2000001',
      extra: [
        ['AO', 'second'],
        ['AA', 'other'],
      ],
    });
    const twice = decodeMessage(`24              001${D}AOi|AAp|AEn|BLY|BLN|`);
    expect(twice).toMatchObject({ validPatron: true, extra: [['BL', 'N']] });
  });

  it('fields of other messages are unknown here (AB on a 36)', () => {
    expect(decodeMessage(`36N${D}AOi|AAp|ABit-1|`)).toMatchObject({ endSession: false, extra: [['AB', 'it-1']] });
  });

  it('fills required fields the ILS left out with empty values', () => {
    expect(decodeMessage(`24              001${D}AOinst|`)).toStrictEqual({
      code: '24',
      patronStatus: NO_FLAGS,
      language: '001',
      transactionDate: DATE,
      institutionId: 'inst',
      patronIdentifier: '',
      personalName: '',
    });
  });
});
