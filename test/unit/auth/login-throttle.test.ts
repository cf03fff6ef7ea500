import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { canonicalUsername, SubjectKeys } from '../../../src/auth/canonical-username.js';
import {
  type LoginAttempt,
  type LoginGate,
  LoginThrottle,
  type LoginThrottleOptions,
} from '../../../src/auth/login-throttle.js';
import { Cancellation } from '../../../src/cancel-signal.js';
import { StoreUnavailable } from '../../../src/state/errors.js';
import { MemoryStore } from '../../../src/state/memory/index.js';

/** A throttle on its own in-process store; the limits not given are generous. */
function throttle(options: LoginThrottleOptions = {}): LoginThrottle {
  return new LoginThrottle(new MemoryStore({ maxSessions: 100, maxSessionsPerPatron: 10 }), {
    freeAttemptsPerUser: 3,
    freeAttemptsPerAddress: 1000,
    maxAttemptsPerSecond: 10_000,
    pollMs: 5,
    ...options,
  });
}

function allowed(gate: LoginGate): LoginAttempt {
  if (!gate.allowed) throw new Error(`refused: ${gate.reason}`);
  return gate.attempt;
}

/** The slowdown the address tests give an address in lockout, and what a slowed begin takes at least. */
const SLOWDOWN_MS = 300;
const SLOWED_MS = 280;

/** begin() and how long it took: a slowed address waits its slowdown in it. */
async function timedBegin(t: LoginThrottle, username: string, address: string, signal?: Cancellation) {
  const started = performance.now();
  const gate = await t.begin(username, address, signal);
  return { gate, ms: performance.now() - started };
}

/** One login that the ILS rejects (naming `patron`, if given). */
async function fail(t: LoginThrottle, username: string, address = '192.0.2.1', patron?: string) {
  return allowed(await t.begin(username, address)).failed(patron);
}

afterEach(() => {
  vi.useRealTimers();
});

describe('canonicalUsername', () => {
  it('folds case, accents, compatibility forms and invisible characters, and trims', () => {
    for (const variant of [
      'alice',
      'ALICE',
      'ÄLICE',
      'Alíce',
      ' alice\t',
      'Ａｌｉｃｅ',
      'al\u200Bice',
      'a\u00ADlice',
      'ａＬＩＣＥ',
    ]) {
      expect(canonicalUsername(variant), variant).toBe('alice');
    }
    expect(canonicalUsername('STRAẞE')).toBe(canonicalUsername('strasse'));
    expect(canonicalUsername('bob')).not.toBe(canonicalUsername('alice'));
  });
});

