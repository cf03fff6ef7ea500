import { addressKey } from '../auth/address-key.js';
import { ClientAllowlist } from '../auth/client-allowlist.js';
import type { Limiter, StateStore } from '../state/index.js';
import { REFUSAL_NOTICE_DEFAULTS, RefusalNotice } from './refusal-notice.js';

/**
 * Document ids per client address per minute for anonymous DAIA
 * (daia.idsPerMinutePerAddress): a fixed one-minute window per address,
 * started by its first request, counted in the state store (with Redis the
 * limit holds across instances). A request counts the ids it asks for, so
 * one request with 50 ids uses as much as 50 with one each. A refused
 * request counts too, as with the per-token limit.
 */
export type DaiaLimitVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface DaiaLimitOptions {
  idsPerMinute: number;
  /** Addresses and CIDR blocks not counted (daia.exemptClients); [] = none. */
  exempt?: readonly string[];
  /**
   * Where an address refused again and again is told about, once in a while
   * (RefusalNotice's defaults): it may be a discovery server whose pages now
   * show no holdings. None when left out.
   */
  logger?: { warn(fields: object, message: string): void };
}

export class DaiaAddressLimit {
  readonly idsPerMinute: number;
  readonly #limiter: Limiter;
  readonly #exempt: ClientAllowlist | null;
  readonly #refusals: RefusalNotice | null;

  constructor(store: Pick<StateStore, 'limiter'>, options: DaiaLimitOptions) {
    const { idsPerMinute } = options;
    if (!Number.isInteger(idsPerMinute) || idsPerMinute < 1)
      throw new Error(`idsPerMinute must be a positive integer, got ${idsPerMinute}`);
    this.idsPerMinute = idsPerMinute;
    this.#limiter = store.limiter({ name: 'daia-address', points: idsPerMinute, durationSeconds: 60 });
    const exempt = options.exempt ?? [];
    this.#exempt = exempt.length === 0 ? null : new ClientAllowlist(exempt);
    const { logger } = options;
    this.#refusals = logger
      ? new RefusalNotice({
          notice: (address, refusals) =>
            logger.warn(
              { address, refusals, idsPerMinutePerAddress: idsPerMinute },
              `DAIA: client address ${address} was refused ${refusals} times (429) for asking more than ` +
                `${idsPerMinute} ids a minute. If it is a discovery system's server asking for all its users ` +
                '(its result pages then show no holdings), add it to daia.exemptClients (PAIA_DAIA_EXEMPT_CLIENTS) ' +
                'or raise daia.idsPerMinutePerAddress (PAIA_DAIA_IDS_PER_MINUTE_PER_ADDRESS); daia.poolShare keeps ' +
                `patrons served either way. Said at most once per address every ${REFUSAL_NOTICE_DEFAULTS.everyMs / 60_000} minutes`,
            ),
        })
      : null;
  }

  /**
   * Counts `ids` more for the client at `address` and says whether its
   * request may go on. Rejects with StoreUnavailable when the store cannot
   * count: the request is then refused, not let through.
   */
  async take(address: string | undefined, ids: number): Promise<DaiaLimitVerdict> {
    if (this.#exempt?.allows(address)) return { allowed: true };
    const key = addressKey(address);
    const count = await this.#limiter.take(key, ids);
    if (count.within) return { allowed: true };
    this.#refusals?.refused(key);
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(count.msBeforeReset / 1000)) };
  }
}
