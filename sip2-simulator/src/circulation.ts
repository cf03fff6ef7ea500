import {
  type Checkin,
  type CheckinResponse,
  type Checkout,
  type CheckoutResponse,
  formatDialectDate,
  type ItemStatusUpdate,
  type ItemStatusUpdateResponse,
  type Sip2DateTime,
  sip2DateFrom,
  toDate,
} from '../../src/sip2/index.js';
import type { CheckinRoute, Item } from './library.js';
import { type ResponseContext, requestPatron } from './response-context.js';

/**
 * The messages a self-check machine sends to lend and return items: 11
 * Checkout, 09 Checkin and 19 Item Status Update, answered as the Perl
 * SIPServer (atz/SIPServer Sip/MsgType.pm) and Koha (C4/SIP/Sip/MsgType.pm,
 * C4/SIP/ILS/Transaction/Checkin.pm) answer them.
 */

/** Media types that are magnetic (3M media type table): audio tape, video tape, diskette, and books with either. */
const MAGNETIC_MEDIA = new Set(['004', '005', '007', '008', '010']);

function isMagneticMedia(item: Item): boolean {
  return MAGNETIC_MEDIA.has(item.mediaType);
}

// ------------------------------------------------------------ 11 -> 12

export function checkout(request: Checkout, ctx: ResponseContext): CheckoutResponse {
  const { library } = ctx;
  const patron = requestPatron(ctx, request.patronIdentifier);
  if (patron && badPassword(request.patronPassword, patron.password)) {
    return checkoutRefused(request, ctx, 'Invalid patron password');
  }
  const result = library.checkout(patron?.barcode ?? request.patronIdentifier, request.itemIdentifier, {
    scRenewalPolicy: request.scRenewalPolicy,
    noBlock: request.noBlock,
    nbDueDate: request.nbDueDate ? toDate(request.nbDueDate) : undefined,
  });
  if (!result.ok) return checkoutRefused(request, ctx, result.reason);
  const { item } = result;
  const magnetic = isMagneticMedia(item);
  return {
    code: '12',
    ok: true,
    renewalOk: result.renewal,
    magneticMedia: magnetic ? 'Y' : 'N',
    // As the Perl SIPServer: magnetic media are not desensitized by the SC.
    desensitize: magnetic ? 'N' : 'Y',
    transactionDate: now(ctx),
    institutionId: library.institution,
    // Koha echoes the AA sent here, not the patron's cardnumber (C4/SIP/Sip/MsgType.pm, handle_checkout).
    patronIdentifier: request.patronIdentifier,
    itemIdentifier: item.barcode,
    titleIdentifier: item.title,
    dueDate: formatDialectDate(sip2DateFrom(result.due), ctx.dialect.dueDateFormat),
    mediaType: item.mediaType,
    ...(item.itemProperties !== undefined ? { itemProperties: item.itemProperties } : {}),
    screenMessage: [result.renewal ? 'Item renewed' : 'Item checked out'],
  };
}

/**
 * ok 0, renewal N, magnetic media and desensitize unknown/N, empty AH
 * (required, but there is no due date): the Perl SIPServer's "120NUN". BL
 * says whether the patron is known, and CQ whether a sent AD is right: not
 * in the 3M layout of the 12, sent by the Perl SIPServer and Koha
 * (`handle_checkout`: `add_field(FID_VALID_PATRON, ...)`) and required by
 * the SIPServer test suite (t/03checkout.t).
 */
export function checkoutRefused(request: Checkout, ctx: ResponseContext, reason: string): CheckoutResponse {
  const item = ctx.library.item(request.itemIdentifier);
  const patron = requestPatron(ctx, request.patronIdentifier);
  const validity: Array<[string, string]> = [['BL', patron ? 'Y' : 'N']];
  if (patron && request.patronPassword !== undefined)
    validity.push(['CQ', request.patronPassword === patron.password ? 'Y' : 'N']);
  return {
    code: '12',
    ok: false,
    renewalOk: false,
    magneticMedia: 'U',
    desensitize: 'N',
    transactionDate: now(ctx),
    institutionId: ctx.library.institution,
    patronIdentifier: request.patronIdentifier,
    itemIdentifier: request.itemIdentifier,
    titleIdentifier: item?.title ?? '',
    dueDate: '',
    ...(item ? { mediaType: item.mediaType } : {}),
    screenMessage: [reason],
    extra: validity,
  };
}

// ------------------------------------------------------------ 09 -> 10

