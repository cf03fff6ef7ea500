import type { RequestCode } from '../sip2/spec.js';

/** The `message` label of a SIP2 round trip, by request code. */
export const SIP2_MESSAGE_NAMES: Readonly<Record<RequestCode, string>> = {
  '01': 'block_patron',
  '11': 'checkout',
  '09': 'checkin',
  '19': 'item_status_update',
  '25': 'patron_enable',
  '93': 'login',
  '99': 'sc_status',
  '23': 'patron_status',
  '63': 'patron_information',
  '17': 'item_information',
  '29': 'renew',
  '65': 'renew_all',
  '15': 'hold',
  '35': 'end_patron_session',
  '37': 'fee_paid',
};

/** The `outcome` label: ok, or the stable code of the Sip2Error the exchange failed with. */
export const SIP2_OUTCOMES = [
  'ok',
  'SIP2_DECODE',
  'SIP2_ENCODE',
  'ILS_UNAVAILABLE',
  'ILS_TIMEOUT',
  'POOL_REFUSED',
  'ILS_PROTOCOL',
] as const;
