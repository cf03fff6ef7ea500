import {
  type AcsStatus,
  type BlockPatron,
  CIRCULATION_STATUS,
  type DateFormat,
  type EndPatronSession,
  type EndSessionResponse,
  type FeePaid,
  type FeePaidResponse,
  formatDialectDate,
  formatFineItem,
  formatSip2Date,
  type Hold,
  type HoldResponse,
  type ItemInformation,
  type ItemInformationResponse,
  LIST_FIELD,
  type LoginResponse,
  noPatronFlags,
  type PatronEnable,
  type PatronEnableResponse,
  type PatronInformation,
  type PatronInformationResponse,
  type PatronStatusFlags,
  type PatronStatusRequest,
  type PatronStatusResponse,
  type Renew,
  type RenewAll,
  type RenewAllResponse,
  type RenewResponse,
  type RequestCode,
  type ScStatus,
  type Sip2DateTime,
  type Sip2Message,
  sip2DateFrom,
} from '../../src/sip2/index.js';
import {
  checkin,
  checkinRefused,
  checkout,
  checkoutRefused,
  itemStatusUpdate,
  itemStatusUpdateRefused,
} from './circulation.js';
import { formatCents } from './data.js';
import type { Fine, Item, Hold as LibraryHold, Patron } from './library.js';
import { accountFields, fineList, inflateList, listPage, MAX_LIST_COUNT, writtenCounts } from './profile-responses.js';
import { defaultProfile } from './profiles.js';
import { type ResponseContext, requestPatron } from './response-context.js';

/**
 * Builds the typed response for each request, the way the configured
 * dialect's ILS would fill it. Pure apart from the library operations the
 * request asks for (checkout, checkin, block, enable, item status update,
 * renew, hold, fee paid change the library's state).
 *
 * The patron a request's AA names is looked up once (requestPatron, as the
 * profile's ids= matches) and the library is then asked about the stored
 * barcode. Answers about a found patron carry the stored barcode in AA where
 * Koha sends `$patron->id` (24, 26, 64, 30, a placed 16) and echo the AA sent
 * where Koha does (12, 36, 38, a refused 16) (C4/SIP/Sip/MsgType.pm).
 */

export const REJECTED_BY_FAULT = 'rejected by fault injection';
/** 98 BX: every one of the 16 message pairs is supported. */
export const SUPPORTED_MESSAGES_BX = 'YYYYYYYYYYYYYYYY';

/** The requests the simulator answers (93, 97 and 96 are handled by the session). */
export type HandledRequest = Extract<Sip2Message, { code: Exclude<RequestCode, '93'> }>;

export function loginResponse(ok: boolean): LoginResponse {
  return { code: '94', ok };
}

/** Executes a request against the library and returns its response. */
export function respond(request: HandledRequest, ctx: ResponseContext): Sip2Message {
  switch (request.code) {
    case '99':
      return acsStatus(request, ctx, true);
    case '23':
      return patronStatus(request, ctx);
    case '63':
      return patronInformation(request, ctx);
    case '17':
      return itemInformation(request, ctx);
    case '29':
      return renew(request, ctx);
    case '65':
      return renewAll(request, ctx);
    case '15':
      return hold(request, ctx);
    case '35':
      return endSession(request, ctx, true);
    case '37':
      return feePaid(request, ctx);
    case '11':
      return checkout(request, ctx);
    case '09':
      return checkin(request, ctx);
    case '01':
      return blockPatron(request, ctx);
    case '25':
      return patronEnable(request, ctx);
    case '19':
      return itemStatusUpdate(request, ctx);
  }
}