export function checkin(request: Checkin, ctx: ResponseContext): CheckinResponse {
  const { library } = ctx;
  // The SC sends its own location in AP (3M: "could set this field to the terminal location").
  const location = request.currentLocation.trim() || ctx.terminalLocation || library.defaultLocation;
  const result = library.checkin(request.itemIdentifier, location, { transfers: ctx.profile?.transfers ?? true });
  if (!result.ok) return checkinRefused(request, ctx, result.reason);
  const { item, returnedBy, route } = result;
  const magnetic = isMagneticMedia(item);
  return {
    code: '10',
    ok: true,
    resensitize: !magnetic,
    magneticMedia: magnetic ? 'Y' : 'N',
    alert: route.kind !== 'shelf',
    transactionDate: now(ctx),
    institutionId: library.institution,
    itemIdentifier: item.barcode,
    permanentLocation: item.permanentLocation,
    titleIdentifier: item.title,
    ...(returnedBy ? { patronIdentifier: returnedBy.barcode } : {}),
    mediaType: item.mediaType,
    ...(item.itemProperties !== undefined ? { itemProperties: item.itemProperties } : {}),
    ...routeFields(route, location, ctx),
  };
}

/** CV, CT, CY, DA and the screen message for where the item goes (Koha's alert types). */
function routeFields(route: CheckinRoute, location: string, ctx: ResponseContext): Partial<CheckinResponse> {
  const nameOf = (barcode: string) => ctx.library.patron(barcode)?.name ?? '';
  switch (route.kind) {
    case 'shelf':
      return { screenMessage: ['Item checked in'] };
    case 'hold-shelf': {
      const { hold } = route;
      const until = formatDialectDate(sip2DateFrom(hold.waiting!.pickupBy), 'YYYY-MM-DD');
      return {
        alertType: '01',
        destinationLocation: location,
        holdPatronIdentifier: hold.patron,
        holdPatronName: nameOf(hold.patron),
        screenMessage: [`Item on hold for ${hold.patron}: put it on the hold shelf (pickup until ${until})`],
      };
    }
    case 'hold-transit':
      return {
        alertType: '02',
        destinationLocation: route.to,
        holdPatronIdentifier: route.hold.patron,
        holdPatronName: nameOf(route.hold.patron),
        screenMessage: [`Item on hold for ${route.hold.patron} at ${route.to}: send it there`],
      };
    case 'home-transit':
      return {
        alertType: '04',
        destinationLocation: route.to,
        screenMessage: [`Item belongs to ${route.to}: send it there`],
      };
  }
}

/**
 * ok 0 and alert Y (Koha: `alert(!$return || ...)`); an unknown barcode also
 * gets alert type 99 ("other"), as in Koha. With `refused-checkin-alert=off`
 * no alert and no CV, as the Perl SIPServer's sample ILS (its checkin never
 * sets alert, and CV is only sent with one): `100YNN`.
 */
export function checkinRefused(request: Checkin, ctx: ResponseContext, reason: string): CheckinResponse {
  const item = ctx.library.item(request.itemIdentifier);
  const alert = ctx.profile?.refusedCheckinAlert ?? true;
  return {
    code: '10',
    ok: false,
    resensitize: item !== undefined,
    magneticMedia: item ? (isMagneticMedia(item) ? 'Y' : 'N') : 'U',
    alert,
    transactionDate: now(ctx),
    institutionId: ctx.library.institution,
    itemIdentifier: request.itemIdentifier,
    permanentLocation: item?.permanentLocation ?? '',
    ...(item ? { titleIdentifier: item.title, mediaType: item.mediaType } : alert ? { alertType: '99' } : {}),
    screenMessage: [reason],
  };
}

// ------------------------------------------------------------ 19 -> 20

export function itemStatusUpdate(request: ItemStatusUpdate, ctx: ResponseContext): ItemStatusUpdateResponse {
  const item = ctx.library.updateItemProperties(request.itemIdentifier, request.itemProperties);
  if (!item) return itemStatusUpdateRefused(request, ctx, 'Item not found');
  return {
    code: '20',
    itemPropertiesOk: true,
    transactionDate: now(ctx),
    itemIdentifier: item.barcode,
    titleIdentifier: item.title,
    itemProperties: request.itemProperties,
    screenMessage: ['Item properties stored'],
  };
}

export function itemStatusUpdateRefused(
  request: ItemStatusUpdate,
  ctx: ResponseContext,
  reason: string,
): ItemStatusUpdateResponse {
  return {
    code: '20',
    itemPropertiesOk: false,
    transactionDate: now(ctx),
    itemIdentifier: request.itemIdentifier,
    screenMessage: [reason],
  };
}

// ------------------------------------------------------------ helpers

function now(ctx: ResponseContext): Sip2DateTime {
  return sip2DateFrom(ctx.library.now());
}

/** An AD that was sent, is not empty, and is wrong (as for 29, 65, 15, 37). */
function badPassword(sent: string | undefined, actual: string): boolean {
  return sent !== undefined && sent !== '' && sent !== actual;
}
