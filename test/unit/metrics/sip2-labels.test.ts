import { describe, expect, it } from 'vitest';
import { SIP2_MESSAGE_NAMES } from '../../../src/metrics/sip2.js';

describe('the message label of SIP2 round trips', () => {
  it('names every request by its 3M name in snake case, as dashboards know them', () => {
    expect(SIP2_MESSAGE_NAMES).toEqual({
      '01': 'block_patron',
      '09': 'checkin',
      '11': 'checkout',
      '15': 'hold',
      '17': 'item_information',
      '19': 'item_status_update',
      '23': 'patron_status',
      '25': 'patron_enable',
      '29': 'renew',
      '35': 'end_patron_session',
      '37': 'fee_paid',
      '63': 'patron_information',
      '65': 'renew_all',
      '93': 'login',
      '99': 'sc_status',
    });
  });
});