/** The negative answer for a request refused by the rejectMessage fault; nothing is executed. */
export function rejectedResponse(request: HandledRequest, ctx: ResponseContext): Sip2Message {
  const now = txDate(ctx);
  const af = [REJECTED_BY_FAULT];
  switch (request.code) {
    case '99':
      return { ...acsStatus(request, ctx, false), screenMessage: af };
    case '23':
      return {
        ...unknownPatronStatus(request.patronIdentifier, request.language, request.patronPassword, ctx),
        screenMessage: af,
      };
    case '63':
      return { ...unknownPatronInformation(request, ctx), screenMessage: af };
    case '17':
      return { ...unknownItem(request.itemIdentifier, now), screenMessage: af };
    case '29':
      return renewRefused(request, request.patronIdentifier, ctx, undefined, REJECTED_BY_FAULT);
    case '65':
      return {
        code: '66',
        ok: false,
        renewedCount: 0,
        unrenewedCount: 0,
        transactionDate: now,
        institutionId: ctx.library.institution,
        screenMessage: af,
      };
    case '15':
      return holdResponse(request, ctx, { ok: false, reason: REJECTED_BY_FAULT });
    case '35':
      return { ...endSession(request, ctx, false), screenMessage: af };
    case '37':
      return {
        code: '38',
        paymentAccepted: false,
        transactionDate: now,
        institutionId: ctx.library.institution,
        patronIdentifier: request.patronIdentifier,
        ...(request.transactionId ? { transactionId: request.transactionId } : {}),
        screenMessage: af,
      };
    case '11':
      return checkoutRefused(request, ctx, REJECTED_BY_FAULT);
    case '09':
      return checkinRefused(request, ctx, REJECTED_BY_FAULT);
    case '01':
      return { ...unknownPatronStatus(request.patronIdentifier, '000', undefined, ctx), screenMessage: af };
    case '25':
      return { ...unknownPatronEnable(request, ctx), screenMessage: af };
    case '19':
      return itemStatusUpdateRefused(request, ctx, REJECTED_BY_FAULT);
  }
}

// ------------------------------------------------------------ 99 -> 98

function acsStatus(_request: ScStatus, ctx: ResponseContext, online: boolean): AcsStatus {
  return {
    code: '98',
    onlineStatus: online,
    checkinOk: true,
    checkoutOk: true,
    acsRenewalPolicy: true,
    // Y: the SC may change a patron's status (01 Block Patron).
    statusUpdateOk: true,
    offlineOk: false,
    timeoutPeriod: 30,
    retriesAllowed: 3,
    dateTimeSync: txDate(ctx),
    protocolVersion: '2.00',
    institutionId: ctx.library.institution,
    libraryName: ctx.library.libraryName,
    supportedMessages: ctx.profile?.bx ?? SUPPORTED_MESSAGES_BX,
    ...(ctx.terminalLocation ? { terminalLocation: ctx.terminalLocation } : {}),
  };
}

// ------------------------------------------------------------ 23 -> 24

function patronStatus(request: PatronStatusRequest, ctx: ResponseContext): PatronStatusResponse {
  return patronStatusOf(barcodeOf(request.patronIdentifier, ctx), request.language, request.patronPassword, ctx);
}

/** A 24 for the patron as the library sees them now (also the answer to 01 Block Patron). */
function patronStatusOf(
  barcode: string,
  requestedLanguage: string,
  patronPassword: string | undefined,
  ctx: ResponseContext,
): PatronStatusResponse {
  const summary = ctx.library.summary(barcode);
  if (!summary) return unknownPatronStatus(barcode, requestedLanguage, patronPassword, ctx);
  return {
    code: '24',
    patronStatus: summary.flags,
    language: language(requestedLanguage),
    transactionDate: txDate(ctx),
    institutionId: ctx.library.institution,
    patronIdentifier: barcode,
    personalName: summary.patron.name,
    validPatron: true,
    ...passwordCheck(patronPassword, summary.patron.password),
    // BV and BH as the 64 writes them: the sample ILS of the Perl SIPServer has neither (maybe_add).
    ...accountFields(summary.totalFinesCents, ctx.library.currency, ctx.profile ?? defaultProfile()),
    ...patronMessages(summary.patron),
  };
}

function unknownPatronStatus(
  barcode: string,
  requestedLanguage: string,
  patronPassword: string | undefined,
  ctx: ResponseContext,
): PatronStatusResponse {
  return {
    code: '24',
    patronStatus: invalidPatronFlags(),
    language: language(requestedLanguage),
    transactionDate: txDate(ctx),
    institutionId: ctx.library.institution,
    patronIdentifier: barcode,
    personalName: '',
    validPatron: false,
    ...(patronPassword !== undefined ? { validPatronPassword: false } : {}),
  };
}

