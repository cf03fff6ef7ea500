import { type CancelSignal, delay } from '../cancel-signal.js';
import type { Lease, Leases, Limiter, StateStore } from '../state/index.js';
import { addressKey } from './address-key.js';
import { SubjectKeys } from './canonical-username.js';

/**
 * Brute-force protection for login (the spec makes it a MUST), with every
 * count in the state store, so that it holds across instances and workers.
 *
 * - Accounts: failed logins are counted per canonical username (see
 *   canonical-username.ts) and, once the ILS has named the patron, per patron
 *   identifier too (a guess through the barcode counts against the account
 *   locked through the username). Past the free failures each further one
 *   doubles a lockout, up to a cap; a locked account is refused before the
 *   ILS, with the same answer as a wrong password plus Retry-After.
 * - Parallel attempts at one account: at most the free failures left (at
 *   least one) may be in flight at once; further attempts wait (bounded)
 *   until one is decided. Each attempt in flight is a lease that ends by
 *   itself at the login's deadline, so the attempts of a process that died
 *   mid-login stop counting then.
 *   Many correct logins of one account at once all succeed (the first success
 *   clears the count and lets the rest through); many guesses at once gain
 *   nothing (they lock the account while the rest wait).
 * - Addresses: failures per client address only slow that address down:
 *   while the address is in a lockout, its attempts are held back before
 *   they are checked, so a client that stops waiting gets nothing checked. A
 *   correct password is never refused because of its address: a discovery
 *   system logs all its patrons in from one address.
 * - Clients (the client credentials grant): a client id is an account of its
 *   own, keyed apart from every username (no username folds into it), and
 *   attempts from outside the client's addresses count apart from the
 *   client's own, so that no one elsewhere can lock a discovery system out.
 * - The ILS: at most `maxAttemptsPerSecond` logins per second reach it, shared
 *   fairly: an address within its fair share (the ceiling divided by the
 *   addresses trying this second) is let through up to twice the ceiling,
 *   so one set of busy addresses cannot starve the rest; attempts refused as
 *   busy count against their sender's share. An attacker needs more addresses
 *   than the ceiling to crowd others out.
 *
 * Every method rejects with StoreUnavailable when the store cannot answer:
 * the login is then refused (503), never let through unchecked.
 */

/** The options left out take these; the configuration's auth.bruteForce and auth.maxLoginsPerSecond default to them. */
export const LOGIN_THROTTLE_DEFAULTS = Object.freeze({
  freeAttemptsPerUser: 5,
  freeAttemptsPerAddress: 30,
  baseDelayMs: 1000,
  maxDelayMs: 15 * 60_000,
  forgetAfterMs: 60 * 60_000,
  maxAttemptsPerSecond: 20,
  maxSlowdownMs: 5000,
  maxQueueWaitMs: 5000,
  attemptTtlMs: 30_000,
});

/** Addresses with limits of their own (auth.allowedClientLimits for the addresses in auth.allowedClients). */
export interface TrustedClients {
  /** Whether this address is one of them. */
  includes(address: string): boolean;
  /** Failed logins before the address is slowed down; undefined: the general setting. */
  freeAttemptsPerAddress?: number | undefined;
  /** Logins per second always let through for the address; undefined: its fair share. */
  attemptsPerSecond?: number | undefined;
}

export interface LoginThrottleOptions {
  /** Failed attempts per account before lockouts start. */
  freeAttemptsPerUser?: number;
  /** Failed attempts per client address before its attempts are slowed. */
  freeAttemptsPerAddress?: number;
  /** First lockout once the free attempts are used up (whole seconds in the store). */
  baseDelayMs?: number;
  /** Longest lockout. */
  maxDelayMs?: number;
  /** Failure counts are forgotten this long after their first failure (at least maxDelayMs). */
  forgetAfterMs?: number;
  /** Login attempts per second sent to the ILS, all addresses together (each within its share up to twice this). */
  maxAttemptsPerSecond?: number;
  /** Longest an attempt from an address in lockout waits before it counts and is checked. */
  maxSlowdownMs?: number;
  /** Longest an attempt waits behind other attempts at the same account before it is answered busy. */
  maxQueueWaitMs?: number;
  /**
   * The longest a login can be in flight: the call's deadline (http.requestTimeoutMs), after which it
   * is cut off. An attempt stops counting as in flight then, whether or not its process lived to say so.
   */
  attemptTtlMs?: number;
  trusted?: TrustedClients | undefined;
  /** How often a waiting attempt looks again; for tests. */
  pollMs?: number;
  /** Key of the hashes usernames and patron ids are stored and logged as (paia.patronIdSecret); null: plain SHA-256. */
  keySecret?: string | null;
}

