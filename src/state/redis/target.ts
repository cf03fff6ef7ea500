/**
 * Where the Redis store is, and how it is named in messages: one server by
 * its URL, or the master a set of sentinels names (Redis Sentinel). The
 * name never carries a password: a URL is cut to its scheme, host and port.
 * No ioredis here: the doctor and the gateway's messages name the store
 * without loading it.
 */

/** A sentinel's address. */
export interface SentinelAddress {
  host: string;
  port: number;
}

/** Redis Sentinel: the sentinels the gateway asks where the master is, and the master's name there. */
export interface SentinelTarget {
  sentinels: readonly SentinelAddress[];
  /** The name the sentinels monitor the master by (`sentinel monitor NAME ...`). */
  masterName: string;
  /** The sentinels' own password (their requirepass); null: none. Never logged. */
  password: string | null;
  /** TLS to the sentinels and to Redis. */
  tls: boolean;
}

/** An address as written in a host:port list, an IPv6 address in brackets. */
function hostPort({ host, port }: SentinelAddress): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Scheme, host and port of a Redis URL (it may carry a password). */
function describeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.hostname}:${parsed.port || '6379'}`;
  } catch {
    return '(unparsable URL)';
  }
}

/** How messages name the store, from one target. */
export interface RedisPlace {
  /** The store's own name, in log fields and the doctor: "redis://host:port" or "Redis via Sentinel master NAME at host:port,...". */
  name: string;
  /** After "the Redis state store" in messages: "at redis://host:port" or "via Sentinel master NAME at host:port,...". */
  where: string;
}

export function redisPlace(target: { url?: string | undefined; sentinel?: SentinelTarget | undefined }): RedisPlace {
  const { sentinel, url } = target;
  if (sentinel === undefined) {
    const name = describeRedisUrl(url ?? '');
    return { name, where: `at ${name}` };
  }
  const where = `via Sentinel master ${sentinel.masterName} at ${sentinel.sentinels.map(hostPort).join(',')}`;
  return { name: `Redis ${where}`, where };
}