/** AF (the block reason first, then the patron's screen message) and AG, when there are any. */
function patronMessages(patron: Patron): { screenMessage?: string[]; printLine?: string[] } {
  const screen = [patron.blocked?.reason, patron.screenMessage].filter((text): text is string => text !== undefined);
  return {
    ...(screen.length > 0 ? { screenMessage: screen } : {}),
    ...(patron.printLine !== undefined ? { printLine: [patron.printLine] } : {}),
  };
}

// ------------------------------------------------------------ 01 -> 24, 25 -> 26

/** Blocks the card and answers with the patron's status (3M: "respond with a Patron Status Response"); 01 has no language: 000. */
function blockPatron(request: BlockPatron, ctx: ResponseContext): PatronStatusResponse {
  const barcode = barcodeOf(request.patronIdentifier, ctx);
  ctx.library.block(barcode, request.blockedCardMessage);
  return patronStatusOf(barcode, '000', undefined, ctx);
}

/** Lifts a block, unless AD was sent and is wrong (as the Perl SIPServer); 25 has no language: 000. */
function patronEnable(request: PatronEnable, ctx: ResponseContext): PatronEnableResponse {
  const { library } = ctx;
  const patron = requestPatron(ctx, request.patronIdentifier);
  if (!patron) return unknownPatronEnable(request, ctx);
  const passwordOk = request.patronPassword === undefined || request.patronPassword === patron.password;
  const outcome = !passwordOk
    ? 'Invalid patron password'
    : library.enable(patron.barcode)
      ? 'Card block lifted'
      : 'Card was not blocked';
  const messages = patronMessages(patron);
  return {
    code: '26',
    patronStatus: library.flagsOf(patron),
    language: '000',
    transactionDate: txDate(ctx),
    institutionId: library.institution,
    patronIdentifier: patron.barcode,
    personalName: patron.name,
    validPatron: true,
    ...passwordCheck(request.patronPassword, patron.password),
    ...messages,
    screenMessage: [outcome, ...(messages.screenMessage ?? [])],
  };
}

/** As the Perl SIPServer: privileges denied, empty AE, BL N and CQ N. */
function unknownPatronEnable(request: PatronEnable, ctx: ResponseContext): PatronEnableResponse {
  return {
    code: '26',
    patronStatus: invalidPatronFlags(),
    language: '000',
    transactionDate: txDate(ctx),
    institutionId: ctx.library.institution,
    patronIdentifier: request.patronIdentifier,
    personalName: '',
    validPatron: false,
    validPatronPassword: false,
  };
}

// ------------------------------------------------------------ 63 -> 64

