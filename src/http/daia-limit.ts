import { isIP } from 'node:net';
import { ClientAllowlist } from '../auth/client-allowlist.js';
import type { Limiter, StateStore } from '../state/index.js';

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
}

const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;
/** Longest key kept for a forwarded value that is no IP address. */
const MAX_KEY_CHARS = 100;

/**
 * The key an address is counted under: IPv4 as it is (an IPv4-mapped IPv6
 * address as its IPv4 address), IPv6 by its /64, the block one subscriber
 * gets and can pick addresses from at will; "unknown" when there is none,
 * so that requests without an address share one count instead of none.
 * Anything else a proxy might forward is kept, cut to a length that keeps
 * keys small.
 */
export function addressKey(address: string | undefined): string {
  const text = address?.trim() ?? '';
  if (text === '') return 'unknown';
  const mapped = MAPPED_IPV4.exec(text)?.[1];
  if (mapped !== undefined && isIP(mapped) === 4) return mapped;
  if (isIP(text) !== 6) return text.slice(0, MAX_KEY_CHARS);
  const groups = expandIpv6(text);
  return groups === null ? text : `${groups.slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, lower-case hex without leading zeros; null when it cannot be read. */
function expandIpv6(address: string): string[] | null {
  let canonical: string;
  try {
    // The URL parser writes an embedded IPv4 part as hex groups and lower-cases.
    canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const [head = '', tail] = canonical.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return null;
  return [...left, ...Array<string>(missing).fill('0'), ...right].map((group) =>
    Number.parseInt(group, 16).toString(16),
  );
}

export class DaiaAddressLimit {
  readonly idsPerMinute: number;
  readonly #limiter: Limiter;
  readonly #exempt: ClientAllowlist | null;

  constructor(store: Pick<StateStore, 'limiter'>, options: DaiaLimitOptions) {
    const { idsPerMinute } = options;
    if (!Number.isInteger(idsPerMinute) || idsPerMinute < 1)
      throw new Error(`idsPerMinute must be a positive integer, got ${idsPerMinute}`);
    this.idsPerMinute = idsPerMinute;
    this.#limiter = store.limiter({ name: 'daia-address', points: idsPerMinute, durationSeconds: 60 });
    const exempt = options.exempt ?? [];
    this.#exempt = exempt.length === 0 ? null : new ClientAllowlist(exempt);
  }

  /**
   * Counts `ids` more for the client at `address` and says whether its
   * request may go on. Rejects with StoreUnavailable when the store cannot
   * count: the request is then refused, not let through.
   */
  async take(address: string | undefined, ids: number): Promise<DaiaLimitVerdict> {
    if (this.#exempt?.allows(address)) return { allowed: true };
    const count = await this.#limiter.take(addressKey(address), ids);
    if (count.within) return { allowed: true };
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(count.msBeforeReset / 1000)) };
  }
}