describe('LoginThrottle: accounts', () => {
  it('allows the free failures, then locks with doubling delays up to the cap', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const t = throttle({ freeAttemptsPerUser: 2, baseDelayMs: 1000, maxDelayMs: 4000 });
    expect(await fail(t, 'alice')).toEqual([]);
    expect(await fail(t, 'alice')).toEqual([
      { kind: 'username', subject: new SubjectKeys().digest('alice'), failures: 2, retryAfterSeconds: 1 },
    ]);
    expect(await t.begin('alice')).toEqual({ allowed: false, reason: 'locked', retryAfterSeconds: 1 });
    vi.setSystemTime(Date.now() + 1001);
    expect(await fail(t, 'alice')).toMatchObject([{ failures: 3, retryAfterSeconds: 2 }]);
    vi.setSystemTime(Date.now() + 2001);
    expect(await fail(t, 'alice')).toMatchObject([{ failures: 4, retryAfterSeconds: 4 }]);
    vi.setSystemTime(Date.now() + 4001);
    expect(await fail(t, 'alice')).toMatchObject([{ failures: 5, retryAfterSeconds: 4 }]); // the cap
    expect(t.stats()).toMatchObject({ failed: 5, lockouts: 4, refused: 1 });
  });

  it('counts every spelling the ILS may take for one account against it: a variant never gets free guesses of its own', async () => {
    const t = throttle({ freeAttemptsPerUser: 3, baseDelayMs: 60_000 });
    await fail(t, 'ÄLICE');
    await fail(t, ' Alice ');
    await fail(t, 'Ａｌｉｃｅ');
    for (const variant of ['alice', 'ALICE', 'al\u200Bice', 'Alíce']) {
      expect(await t.begin(variant), variant).toMatchObject({ allowed: false, reason: 'locked' });
    }
    expect((await t.begin('bob')).allowed).toBe(true);
  });

  it('counts against the patron the ILS named, so the barcode and other usernames of a locked account are locked too', async () => {
    const t = throttle({ freeAttemptsPerUser: 2, baseDelayMs: 60_000 });
    await fail(t, 'alice', '192.0.2.1', '23529000445172');
    const events = await fail(t, 'alice', '192.0.2.1', '23529000445172');
    expect(events.map((event) => event.kind)).toEqual(['username', 'patron']);
    expect(JSON.stringify(events)).not.toContain('23529000445172');
    expect(await t.begin('23529000445172')).toMatchObject({ allowed: false, reason: 'locked' });
    expect(await t.begin(' 23529000445172 ')).toMatchObject({ allowed: false, reason: 'locked' });
  });

  it('a success clears the account; an attempt the ILS never judged counts nothing', async () => {
    const t = throttle({ freeAttemptsPerUser: 2, baseDelayMs: 60_000 });
    await fail(t, 'alice');
    await allowed(await t.begin('alice')).succeeded('alice');
    await fail(t, 'alice');
    await allowed(await t.begin('alice')).undo();
    await allowed(await t.begin('alice')).undo();
    expect((await t.begin('alice')).allowed).toBe(true);
    expect(t.stats().failed).toBe(2);
  });

  it('lets many correct logins of one account at once all through, beyond the free failures', async () => {
    const t = throttle({ freeAttemptsPerUser: 5 });
    const settled = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const attempt = allowed(await t.begin('alice'));
        await new Promise((resolve) => setTimeout(resolve, 10)); // the ILS's answer
        await attempt.succeeded('alice');
        return true;
      }),
    );
    expect(settled).toHaveLength(12);
    expect(t.stats()).toMatchObject({ refused: 0, busy: 0 });
  });

  it('lets no more parallel guesses at one account reach the ILS than its free failures', async () => {
    const t = throttle({ freeAttemptsPerUser: 5, baseDelayMs: 60_000 });
    let judged = 0;
    const gates = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const gate = await t.begin('alice');
        if (!gate.allowed) return gate.reason;
        judged += 1;
        await new Promise((resolve) => setTimeout(resolve, 10));
        await gate.attempt.failed(undefined);
        return 'judged';
      }),
    );
    expect(judged).toBe(5);
    expect(gates.filter((outcome) => outcome === 'locked')).toHaveLength(35);
  });
});

describe('LoginThrottle: attempts in flight', () => {
  it('stops counting the attempts of logins that never settled (their process died) at the login deadline', async () => {
    const t = throttle({ freeAttemptsPerUser: 3, attemptTtlMs: 200, maxQueueWaitMs: 3000 });
    // Three attempts whose process is gone: none of them will ever say how it ended.
    for (let i = 0; i < 3; i++) allowed(await t.begin('alice'));
    const started = Date.now();
    const next = allowed(await t.begin('alice'));
    // Let in once the dead attempts' leases ran out, long before the queue wait gives up.
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    expect(Date.now() - started).toBeLessThan(2000);
    await next.succeeded('alice');
    expect(t.stats().busy).toBe(0);
  });
});

describe('LoginThrottle: clients', () => {
  it('keeps a client apart from every username: no folding of client<id> reaches its lockout', async () => {
    const t = throttle({ freeAttemptsPerUser: 2, baseDelayMs: 60_000 });
    for (const username of [
      'clientvictim',
      'CLIENTVICTIM',
      'ｃlientvictim',
      'client\0victim',
      'client victim',
      'victim',
    ]) {
      for (let i = 0; i < 3; i++) {
        const gate = await t.begin(username);
        if (gate.allowed) await gate.attempt.failed(undefined);
      }
    }
    await allowed(await t.beginClient('victim', true)).undo();
    // The same attack at the client itself locks it: the test above is not passing for want of a lockout.
    for (let i = 0; i < 2; i++) await allowed(await t.beginClient('victim', true)).failed(undefined);
    expect(await t.beginClient('victim', true)).toMatchObject({ allowed: false, reason: 'locked' });
  });

  it('locks a client out by its own failures, but not through failures from elsewhere, and logs it by its id', async () => {
    const t = throttle({ freeAttemptsPerUser: 2, baseDelayMs: 60_000 });
    for (let i = 0; i < 4; i++) {
      const gate = await t.beginClient('vufind', false, '198.51.100.7');
      if (gate.allowed) await gate.attempt.failed(undefined);
    }
    expect(await t.beginClient('vufind', false, '198.51.100.7')).toMatchObject({ allowed: false, reason: 'locked' });
    await allowed(await t.beginClient('vufind', true, '192.0.2.10')).failed(undefined);
    const events = await allowed(await t.beginClient('vufind', true, '192.0.2.10')).failed(undefined);
    expect(events).toEqual([{ kind: 'client', subject: 'vufind', failures: 2, retryAfterSeconds: 60 }]);
    expect(await t.beginClient('vufind', true, '192.0.2.10')).toMatchObject({ allowed: false, reason: 'locked' });
  });
});