function patronInformation(request: PatronInformation, ctx: ResponseContext): PatronInformationResponse {
  const { library, dialect } = ctx;
  const summary = library.summary(barcodeOf(request.patronIdentifier, ctx));
  if (!summary) return unknownPatronInformation(request, ctx);
  const { patron } = summary;
  const holdEntry = (hold: LibraryHold): string =>
    hold.target.kind === 'item' ? hold.target.barcode : hold.target.titleId;
  const asHolds = dialect.holdLists === 'ready-in-AS' ? summary.readyHolds : summary.holds;
  const profile = ctx.profile ?? defaultProfile();
  // No hold is ever closed here: an ILS whose CD lists only closed requests lists none.
  const cdHolds = profile.unavailableHolds === 'closed' ? [] : summary.pendingHolds;
  const fines = fineList(summary.fines, profile.fines, (fine) => fineEntry(fine, ctx));
  let lists: Record<string, readonly string[]> = {
    hold: asHolds.map(holdEntry),
    overdue: summary.overdue.map((item) => item.barcode),
    charged: summary.loans.map((item) => item.barcode),
    fine: fines.entries,
    recall: [],
    unavailableHold: cdHolds.map(holdEntry),
  };
  const counts: Record<string, number> = Object.fromEntries(
    Object.entries(lists).map(([name, list]) => [name, list.length]),
  );
  counts.fine = fines.count;
  const inflated = Math.min(ctx.listCount ?? 0, MAX_LIST_COUNT);
  if (inflated > 0) {
    lists = Object.fromEntries(Object.entries(lists).map(([name, list]) => [name, inflateList(name, list, inflated)]));
    for (const name of Object.keys(counts)) counts[name] = inflated;
  }
  const written = writtenCounts(counts, profile.counts);
  const response: PatronInformationResponse = {
    code: '64',
    patronStatus: summary.flags,
    language: language(request.language),
    transactionDate: txDate(ctx),
    holdItemsCount: written.hold!,
    overdueItemsCount: written.overdue!,
    chargedItemsCount: written.charged!,
    fineItemsCount: written.fine!,
    recallItemsCount: written.recall!,
    unavailableHoldsCount: written.unavailableHold!,
    institutionId: library.institution,
    patronIdentifier: patron.barcode,
    personalName: patron.name,
    validPatron: true,
    ...passwordCheck(request.patronPassword, patron.password),
    ...accountFields(summary.totalFinesCents, library.currency, profile),
    ...(patron.feeLimitCents !== null ? { feeLimit: formatCents(patron.feeLimitCents) } : {}),
    ...(patron.holdItemsLimit !== undefined ? { holdItemsLimit: fourDigits(patron.holdItemsLimit) } : {}),
    ...(patron.overdueItemsLimit !== undefined ? { overdueItemsLimit: fourDigits(patron.overdueItemsLimit) } : {}),
    ...(patron.chargedItemsLimit !== undefined ? { chargedItemsLimit: fourDigits(patron.chargedItemsLimit) } : {}),
  };
  if (request.summary !== null) {
    const page = listPage(
      lists[request.summary] ?? [],
      request.startItem,
      request.endItem,
      dialect.listLimit,
      profile.pad,
    );
    const field = LIST_FIELD[request.summary];
    (response as Record<string, unknown>)[field] = page;
  }
  if (patron.address !== undefined) response.homeAddress = patron.address;
  if (patron.email !== undefined) response.emailAddress = patron.email;
  if (patron.phone !== undefined) response.homePhoneNumber = patron.phone;
  response.homeLibrary = patron.homeLibrary;
  if (patron.birthDate !== undefined) response.birthDate = patron.birthDate.replaceAll('-', '');
  if (patron.internetProfile !== undefined) response.internetProfile = patron.internetProfile;
  Object.assign(response, patronMessages(patron));
  const extra: Array<[string, string]> = [];
  if (dialect.expiry && patron.expires) {
    extra.push([dialect.expiry.field, dialectDate(patron.expires, dialect.expiry.format)]);
  }
  if (patron.patronClass !== undefined) extra.push(['PC', patron.patronClass]);
  if (extra.length > 0) response.extra = extra;
  return response;
}

function unknownPatronInformation(request: PatronInformation, ctx: ResponseContext): PatronInformationResponse {
  return {
    code: '64',
    patronStatus: invalidPatronFlags(),
    language: language(request.language),
    transactionDate: txDate(ctx),
    holdItemsCount: 0,
    overdueItemsCount: 0,
    chargedItemsCount: 0,
    fineItemsCount: 0,
    recallItemsCount: 0,
    unavailableHoldsCount: 0,
    institutionId: ctx.library.institution,
    patronIdentifier: request.patronIdentifier,
    personalName: '',
    validPatron: false,
    ...(request.patronPassword !== undefined ? { validPatronPassword: false } : {}),
  };
}

/** One AV entry, written with the dialect's template. */
function fineEntry(fine: Fine, ctx: ResponseContext): string {
  return formatFineItem(
    {
      amount: formatCents(fine.amountCents),
      currency: ctx.library.currency,
      type: fine.type,
      date: dialectDate(fine.date, 'YYYYMMDD'),
      item: fine.item ?? '-',
      about: fine.about,
      id: fine.id,
    },
    ctx.dialect,
  );
}

// ------------------------------------------------------------ 17 -> 18

