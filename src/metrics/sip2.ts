import { messageName, RESPONSE_CODE, type RequestCode } from '../sip2/index.js';

/**
 * The `message` label of a SIP2 round trip, by request code: the message's
 * name in the 3M text in snake case, without a trailing "Request" (63
 * patron_information, 99 sc_status, 23 patron_status). The labels are part
 * of every dashboard built on them: a rename here breaks those.
 */
export const SIP2_MESSAGE_NAMES: Readonly<Record<RequestCode, string>> = Object.fromEntries(
  (Object.keys(RESPONSE_CODE) as RequestCode[]).map((code) => [
    code,
    messageName(code)
      .replace(/ Request$/, '')
      .toLowerCase()
      .replaceAll(' ', '_'),
  ]),
) as Record<RequestCode, string>;

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
