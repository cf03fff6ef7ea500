/** The account window's defaults (cache.accounts): a few seconds, one entry per patron read. */
export const ACCOUNT_WINDOW_DEFAULTS = Object.freeze({ windowMs: 5_000, maxPatrons: 10_000 });