function itemInformation(request: ItemInformation, ctx: ResponseContext): ItemInformationResponse {
  const { library, dialect } = ctx;
  const now = txDate(ctx);
  const item = library.item(request.itemIdentifier);
  if (!item) return unknownItem(request.itemIdentifier, now);
  const status = library.circulationStatus(item);
  const waiting = library.waitingHoldOn(item);
  return {
    code: '18',
    circulationStatus: status,
    securityMarker: 2,
    feeType: 1,
    transactionDate: now,
    holdQueueLength: String(library.holdsOnItem(item).length),
    ...(item.loan ? { dueDate: dialectDate(item.loan.due, dialect.dueDateFormat) } : {}),
    ...(status === CIRCULATION_STATUS.holdShelf && waiting?.waiting
      ? { holdPickupDate: formatSip2Date(sip2DateFrom(waiting.waiting.pickupBy)) }
      : {}),
    itemIdentifier: item.barcode,
    titleIdentifier: item.title,
    owner: item.owner,
    mediaType: item.mediaType,
    permanentLocation: item.permanentLocation,
    currentLocation: item.currentLocation,
    ...(item.itemProperties !== undefined ? { itemProperties: item.itemProperties } : {}),
    extra: [['CS', item.callNumber]],
  };
}

function unknownItem(barcode: string, now: Sip2DateTime): ItemInformationResponse {
  return {
    code: '18',
    circulationStatus: CIRCULATION_STATUS.other,
    securityMarker: 0,
    feeType: 1,
    transactionDate: now,
    itemIdentifier: barcode,
    titleIdentifier: '',
    screenMessage: ['Item not found'],
  };
}

// ------------------------------------------------------------ 29 -> 30, 65 -> 66

function renew(request: Renew, ctx: ResponseContext): RenewResponse {
  const { library } = ctx;
  const patron = requestPatron(ctx, request.patronIdentifier);
  const patronBarcode = patron?.barcode ?? request.patronIdentifier;
  if (patron && badPassword(request.patronPassword, patron.password)) {
    return renewRefused(
      request,
      patronBarcode,
      ctx,
      library.item(request.itemIdentifier ?? ''),
      'Invalid patron password',
    );
  }
  const barcode = request.itemIdentifier ?? titleToLoan(request, patronBarcode, ctx);
  const result = library.renew(patronBarcode, barcode ?? '');
  if (!result.ok) return renewRefused(request, patronBarcode, ctx, result.item, result.reason);
  return {
    code: '30',
    ok: true,
    renewalOk: true,
    magneticMedia: 'N',
    desensitize: 'N',
    transactionDate: txDate(ctx),
    institutionId: library.institution,
    patronIdentifier: patronBarcode,
    itemIdentifier: result.item.barcode,
    titleIdentifier: result.item.title,
    dueDate: dialectDate(result.due, ctx.dialect.dueDateFormat),
    mediaType: result.item.mediaType,
    screenMessage: ['Item renewed'],
  };
}

/** A 29 that names only a title (AJ): the patron's loan of that title, if exactly one. */
function titleToLoan(request: Renew, patronBarcode: string, ctx: ResponseContext): string | undefined {
  const title = request.titleIdentifier;
  if (!title) return undefined;
  const titles = new Set(ctx.library.titleItems(title).map((item) => item.titleId));
  const loans = ctx.library.loansOf(patronBarcode).filter((item) => titles.has(item.titleId));
  return loans.length === 1 ? loans[0]!.barcode : undefined;
}

/**
 * patronBarcode: the stored barcode of a known patron (Koha: `$patron->id`), else the AA sent.
 * The fixed part is `0NUN` (desensitize N, not U), as the Perl SIPServer and Koha write it
 * (`handle_renew`: "not OK, renewal not OK, Unknown media type").
 */
function renewRefused(
  request: Renew,
  patronBarcode: string,
  ctx: ResponseContext,
  item: Item | undefined,
  reason: string,
): RenewResponse {
  const onLoanToPatron = item?.loan?.patron === patronBarcode;
  return {
    code: '30',
    ok: false,
    renewalOk: false,
    magneticMedia: 'U',
    desensitize: 'N',
    transactionDate: txDate(ctx),
    institutionId: ctx.library.institution,
    patronIdentifier: patronBarcode,
    itemIdentifier: item?.barcode ?? request.itemIdentifier ?? '',
    titleIdentifier: item?.title ?? request.titleIdentifier ?? '',
    dueDate: item?.loan && onLoanToPatron ? dialectDate(item.loan.due, ctx.dialect.dueDateFormat) : '',
    ...(item ? { mediaType: item.mediaType } : {}),
    screenMessage: [reason],
  };
}

