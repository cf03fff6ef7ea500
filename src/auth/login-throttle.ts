import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/**
 * Brute-force protection for login (the spec makes it a MUST): failed
 * attempts are counted per username and per client address; past a number
 * of free attempts each further one doubles a lockout delay, up to a cap.
 *
 * For its username, every attempt counts as failed from the moment it
 * starts and is taken back only when the credentials turn out right (or the
 * ILS could not be asked), so firing many guesses at one account in
 * parallel gains nothing. For its address, an attempt counts once the ILS
 * has rejected it: a discovery system logs many patrons in from one
 * address at the same time, and those logins in flight must not lock each
 * other out. Parallel guesses at many accounts from one address are bounded
 * by the global ceiling below until their failures lock the address.
 * A successful login clears its username's count but not its address's:
 * one valid account must not reset the counter for guesses at others.
 *
 * On top of that a global ceiling on login attempts per second protects the
 * ILS from a distributed guessing run (many addresses, many usernames): an
 * attempt beyond it is refused as "busy" (503 + Retry-After), is not
 * counted as a failure, and never reaches the ILS. Attempts refused by a
 * lockout do not count towards the ceiling (they cost the ILS nothing).
 *
 * Every lockout (a username or address going into a delay, or its delay
 * growing) is reported once in the refusing gate's `lockouts` (for a warn
 * log line) and counted in stats().lockouts; further refusals during the
 * same delay are only counted in stats().refused, so an attacker cannot
 * flood the log.
 */

/** The options left out take these; the configuration's auth.bruteForce and auth.maxLoginsPerSecond default to them. */
export const LOGIN_THROTTLE_DEFAULTS = Object.freeze({
  freeAttemptsPerUser: 5,
  freeAttemptsPerAddress: 30,
  baseDelayMs: 1000,
  maxDelayMs: 15 * 60_000,
  forgetAfterMs: 60 * 60_000,
  maxAttemptsPerSecond: 20,
  maxEntries: 100_000,
});

export interface LoginThrottleOptions {
  /** Failed attempts per username before delays start. */
  freeAttemptsPerUser?: number;
  /** Failed attempts per client address before delays start (high: NAT, proxies). */
  freeAttemptsPerAddress?: number;
  /** First delay once the free attempts are used up. */
  baseDelayMs?: number;
  /** Longest delay. */
  maxDelayMs?: number;
  /** Counters are forgotten this long after their last attempt (at least maxDelayMs). */
  forgetAfterMs?: number;
  /** Login attempts per second, all users and addresses together, allowed to go to the ILS. */
  maxAttemptsPerSecond?: number;
  /** Bound on remembered usernames and addresses. */
  maxEntries?: number;
  /** Clock in epoch milliseconds; for tests. */
  now?: () => number;
}

export type LoginGate =
  | { allowed: true; attempt: LoginAttempt }
  | {
      allowed: false;
      retryAfterSeconds: number;
      /** locked: this username or address is in a lockout delay; busy: the global ceiling is reached. */
      reason: 'locked' | 'busy';
      /** Lockouts that begin (or grow) with this refusal: log each once. */
      lockouts: LockoutEvent[];
    };

/** A username or client address going into a lockout delay. */
export interface LockoutEvent {
  kind: 'username' | 'address';
  /** A short SHA-256 prefix of the normalised username (barcodes stay out of logs), or the address as is. */
  subject: string;
  /** Failed attempts counted so far. */
  failures: number;
  retryAfterSeconds: number;
}

/** Counters for metrics. */
export interface LoginThrottleStats {
  /** Logins whose credentials the ILS rejected (reported with LoginAttempt.failed()). */
  failed: number;
  /** Lockouts begun (each escalation of a delay counts once). */
  lockouts: number;
  /** Attempts refused because of a lockout. */
  refused: number;
  /** Attempts refused because of the global ceiling. */
  busy: number;
  /** Usernames and addresses currently remembered. */
  tracked: number;
}

/**
 * One started login; call at most one of these when it is decided. For its
 * username the attempt counts as failed from the start, so leaving it
 * unsettled keeps it counted there; its address counts it only on failed().
 */
interface LoginAttempt {
  /** Credentials were right: clear the username's failures. */
  succeeded(): void;
  /** The ILS rejected the credentials: the attempt stays counted for the username and now counts for the address; counted in stats().failed. */
  failed(): void;
  /** The credentials were never checked (ILS down): take the attempt back. */
  undo(): void;
}

interface Counter {
  failures: number;
  last: number;
  /** The failure count a lockout was last reported at (0: none). */
  reported?: number;
}

/** The first 12 hex digits of SHA-256 of a normalised username: enough to correlate log lines, not to read a barcode. */
export function usernameDigest(username: string): string {
  return createHash('sha256').update(normalizeUsername(username)).digest('hex').slice(0, 12);
}

export class LoginThrottle {
  readonly #counters: LRUCache<string, Counter>;
  readonly #now: () => number;
  readonly #freeUser: number;
  readonly #freeAddress: number;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #maxPerSecond: number;
  /** Start (epoch ms) and count of the current one-second window of the global ceiling. */
  #window = { start: 0, count: 0 };
  #lockouts = 0;
  #failed = 0;
  #refused = 0;
  #busy = 0;