describe('LoginThrottle: addresses', () => {
  it("slows an address's attempts past its free failures, but never refuses a login from it", async () => {
    const t = throttle({ freeAttemptsPerAddress: 3, maxSlowdownMs: SLOWDOWN_MS, baseDelayMs: 60_000 });
    for (const user of ['u1', 'u2']) expect(await fail(t, user, '198.51.100.1')).toEqual([]);
    expect(await fail(t, 'u3', '198.51.100.1')).toEqual([
      { kind: 'address', subject: '198.51.100.1', failures: 3, retryAfterSeconds: 60 },
    ]);
    for (let i = 0; i < 3; i++) {
      const { gate, ms } = await timedBegin(t, `patron${i}`, '198.51.100.1');
      expect(ms).toBeGreaterThanOrEqual(SLOWED_MS);
      await allowed(gate).succeeded(`patron${i}`);
    }
    expect((await timedBegin(t, 'u4', '198.51.100.2')).ms).toBeLessThan(SLOWED_MS);
    // IPv4-mapped is the same address.
    expect((await timedBegin(t, 'u5', '::ffff:198.51.100.1')).ms).toBeGreaterThanOrEqual(SLOWED_MS);
  });

  it('gives addresses named as trusted their own free failures', async () => {
    const t = throttle({
      freeAttemptsPerAddress: 2,
      maxSlowdownMs: SLOWDOWN_MS,
      trusted: { includes: (address) => address === '10.0.0.5', freeAttemptsPerAddress: 100 },
    });
    for (let i = 0; i < 5; i++) await fail(t, `user${i}`, '10.0.0.5');
    expect((await timedBegin(t, 'user9', '10.0.0.5')).ms).toBeLessThan(SLOWED_MS);
    for (let i = 0; i < 2; i++) await fail(t, `user${i}`, '10.0.0.6');
    expect((await timedBegin(t, 'user9', '10.0.0.6')).ms).toBeGreaterThanOrEqual(SLOWED_MS);
  });

  it('lets an attempt that waits out its slowdown hold no lease and no place under the ceiling: a victim from elsewhere is not crowded out', async () => {
    const t = throttle({
      freeAttemptsPerUser: 5,
      freeAttemptsPerAddress: 1,
      maxSlowdownMs: 2000,
      baseDelayMs: 60_000,
      maxQueueWaitMs: 500,
      maxAttemptsPerSecond: 5,
    });
    await fail(t, 'someone', '203.0.113.9');
    // Five attempts at the victim from the slowed address, all waiting out their slowdown now ...
    const waiting = Array.from({ length: 5 }, () => t.begin('victim', '203.0.113.9'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    // ... take neither the victim's leases nor the second's logins: the victim's own login goes through at once.
    const { gate, ms } = await timedBegin(t, 'victim', '192.0.2.50');
    expect(gate.allowed).toBe(true);
    expect(ms).toBeLessThan(400);
    await allowed(gate).succeeded('victim');
    for (const each of await Promise.all(waiting)) if (each.allowed) await each.attempt.undo();
  });

  it('lets an attempt whose call ends during its slowdown go nowhere: nothing counted, nothing checked', async () => {
    const t = throttle({ freeAttemptsPerAddress: 1, maxSlowdownMs: 2000, baseDelayMs: 60_000 });
    await fail(t, 'someone', '203.0.113.9');
    const call = new Cancellation();
    setTimeout(() => call.abort('client-gone'), 50);
    const { gate, ms } = await timedBegin(t, 'alice', '203.0.113.9', call);
    expect(gate.allowed).toBe(false);
    expect(ms).toBeLessThan(1000);
    expect(t.stats()).toMatchObject({ busy: 0, refused: 0 });
  });
});

describe('LoginThrottle: review findings', () => {
  it('counts an IPv6 address by its /64: failures spread over the block slow a neighbour in it', async () => {
    const t = throttle({ freeAttemptsPerAddress: 30, maxSlowdownMs: SLOWDOWN_MS, baseDelayMs: 60_000 });
    for (let i = 1; i <= 40; i++) await fail(t, `user${i}`, `2001:db8::${i.toString(16)}`);
    expect((await timedBegin(t, 'neighbour', '2001:db8::ffff')).ms).toBeGreaterThanOrEqual(SLOWED_MS);
    expect((await timedBegin(t, 'elsewhere', '2001:db8:1::1')).ms).toBeLessThan(SLOWED_MS);
  });

  it('gives an in-flight slot back when the store fails in the middle of a begin, so the next correct login is not kept waiting', async () => {
    const store = new MemoryStore({ maxSessions: 10, maxSessionsPerPatron: 10 });
    let failPeeks = 0;
    const flaky = {
      remember: store.remember.bind(store),
      recall: store.recall.bind(store),
      leases: store.leases.bind(store),
      limiter: (options: Parameters<typeof store.limiter>[0]) => {
        const limiter = store.limiter(options);
        if (options.name !== 'login-fail-user') return limiter;
        const peek = limiter.peek.bind(limiter);
        limiter.peek = async (key: string) => {
          if (failPeeks > 0) {
            failPeeks -= 1;
            throw new StoreUnavailable('timeout', 'the memory state store did not answer in time');
          }
          return peek(key);
        };
        return limiter;
      },
    };
    const t = new LoginThrottle(flaky, { freeAttemptsPerUser: 1, maxQueueWaitMs: 300, pollMs: 5 });
    failPeeks = 3;
    for (let i = 0; i < 3; i++) await expect(t.begin('alice')).rejects.toBeInstanceOf(StoreUnavailable);
    const attempt = allowed(await t.begin('alice'));
    await attempt.succeeded('alice');
    expect(t.stats().busy).toBe(0);
  });

  it('keys usernames and patron ids with the secret when there is one, folded alike', () => {
    const plain = new SubjectKeys();
    const keyed = new SubjectKeys('x'.repeat(40));
    expect(keyed.digest('23529000445172')).not.toBe(plain.digest('23529000445172'));
    expect(keyed.username('ÄLICE')).toBe(keyed.username('alice'));
    expect(keyed.patron('AB123')).toBe(keyed.patron('ab123'));
    expect(keyed.username('alice')).not.toBe(keyed.patron('alice'));
  });
});

describe('LoginThrottle: the login ceiling', () => {
  // The ceiling counts whole seconds of the clock: each test runs inside one.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_800_000_000_000);
  });

  it('refuses an address beyond its fair share as busy, while another address still gets through', async () => {
    const t = throttle({ maxAttemptsPerSecond: 4 });
    const flood = [];
    for (let i = 0; i < 10; i++) flood.push(await t.begin(`guess${i}`, '203.0.113.9'));
    expect(flood.filter((gate) => gate.allowed)).toHaveLength(4);
    expect(flood.at(-1)).toEqual({ allowed: false, reason: 'busy', retryAfterSeconds: 1 });
    expect((await t.begin('alice', '192.0.2.50')).allowed).toBe(true);
    expect(t.stats().busy).toBe(6);
  });

  it('keeps room for a quiet address when many addresses fill the ceiling', async () => {
    const t = throttle({ maxAttemptsPerSecond: 6 });
    const attackers = ['203.0.113.1', '203.0.113.2', '203.0.113.3'];
    for (let round = 0; round < 10; round++) {
      for (const address of attackers) await t.begin(`guess${round}`, address);
    }
    expect((await t.begin('alice', '192.0.2.50')).allowed).toBe(true);
    // Refused attempts count against their sender: the flooders stay beyond their share this second.
    expect((await t.begin('guess-late', attackers[0])).allowed).toBe(false);
  });

  it('lets a trusted address its own logins per second', async () => {
    const t = throttle({
      maxAttemptsPerSecond: 2,
      trusted: { includes: (address) => address === '10.0.0.5', attemptsPerSecond: 8 },
    });
    for (let i = 0; i < 8; i++) expect((await t.begin(`patron${i}`, '10.0.0.5')).allowed, `login ${i}`).toBe(true);
    expect((await t.begin('patron9', '10.0.0.5')).allowed).toBe(false);
  });

  it('refuses nonsense limits', () => {
    expect(() => throttle({ maxAttemptsPerSecond: 0 })).toThrow(/maxAttemptsPerSecond/);
  });
});
