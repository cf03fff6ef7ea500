import { ACCOUNT_WINDOW_DEFAULTS } from '../../backend/account-window.js';
import { flag, integer, milliseconds, section } from './validators.js';

/** cache: short-lived caches of ILS answers. */

export const cacheSection = section({
  /** Item information (SIP2 17) answers, shared by items and DAIA: fewer round trips when the same items are asked for again. */
  items: section({
    /** false: every item is asked of the ILS each time. */
    enabled: flag().default(true),
    /** How long an answer is used; keep it short, other patrons' loans and returns change items without the gateway knowing. A renew, request or cancel of an item through the gateway drops its entry at once. */
    ttlMs: milliseconds(1000, 3_600_000, 15_000).default(15_000),
    /** Most items kept; the least recently used go first. */
    maxEntries: integer(1, 1_000_000, 'must be a whole number between 1 and 1000000').default(10_000),
  }),
  /**
   * A patron's account reads (core, items, fees) shared by that patron's calls
   * for a few seconds, whatever token they come with: a discovery system reads
   * the same account three or four times per page view. A renew, request or
   * cancel of the patron through any instance drops them at once; a change made
   * at the circulation desk shows after the window at the latest.
   */
  accounts: section({
    /** false: every call reads the account from the ILS. */
    enabled: flag().default(true),
    /** How long a read is shared, counted from when it was sent to the ILS. */
    windowMs: milliseconds(1000, 300_000, ACCOUNT_WINDOW_DEFAULTS.windowMs).default(ACCOUNT_WINDOW_DEFAULTS.windowMs),
    /** Most patrons whose reads are kept; the least recently read go first. */
    maxPatrons: integer(1, 1_000_000, 'must be a whole number between 1 and 1000000').default(
      ACCOUNT_WINDOW_DEFAULTS.maxPatrons,
    ),
  }),
});