  constructor(options: LoginThrottleOptions = {}) {
    this.#now = options.now ?? Date.now;
    const defaults = LOGIN_THROTTLE_DEFAULTS;
    this.#freeUser = options.freeAttemptsPerUser ?? defaults.freeAttemptsPerUser;
    this.#freeAddress = options.freeAttemptsPerAddress ?? defaults.freeAttemptsPerAddress;
    this.#baseDelayMs = options.baseDelayMs ?? defaults.baseDelayMs;
    this.#maxDelayMs = options.maxDelayMs ?? defaults.maxDelayMs;
    this.#maxPerSecond = options.maxAttemptsPerSecond ?? defaults.maxAttemptsPerSecond;
    for (const [name, value] of [
      ['freeAttemptsPerUser', this.#freeUser],
      ['freeAttemptsPerAddress', this.#freeAddress],
      ['baseDelayMs', this.#baseDelayMs],
      ['maxDelayMs', this.#maxDelayMs],
      ['maxAttemptsPerSecond', this.#maxPerSecond],
    ] as const) {
      if (!Number.isFinite(value) || value < 1) throw new Error(`${name} must be at least 1, got ${value}`);
    }
    const forget = Math.max(options.forgetAfterMs ?? defaults.forgetAfterMs, this.#maxDelayMs);
    const now = this.#now;
    this.#counters = new LRUCache<string, Counter>({
      max: options.maxEntries ?? defaults.maxEntries,
      ttl: forget,
      perf: { now },
    });
  }

  /** Asks whether a login for this username from this address may go to the ILS now. */
  begin(username: string, address?: string): LoginGate {
    const now = this.#now();
    const keys: Array<[string, number]> = [[userKey(username), this.#freeUser]];
    if (address !== undefined && address !== '') keys.push([`a:${address}`, this.#freeAddress]);

    let waitMs = 0;
    const locked: Array<{ key: string; counter: Counter; waitMs: number }> = [];
    for (const [key, free] of keys) {
      const counter = this.#counters.get(key);
      if (counter === undefined) continue;
      const until = counter.last + this.#delay(counter.failures, free);
      if (until - now > 0) locked.push({ key, counter, waitMs: until - now });
      waitMs = Math.max(waitMs, until - now);
    }
    if (waitMs > 0) {
      this.#refused += 1;
      const lockouts: LockoutEvent[] = [];
      for (const { key, counter, waitMs: wait } of locked) {
        if (counter.reported === counter.failures) continue;
        // Mutated in place: a set() would refresh the entry's TTL and LRU position for a refused attempt.
        counter.reported = counter.failures;
        this.#lockouts += 1;
        lockouts.push({
          kind: key.startsWith('u:') ? 'username' : 'address',
          subject: key.startsWith('u:') ? usernameDigest(username) : key.slice(2),
          failures: counter.failures,
          retryAfterSeconds: Math.max(1, Math.ceil(wait / 1000)),
        });
      }
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)), reason: 'locked', lockouts };
    }

    if (now - this.#window.start >= 1000) this.#window = { start: now, count: 0 };
    if (this.#window.count >= this.#maxPerSecond) {
      this.#busy += 1;
      return { allowed: false, retryAfterSeconds: 1, reason: 'busy', lockouts: [] };
    }
    this.#window.count += 1;

    // Only the username counts an attempt as failed while it is under way (parallel guesses at one account
    // gain nothing). An address counts failures once they happen: a discovery system logs many patrons in
    // from one address at once, and its correct logins in flight must not lock them all out.
    const [user, address_] = keys;
    this.#count(user![0], now);
    let settled = false;
    return {
      allowed: true,
      attempt: {
        succeeded: () => {
          if (settled) return;
          settled = true;
          this.#counters.delete(user![0]);
        },
        failed: () => {
          if (settled) return;
          settled = true;
          this.#failed += 1;
          if (address_) this.#count(address_[0], this.#now());
        },
        undo: () => {
          if (settled) return;
          settled = true;
          const counter = this.#counters.get(user![0]);
          if (counter === undefined) return;
          if (counter.failures <= 1) this.#counters.delete(user![0]);
          else this.#counters.set(user![0], { ...counter, failures: counter.failures - 1 });
        },
      },
    };
  }

  #count(key: string, now: number): void {
    const counter = this.#counters.get(key) ?? { failures: 0, last: now };
    this.#counters.set(key, {
      failures: counter.failures + 1,
      last: now,
      ...(counter.reported ? { reported: counter.reported } : {}),
    });
  }

  /** Counters for metrics (rejected credentials, lockouts, refusals, remembered keys). */
  stats(): LoginThrottleStats {
    return {
      failed: this.#failed,
      lockouts: this.#lockouts,
      refused: this.#refused,
      busy: this.#busy,
      tracked: this.#counters.size,
    };
  }

  #delay(failures: number, free: number): number {
    if (failures < free) return 0;
    const exponent = Math.min(failures - free, 30);
    return Math.min(this.#maxDelayMs, this.#baseDelayMs * 2 ** exponent);
  }
}

function normalizeUsername(username: string): string {
  return username.normalize('NFC').trim().toLowerCase();
}

function userKey(username: string): string {
  return `u:${normalizeUsername(username)}`;
}
