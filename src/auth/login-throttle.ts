import { LRUCache } from 'lru-cache';

/**
 * Brute-force protection for login (the spec makes it a MUST): failed
 * attempts are counted per username and per client address; past a number
 * of free attempts each further one doubles a lockout delay, up to a cap.
 *
 * Every attempt counts as failed from the moment it starts and is taken
 * back only when the credentials turn out right (or the ILS could not be
 * asked), so firing many guesses in parallel gains nothing.
 * A successful login clears its username's count but not its address's:
 * one valid account must not reset the counter for guesses at others.
 */
export interface LoginThrottleOptions {
  /** Failed attempts per username before delays start. Default 5. */
  freeAttemptsPerUser?: number;
  /** Failed attempts per client address before delays start (high: NAT, proxies). Default 30. */
  freeAttemptsPerAddress?: number;
  /** First delay once the free attempts are used up. Default 1000 ms. */
  baseDelayMs?: number;
  /** Longest delay. Default 15 minutes. */
  maxDelayMs?: number;
  /** Counters are forgotten this long after their last attempt. Default 1 hour (at least maxDelayMs). */
  forgetAfterMs?: number;
  /** Bound on remembered usernames and addresses. Default 100000. */
  maxEntries?: number;
  /** Clock in epoch milliseconds; for tests. */
  now?: () => number;
}

export type LoginGate =
  | { allowed: true; attempt: LoginAttempt }
  | { allowed: false; retryAfterSeconds: number };

/** One started login; call exactly one of these when it is decided (none for wrong credentials). */
export interface LoginAttempt {
  /** Credentials were right: clear the username's failures. */
  succeeded(): void;
  /** The credentials were never checked (ILS down): take the attempt back. */
  undo(): void;
}

interface Counter {
  failures: number;
  last: number;
}

export class LoginThrottle {
  readonly #counters: LRUCache<string, Counter>;
  readonly #now: () => number;
  readonly #freeUser: number;
  readonly #freeAddress: number;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;

  constructor(options: LoginThrottleOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#freeUser = options.freeAttemptsPerUser ?? 5;
    this.#freeAddress = options.freeAttemptsPerAddress ?? 30;
    this.#baseDelayMs = options.baseDelayMs ?? 1000;
    this.#maxDelayMs = options.maxDelayMs ?? 15 * 60_000;
    const forget = Math.max(options.forgetAfterMs ?? 60 * 60_000, this.#maxDelayMs);
    const now = this.#now;
    this.#counters = new LRUCache<string, Counter>({ max: options.maxEntries ?? 100_000, ttl: forget, perf: { now } });
  }

  /** Asks whether a login for this username from this address may go to the ILS now. */
  begin(username: string, address?: string): LoginGate {
    const now = this.#now();
    const keys: Array<[string, number]> = [[userKey(username), this.#freeUser]];
    if (address !== undefined && address !== '') keys.push([`a:${address}`, this.#freeAddress]);

    let waitMs = 0;
    for (const [key, free] of keys) {
      const counter = this.#counters.get(key);
      if (counter === undefined) continue;
      const until = counter.last + this.#delay(counter.failures, free);
      waitMs = Math.max(waitMs, until - now);
    }
    if (waitMs > 0) return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };

    for (const [key] of keys) {
      const counter = this.#counters.get(key) ?? { failures: 0, last: now };
      this.#counters.set(key, { failures: counter.failures + 1, last: now });
    }
    let settled = false;
    const takeBack = (key: string): void => {
      const counter = this.#counters.get(key);
      if (counter === undefined) return;
      if (counter.failures <= 1) this.#counters.delete(key);
      else this.#counters.set(key, { failures: counter.failures - 1, last: counter.last });
    };
    return {
      allowed: true,
      attempt: {
        succeeded: () => {
          if (settled) return;
          settled = true;
          const [first, ...rest] = keys;
          if (first) this.#counters.delete(first[0]);
          for (const [key] of rest) takeBack(key);
        },
        undo: () => {
          if (settled) return;
          settled = true;
          for (const [key] of keys) takeBack(key);
        },
      },
    };
  }

  #delay(failures: number, free: number): number {
    if (failures < free) return 0;
    const exponent = Math.min(failures - free, 30);
    return Math.min(this.#maxDelayMs, this.#baseDelayMs * 2 ** exponent);
  }
}

function userKey(username: string): string {
  return `u:${username.normalize('NFC').trim().toLowerCase()}`;
}