export type LoginGate =
  | { allowed: true; attempt: LoginAttempt }
  | {
      allowed: false;
      retryAfterSeconds: number;
      /** locked: the account is in a lockout; busy: the login ceiling (or the account's queue) is full. */
      reason: 'locked' | 'busy';
    };

/** An account or address going into a lockout, or its lockout growing: logged once each. */
export interface LockoutEvent {
  kind: 'username' | 'patron' | 'client' | 'address';
  /**
   * 12 hex digits of a keyed hash of the canonical username or patron id (barcodes stay out of logs), the
   * client id (public, RFC 6749 2.2), or the address.
   */
  subject: string;
  /** Failed attempts counted so far. */
  failures: number;
  retryAfterSeconds: number;
}

/** Counters for metrics (this process's decisions). */
export interface LoginThrottleStats {
  /** Logins whose credentials the ILS rejected. */
  failed: number;
  /** Lockouts begun or grown. */
  lockouts: number;
  /** Attempts refused because of a lockout. */
  refused: number;
  /** Attempts refused because of the login ceiling or a full queue at one account. */
  busy: number;
}

/** One started login; settle it with exactly one of these. */
export interface LoginAttempt {
  /** Right credentials for this ILS patron: the account's failures are cleared. */
  succeeded(patron: string): Promise<void>;
  /** The ILS rejected the credentials (`patron`: the patron it named, if any); returns the lockouts this begins. */
  failed(patron: string | undefined): Promise<LockoutEvent[]>;
  /** The credentials were never checked (ILS down): nothing is counted. */
  undo(): Promise<void>;
}

/**
 * Whose login an attempt is: a username as typed (a patron's account, also
 * known under the patron ids the ILS names), or a client id of the client
 * credentials grant. `fromItsHosts`: the attempt comes from one of the
 * client's allowedAddresses (and the client exists); attempts from anywhere
 * else count apart, so they cannot lock the client out.
 */
export type LoginAccount =
  | { kind: 'username'; username: string }
  | { kind: 'client'; id: string; fromItsHosts: boolean };

/** Who one attempt is about: the account, its key, the address's key, whether the address is trusted. */
interface Subject {
  account: LoginAccount;
  user: string;
  from: string | undefined;
  trusted: boolean;
}

/** Large enough never to be reached: limiters that only count. */
const UNBOUNDED = 1_000_000_000;

