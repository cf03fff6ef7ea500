import { isIP } from 'node:net';

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