function renewAll(request: RenewAll, ctx: ResponseContext): RenewAllResponse {
  const { library } = ctx;
  const patron = requestPatron(ctx, request.patronIdentifier);
  const now = txDate(ctx);
  if (patron && badPassword(request.patronPassword, patron.password)) {
    return {
      code: '66',
      ok: false,
      renewedCount: 0,
      unrenewedCount: 0,
      transactionDate: now,
      institutionId: library.institution,
      screenMessage: ['Invalid patron password'],
    };
  }
  const result = library.renewAll(patron?.barcode ?? request.patronIdentifier);
  const renewed = result.renewed.map((item) => item.barcode);
  const unrenewed = result.unrenewed.map(({ item }) => item.barcode);
  return {
    code: '66',
    ok: result.ok,
    renewedCount: renewed.length,
    unrenewedCount: unrenewed.length,
    transactionDate: now,
    institutionId: library.institution,
    ...(renewed.length > 0 ? { renewedItems: renewed } : {}),
    ...(unrenewed.length > 0 ? { unrenewedItems: unrenewed } : {}),
    ...(result.reason ? { screenMessage: [result.reason] } : {}),
  };
}

// ------------------------------------------------------------ 15 -> 16

function hold(request: Hold, ctx: ResponseContext): HoldResponse {
  const { library } = ctx;
  const patron = requestPatron(ctx, request.patronIdentifier);
  const patronBarcode = patron?.barcode ?? request.patronIdentifier;
  if (patron && badPassword(request.patronPassword, patron.password)) {
    return holdResponse(request, ctx, { ok: false, reason: 'Invalid patron password' });
  }
  const target = { item: request.itemIdentifier || undefined, title: request.titleIdentifier || undefined };
  switch (request.holdMode) {
    case '+': {
      // BY 2 with a title asks for a title-level hold even when an item is named too.
      const titleLevel = request.holdType === '2' && target.title !== undefined;
      const result = library.placeHold(patronBarcode, {
        item: titleLevel ? undefined : target.item,
        title: target.title,
        pickupLocation: request.pickupLocation,
        expires: parseExpiry(request.expirationDate),
      });
      if (!result.ok) return holdResponse(request, ctx, { ok: false, reason: result.reason });
      return holdResponse(request, ctx, {
        ok: true,
        available: ctx.profile?.holdAvailable === 'waiting' ? result.hold.waiting !== null : result.available,
        hold: result.hold,
        queuePosition: result.queuePosition,
        message: 'Hold placed',
      });
    }
    case '-': {
      const result = library.cancelHold(patronBarcode, target);
      return result.ok
        ? holdResponse(request, ctx, { ok: true, available: false, hold: result.hold, message: 'Hold cancelled' })
        : holdResponse(request, ctx, { ok: false, reason: result.reason });
    }
    case '*': {
      const result = library.changePickup(patronBarcode, {
        ...target,
        pickupLocation: request.pickupLocation,
      });
      return result.ok
        ? holdResponse(request, ctx, {
            ok: true,
            available: false,
            hold: result.hold,
            queuePosition: library.queuePosition(result.hold),
            message: 'Pickup location changed',
          })
        : holdResponse(request, ctx, { ok: false, reason: result.reason });
    }
    default:
      return holdResponse(request, ctx, { ok: false, reason: `Unknown hold mode "${request.holdMode}"` });
  }
}

type HoldOutcome =
  | { ok: true; available: boolean; hold: LibraryHold; queuePosition?: number; message: string }
  | { ok: false; reason: string };