export class LoginThrottle {
  readonly #store: Pick<StateStore, 'remember' | 'recall'>;
  readonly #freeUser: number;
  readonly #freeAddress: number;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #forgetSeconds: number;
  readonly #ceiling: number;
  readonly #maxSlowdownMs: number;
  readonly #maxQueueWaitMs: number;
  readonly #attemptTtlMs: number;
  readonly #pollMs: number;
  readonly #trusted: TrustedClients | undefined;
  readonly #keys: SubjectKeys;
  readonly #count: {
    userFailures: Limiter;
    patronFailures: Limiter;
    addressFailures: Limiter;
    userLock: Limiter;
    patronLock: Limiter;
    addressLock: Limiter;
    addressRate: Limiter;
    activeAddresses: Limiter;
    allRate: Limiter;
  };
  /** Attempts in flight per account key, each a lease ending at the login's deadline. */
  readonly #inFlight: Leases;
  #failed = 0;
  #lockouts = 0;
  #refused = 0;
  #busy = 0;

  constructor(
    store: Pick<StateStore, 'limiter' | 'leases' | 'remember' | 'recall'>,
    options: LoginThrottleOptions = {},
  ) {
    const defaults = LOGIN_THROTTLE_DEFAULTS;
    this.#store = store;
    this.#freeUser = options.freeAttemptsPerUser ?? defaults.freeAttemptsPerUser;
    this.#freeAddress = options.freeAttemptsPerAddress ?? defaults.freeAttemptsPerAddress;
    this.#baseDelayMs = options.baseDelayMs ?? defaults.baseDelayMs;
    this.#maxDelayMs = options.maxDelayMs ?? defaults.maxDelayMs;
    this.#ceiling = options.maxAttemptsPerSecond ?? defaults.maxAttemptsPerSecond;
    this.#maxSlowdownMs = options.maxSlowdownMs ?? defaults.maxSlowdownMs;
    this.#maxQueueWaitMs = options.maxQueueWaitMs ?? defaults.maxQueueWaitMs;
    this.#attemptTtlMs = options.attemptTtlMs ?? defaults.attemptTtlMs;
    this.#pollMs = options.pollMs ?? 25;
    this.#trusted = options.trusted;
    this.#keys = new SubjectKeys(options.keySecret ?? null);
    for (const [name, value] of [
      ['freeAttemptsPerUser', this.#freeUser],
      ['freeAttemptsPerAddress', this.#freeAddress],
      ['baseDelayMs', this.#baseDelayMs],
      ['maxDelayMs', this.#maxDelayMs],
      ['maxAttemptsPerSecond', this.#ceiling],
      ['attemptTtlMs', this.#attemptTtlMs],
    ] as const) {
      if (!Number.isFinite(value) || value < 1) throw new Error(`${name} must be at least 1, got ${value}`);
    }
    const forgetMs = Math.max(options.forgetAfterMs ?? defaults.forgetAfterMs, this.#maxDelayMs);
    this.#forgetSeconds = Math.ceil(forgetMs / 1000);
    const counter = (name: string, durationSeconds: number, points = UNBOUNDED) =>
      store.limiter({ name, points, durationSeconds });
    // A lock is a key blocked for its delay: over its one point until the block ends.
    const lock = (name: string) => counter(name, this.#forgetSeconds, 1);
    this.#count = {
      userFailures: counter('login-fail-user', this.#forgetSeconds),
      patronFailures: counter('login-fail-patron', this.#forgetSeconds),
      addressFailures: counter('login-fail-address', this.#forgetSeconds),
      userLock: lock('login-lock-user'),
      patronLock: lock('login-lock-patron'),
      addressLock: lock('login-lock-address'),
      // Keyed by the second they count (see #admit); kept a little longer than it.
      addressRate: counter('login-rate-address', 2),
      activeAddresses: counter('login-rate-addresses', 2),
      allRate: counter('login-rate-all', 2, 2 * this.#ceiling),
    };
    this.#inFlight = store.leases('login-in-flight');
  }

  /**
   * Asks whether a login for this username from this address may go to the
   * ILS now; may wait, until `signal` aborts or at most: the address's
   * slowdown (maxSlowdownMs, while the address is in a lockout), then
   * maxQueueWaitMs behind other attempts at the same account.
   */
  begin(username: string, address?: string, signal?: CancelSignal): Promise<LoginGate> {
    return this.#begin({ kind: 'username', username }, address, signal);
  }

  /** The same for a client credentials login: may the client's secret be checked now? */
  beginClient(id: string, fromItsHosts: boolean, address?: string, signal?: CancelSignal): Promise<LoginGate> {
    return this.#begin({ kind: 'client', id, fromItsHosts }, address, signal);
  }

  async #begin(
    account: LoginAccount,
    address: string | undefined,
    signal: CancelSignal | undefined,
  ): Promise<LoginGate> {
    const user =
      account.kind === 'username'
        ? this.#keys.username(account.username)
        : this.#keys.client(account.id, account.fromItsHosts);
    // Counted as DAIA counts them: IPv6 by its /64, which one subscriber can pick addresses from at will.
    const from = address === undefined || address.trim() === '' ? undefined : addressKey(address);
    const trusted = address !== undefined && from !== undefined && (this.#trusted?.includes(address) ?? false);
    const subject: Subject = { account, user, from, trusted };
    const patron = account.kind === 'username' ? await this.#store.recall(`login-patron:${user}`) : null;

    let lockedMs = await this.#lockedFor(subject, patron);
    if (lockedMs > 0) return this.#locked(lockedMs);
    // An address in a lockout waits first, before its attempt counts anywhere: it holds no place under the ceiling
    // and no lease of the account meanwhile (so it crowds out nobody), and a client that stops waiting gets nothing
    // checked. What comes out of the wait goes through every check as if it had just arrived.
    const slowdownMs = from === undefined ? 0 : Math.min(this.#maxSlowdownMs, await this.#lockLeft('address', from));
    if (slowdownMs > 0) {
      await delay(slowdownMs, signal);
      // The call is over (its client went, its deadline passed): nobody reads this answer.
      if (signal?.aborted) return { allowed: false, reason: 'busy', retryAfterSeconds: 1 };
      lockedMs = await this.#lockedFor(subject, patron);
      if (lockedMs > 0) return this.#locked(lockedMs);
    }
    if (!(await this.#admit(from, trusted))) {
      this.#busy += 1;
      return { allowed: false, reason: 'busy', retryAfterSeconds: 1 };
    }

    const giveUpAt = Date.now() + this.#maxQueueWaitMs;
    for (;;) {
      // In flight first, failures second: a failure being recorded meanwhile is seen twice rather than not at all.
      const lease = await this.#inFlight.take(user, this.#attemptTtlMs);
      let admitted = false;
      try {
        const failures = (await this.#count.userFailures.peek(user))?.consumed ?? 0;
        // Past its free failures (its lockout over), an account is tried one attempt at a time.
        if (lease.held <= Math.max(1, this.#freeUser - failures)) {
          // The attempt that made the count reach the free ones may have locked the account while this one waited.
          const lockedNow = failures < this.#freeUser ? 0 : await this.#lockedFor(subject, patron);
          if (lockedNow > 0) return this.#locked(lockedNow);
          admitted = true;
          return { allowed: true, attempt: this.#attempt(subject, lease) };
        }
      } finally {
        // Whatever ends this round (a refusal, a store failure) but an admission gives the lease back.
        if (!admitted) await lease.release().catch(() => {});
      }
      const nowLocked = await this.#lockedFor(subject, patron);
      if (nowLocked > 0) return this.#locked(nowLocked);
      if (Date.now() >= giveUpAt || signal?.aborted) {
        this.#busy += 1;
        return { allowed: false, reason: 'busy', retryAfterSeconds: 1 };
      }
      await delay(this.#pollMs, signal);
    }
  }

  #attempt(subject: Subject, lease: Lease): LoginAttempt {
    const { account, user, from } = subject;
    let settled = false;
    const settle = () => {
      if (settled) return false;
      settled = true;
      return true;
    };
    // The lease is given back however the settling ends, a store failure included.
    const releasing = async <T>(work: () => Promise<T>): Promise<T> => {
      try {
        return await work();
      } finally {
        await lease.release().catch(() => {});
      }
    };
    return {
      succeeded: async (patron) => {
        if (!settle()) return;
        await releasing(async () => {
          const resets = [this.#count.userFailures.reset(user)];
          // A client's success names no patron account to clear or to remember.
          if (account.kind === 'username') {
            const known = this.#keys.patron(patron);
            resets.push(
              this.#count.patronFailures.reset(known),
              this.#store.remember(`login-patron:${user}`, known, this.#forgetSeconds),
            );
          }
          await Promise.all(resets);
        });
      },
      failed: async (patron) => {
        if (!settle()) return [];
        this.#failed += 1;
        const events = await releasing(async () => {
          const found: LockoutEvent[] = [];
          const failures = (await this.#count.userFailures.take(user)).consumed;
          const userEvent = await this.#lockIfDue(account.kind, user, failures, this.#freeUser);
          if (userEvent) {
            const named = account.kind === 'username' ? this.#keys.digest(account.username) : account.id;
            found.push({ ...userEvent, subject: named });
          }
          if (account.kind === 'username' && patron !== undefined && patron !== '') {
            const known = this.#keys.patron(patron);
            await this.#store.remember(`login-patron:${user}`, known, this.#forgetSeconds);
            const patronFailures = (await this.#count.patronFailures.take(known)).consumed;
            const patronEvent = await this.#lockIfDue('patron', known, patronFailures, this.#freeUser);
            if (patronEvent) found.push({ ...patronEvent, subject: this.#keys.digest(patron) });
          }
          if (from !== undefined) {
            const addressFailures = (await this.#count.addressFailures.take(from)).consumed;
            const free = subject.trusted
              ? (this.#trusted?.freeAttemptsPerAddress ?? this.#freeAddress)
              : this.#freeAddress;
            const addressEvent = await this.#lockIfDue('address', from, addressFailures, free);
            if (addressEvent) found.push({ ...addressEvent, subject: from });
          }
          return found;
        });
        this.#lockouts += events.length;
        return events;
      },
      undo: async () => {
        if (!settle()) return;
        await lease.release();
      },
    };
  }

  /** Locks `key` when its failures have reached the free ones; the event to log, or null. */
  async #lockIfDue(
    kind: LockoutEvent['kind'],
    key: string,
    failures: number,
    free: number,
  ): Promise<Omit<LockoutEvent, 'subject'> | null> {
    if (failures < free) return null;
    const delayMs = Math.min(this.#maxDelayMs, this.#baseDelayMs * 2 ** Math.min(failures - free, 30));
    const seconds = Math.max(1, Math.ceil(delayMs / 1000));
    await this.#lockOf(kind).block(key, seconds);
    return { kind, failures, retryAfterSeconds: seconds };
  }

  #lockOf(kind: LockoutEvent['kind']): Limiter {
    // A client's lock lives beside the usernames' under a key no username can have (SubjectKeys.client).
    return kind === 'username' || kind === 'client'
      ? this.#count.userLock
      : kind === 'patron'
        ? this.#count.patronLock
        : this.#count.addressLock;
  }

  /** Milliseconds left of a lock on `key`; 0 when not locked. */
  async #lockLeft(kind: LockoutEvent['kind'], key: string): Promise<number> {
    const count = await this.#lockOf(kind).peek(key);
    return count !== null && count.consumed > 1 ? Math.max(0, count.msBeforeReset) : 0;
  }

  /**
   * The longest lock on the account: by username, by the patron the username
   * is known to name, and by the username taken as a patron id (a barcode
   * typed in place of the username the lockout began with); a client's own.
   */
  async #lockedFor({ account, user }: Subject, patron: string | null): Promise<number> {
    if (account.kind === 'client') return this.#lockLeft('client', user);
    const asPatron = this.#keys.patron(account.username);
    const locks = await Promise.all([
      this.#lockLeft('username', user),
      this.#lockLeft('patron', asPatron),
      patron === null || patron === asPatron ? 0 : this.#lockLeft('patron', patron),
    ]);
    return Math.max(...locks);
  }

  #locked(ms: number): LoginGate {
    this.#refused += 1;
    return { allowed: false, reason: 'locked', retryAfterSeconds: Math.max(1, Math.ceil(ms / 1000)) };
  }

  /**
   * The login ceiling, shared fairly: true when this attempt may go to the
   * ILS. Windows are whole seconds of the clock, the same for every instance.
   * Every attempt counts against its address's share, admitted or not; an
   * attempt beyond its share is refused without touching the global count
   * once that is full, so a flood does not crowd out the count itself.
   */
  async #admit(address: string | undefined, trusted: boolean): Promise<boolean> {
    const second = Math.floor(Date.now() / 1000);
    const sender = `${address ?? 'unknown'}@${second}`;
    const everyone = `all@${second}`;
    const mine = (await this.#count.addressRate.take(sender)).consumed;
    const own = trusted ? this.#trusted?.attemptsPerSecond : undefined;
    if (own !== undefined) {
      if (mine <= own) {
        await this.#count.allRate.take(everyone);
        return true;
      }
    }
    const active =
      mine === 1
        ? (await this.#count.activeAddresses.take(everyone)).consumed
        : ((await this.#count.activeAddresses.peek(everyone))?.consumed ?? 1);
    const withinShare = mine <= Math.max(1, Math.floor(this.#ceiling / Math.max(1, active)));
    const load = (await this.#count.allRate.peek(everyone))?.consumed ?? 0;
    if (load >= this.#ceiling && !withinShare) return false;
    // Attempts within their share may go beyond the ceiling, up to twice it (the limiter's points).
    const taken = await this.#count.allRate.take(everyone);
    if (taken.within && (taken.consumed <= this.#ceiling || withinShare)) return true;
    await this.#count.allRate.give(everyone);
    return false;
  }

  /** Counters for metrics. */
  stats(): LoginThrottleStats {
    return { failed: this.#failed, lockouts: this.#lockouts, refused: this.#refused, busy: this.#busy };
  }
}
