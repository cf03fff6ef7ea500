import { BlockList, isIP } from 'node:net';

/**
 * Which clients may log in (auth.allowedClients): IP addresses and CIDR
 * blocks, IPv4 and IPv6. An empty list allows every client.
 *
 * IPv4-mapped IPv6 addresses (::ffff:10.1.2.3, as a dual-stack socket
 * reports IPv4 clients) are checked as the IPv4 address they carry.
 */

/** Why entry is not an IP address or CIDR block, or null when it is one. */
export function clientRuleProblem(entry: string): string | null {
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return 'is not an IP address or CIDR block (e.g. "192.0.2.10", "10.0.0.0/8", "2001:db8::/32")';
  if (slash === -1) return null;
  const prefix = entry.slice(slash + 1);
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max)
    return `has a prefix length that is not a whole number between 0 and ${max}`;
  return null;
}

const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

export class ClientAllowlist {
  readonly #list = new BlockList();
  readonly #empty: boolean;

  /** Throws on an entry that clientRuleProblem rejects (the configuration is validated before). */
  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const problem = clientRuleProblem(entry);
      if (problem !== null) throw new Error(`allowed client ${JSON.stringify(entry)} ${problem}`);
      const slash = entry.indexOf('/');
      const address = slash === -1 ? entry : entry.slice(0, slash);
      const type = isIP(address) === 4 ? 'ipv4' : 'ipv6';
      if (slash === -1) this.#list.addAddress(address, type);
      else this.#list.addSubnet(address, Number(entry.slice(slash + 1)), type);
    }
    this.#empty = entries.length === 0;
  }

  /** true: every client may log in. */
  get open(): boolean {
    return this.#empty;
  }

  /** Whether a client at this address may log in; an unknown or malformed address only when the list is empty. */
  allows(address: string | undefined): boolean {
    if (this.#empty) return true;
    if (address === undefined) return false;
    const mapped = MAPPED_IPV4.exec(address)?.[1];
    const candidate = mapped !== undefined && isIP(mapped) === 4 ? mapped : address;
    const family = isIP(candidate);
    if (family === 0) return false;
    try {
      return this.#list.check(candidate, family === 4 ? 'ipv4' : 'ipv6');
    } catch {
      return false;
    }
  }
}