function holdResponse(request: Hold, ctx: ResponseContext, outcome: HoldOutcome): HoldResponse {
  const response: HoldResponse = {
    code: '16',
    ok: outcome.ok,
    available: outcome.ok && outcome.available,
    transactionDate: txDate(ctx),
    institutionId: ctx.library.institution,
    // As Koha: the hold's patron (its stored barcode) when placed, the AA sent when refused.
    patronIdentifier: outcome.ok ? outcome.hold.patron : request.patronIdentifier,
  };
  if (outcome.ok) {
    const { hold } = outcome;
    response.expirationDate = formatSip2Date(sip2DateFrom(hold.expires));
    if (outcome.queuePosition !== undefined) response.queuePosition = String(outcome.queuePosition);
    response.pickupLocation = hold.pickupLocation;
    if (hold.target.kind === 'item') {
      // AB and the item's title in AJ, as the Perl SIPServer and Koha answer an item hold (`handle_hold`).
      response.itemIdentifier = hold.target.barcode;
      const title = ctx.library.item(hold.target.barcode)?.title;
      if (title !== undefined) response.titleIdentifier = title;
    } else response.titleIdentifier = hold.target.titleId;
    response.screenMessage = [outcome.message];
  } else {
    if (request.itemIdentifier) response.itemIdentifier = request.itemIdentifier;
    if (request.titleIdentifier) response.titleIdentifier = request.titleIdentifier;
    response.screenMessage = [outcome.reason];
  }
  return response;
}

/** BW as sent (an 18-char SIP2 date, or at least YYYYMMDD); undefined when absent or unreadable. */
function parseExpiry(text: string | undefined): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})/.exec(text ?? '');
  if (!m) return undefined;
  const date = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]), 23, 59, 59);
  return date.getMonth() === Number(m[2]) - 1 && date.getDate() === Number(m[3]) ? date : undefined;
}

// ------------------------------------------------------------ 35 -> 36, 37 -> 38

function endSession(request: EndPatronSession, ctx: ResponseContext, ended: boolean): EndSessionResponse {
  return {
    code: '36',
    endSession: ended,
    transactionDate: txDate(ctx),
    institutionId: ctx.library.institution,
    patronIdentifier: request.patronIdentifier,
  };
}

function feePaid(request: FeePaid, ctx: ResponseContext): FeePaidResponse {
  const { library } = ctx;
  const patron = requestPatron(ctx, request.patronIdentifier);
  const result =
    patron && badPassword(request.patronPassword, patron.password)
      ? { ok: false as const, reason: 'Invalid patron password' }
      : library.payFee(patron?.barcode ?? request.patronIdentifier, request.feeAmount, {
          feeId: request.feeIdentifier,
          currency: request.currencyType,
        });
  return {
    code: '38',
    paymentAccepted: result.ok,
    transactionDate: txDate(ctx),
    institutionId: library.institution,
    patronIdentifier: request.patronIdentifier,
    ...(request.transactionId ? { transactionId: request.transactionId } : {}),
    screenMessage: [result.ok ? 'Payment accepted' : result.reason],
  };
}

// ------------------------------------------------------------ helpers

/** The stored barcode of the patron the AA names, or the AA as sent when no patron matches. */
function barcodeOf(identifier: string, ctx: ResponseContext): string {
  return requestPatron(ctx, identifier)?.barcode ?? identifier;
}

function txDate(ctx: ResponseContext): Sip2DateTime {
  return sip2DateFrom(ctx.library.now());
}

/** A date the way the dialect writes it. */
function dialectDate(date: Date, format: DateFormat): string {
  return formatDialectDate(sip2DateFrom(date), format);
}

/** BZ, CA, CB: "4-char, fixed-length" in the 3M text. */
function fourDigits(n: number): string {
  return String(n).padStart(4, '0');
}

function language(requested: string): string {
  return /^\d{3}$/.test(requested) ? requested : '000';
}

/** CQ only when the request carried AD. */
function passwordCheck(sent: string | undefined, actual: string): { validPatronPassword?: boolean } {
  return sent === undefined ? {} : { validPatronPassword: sent === actual };
}

/** An AD that was sent, is not empty, and is wrong. */
function badPassword(sent: string | undefined, actual: string): boolean {
  return sent !== undefined && sent !== '' && sent !== actual;
}

/** As the Perl SIPServer answers for a patron it does not know: charge, renewal, recall and hold denied. */
function invalidPatronFlags(): PatronStatusFlags {
  return {
    ...noPatronFlags(),
    chargePrivilegesDenied: true,
    renewalPrivilegesDenied: true,
    recallPrivilegesDenied: true,
    holdPrivilegesDenied: true,
  };
}
