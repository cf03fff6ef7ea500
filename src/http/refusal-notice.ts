import { LRUCache } from 'lru-cache';

/**
 * Notices an address that keeps being refused, once in a while: one call of
 * `notice` when an address reaches `afterRefusals` refusals within `everyMs`,
 * and none more for it until that time is over, however many refusals follow.
 * A sysadmin reading the log then learns about a client that is turned away
 * again and again (a discovery server whose pages show no holdings) in one
 * line, not one per refusal. Memory is bounded: at most `maxAddresses` are
 * followed, the one refused least recently is forgotten first, so a client
 * refused again and again stays followed through a burst of others.
 */

export interface RefusalNoticeOptions {
  /** Called with the address and its refusals so far, at most once per address per `everyMs`. */
  notice: (address: string, refusals: number) => void;
  /** Refusals of one address within `everyMs` before it is noticed. Default 3: one is a burst, three a habit. */
  afterRefusals?: number;
  /** The period of one address: at most one notice in it. Default 10 minutes. */
  everyMs?: number;
  /** Addresses followed at once. Default 1000. */
  maxAddresses?: number;
  /** Clock in milliseconds (tests). */
  now?: () => number;
}

export const REFUSAL_NOTICE_DEFAULTS = { afterRefusals: 3, everyMs: 10 * 60_000, maxAddresses: 1000 } as const;

export class RefusalNotice {
  readonly #notice: (address: string, refusals: number) => void;
  readonly #afterRefusals: number;
  readonly #everyMs: number;
  readonly #now: () => number;
  /** Each address followed: when its period began and its refusals in it. */
  readonly #addresses: LRUCache<string, { since: number; refusals: number }>;

  constructor(options: RefusalNoticeOptions) {
    this.#notice = options.notice;
    this.#afterRefusals = options.afterRefusals ?? REFUSAL_NOTICE_DEFAULTS.afterRefusals;
    this.#everyMs = options.everyMs ?? REFUSAL_NOTICE_DEFAULTS.everyMs;
    this.#now = options.now ?? Date.now;
    this.#addresses = new LRUCache({ max: options.maxAddresses ?? REFUSAL_NOTICE_DEFAULTS.maxAddresses });
  }

  /** One more refusal of `address`. */
  refused(address: string): void {
    const now = this.#now();
    let entry = this.#addresses.get(address);
    if (entry === undefined || now - entry.since >= this.#everyMs) {
      entry = { since: now, refusals: 0 };
      this.#addresses.set(address, entry);
    }
    entry.refusals += 1;
    if (entry.refusals === this.#afterRefusals) this.#notice(address, entry.refusals);
  }

  /** Addresses followed now (tests: the bound). */
  get size(): number {
    return this.#addresses.size;
  }
}
