import { describe, expect, it } from 'vitest';
import { LoginThrottle, usernameDigest } from '../../../src/auth/login-throttle.js';
import { DEFAULT_DENY_LIST, PasswordPolicy } from '../../../src/auth/password-policy.js';
import { TokenRateLimit } from '../../../src/auth/token-rate-limit.js';
import { MemoryStore } from '../../../src/state/memory/index.js';
import { LruSessionStore } from '../../../src/state/memory/sessions.js';

describe('LoginThrottle: global ceiling, lockout events, stats', () => {
  it('refuses attempts beyond maxAttemptsPerSecond as busy (not counted as failures), and lets them through a second later', () => {
    let now = 1_000_000;
    const throttle = new LoginThrottle({
      maxAttemptsPerSecond: 3,
      freeAttemptsPerUser: 100,
      freeAttemptsPerAddress: 100,
      now: () => now,
    });
    for (let i = 0; i < 3; i++) expect(throttle.begin(`u${i}`, '10.0.0.1').allowed).toBe(true);
    expect(throttle.begin('u9', '10.0.0.2')).toEqual({
      allowed: false,
      retryAfterSeconds: 1,
      reason: 'busy',
      lockouts: [],
    });
    now += 1000;
    expect(throttle.begin('u9', '10.0.0.2').allowed).toBe(true);
    expect(throttle.stats()).toMatchObject({ busy: 1, lockouts: 0, refused: 0 });
  });

  it('attempts refused by a lockout do not use up the ceiling', () => {
    const now = 1_000_000;
    const throttle = new LoginThrottle({ maxAttemptsPerSecond: 3, freeAttemptsPerUser: 1, now: () => now });
    expect(throttle.begin('alice').allowed).toBe(true);
    for (let i = 0; i < 10; i++) expect(throttle.begin('alice')).toMatchObject({ allowed: false, reason: 'locked' });
    expect(throttle.begin('bob').allowed).toBe(true);
    expect(throttle.begin('carol').allowed).toBe(true);
  });

  it('reports each lockout once (username as a SHA-256 prefix), counts it, and again when the delay grows', () => {
    let now = 1_000_000;
    const throttle = new LoginThrottle({
      freeAttemptsPerUser: 2,
      freeAttemptsPerAddress: 100,
      baseDelayMs: 1000,
      maxDelayMs: 8000,
      now: () => now,
    });
    throttle.begin('0123456789', '192.0.2.7');
    throttle.begin('0123456789', '192.0.2.7');
    const first = throttle.begin('0123456789', '192.0.2.7');
    expect(first).toMatchObject({ allowed: false, reason: 'locked', retryAfterSeconds: 1 });
    if (first.allowed) throw new Error('allowed');
    expect(first.lockouts).toEqual([
      { kind: 'username', subject: usernameDigest('0123456789'), failures: 2, retryAfterSeconds: 1 },
    ]);
    expect(first.lockouts[0]!.subject).toMatch(/^[0-9a-f]{12}$/);
    expect(JSON.stringify(first.lockouts)).not.toContain('0123456789');
    const again = throttle.begin('0123456789', '192.0.2.7');
    expect(again).toMatchObject({ allowed: false, lockouts: [] }); // same lockout: not reported twice
    expect(throttle.stats()).toMatchObject({ lockouts: 1, refused: 2 });
    now += 1000;
    expect(throttle.begin('0123456789', '192.0.2.7').allowed).toBe(true);
    expect(throttle.begin('0123456789', '192.0.2.7')).toMatchObject({
      allowed: false,
      retryAfterSeconds: 2,
      lockouts: [{ failures: 3, retryAfterSeconds: 2 }],
    });
    expect(throttle.stats().lockouts).toBe(2);
  });

  it('reports an address lockout with the address', () => {
    const throttle = new LoginThrottle({ freeAttemptsPerUser: 100, freeAttemptsPerAddress: 2, now: () => 5 });
    for (const user of ['a', 'b']) {
      const gate = throttle.begin(user, '198.51.100.1');
      if (gate.allowed) gate.attempt.failed();
    }
    expect(throttle.begin('c', '198.51.100.1')).toMatchObject({
      allowed: false,
      lockouts: [{ kind: 'address', subject: '198.51.100.1', failures: 2 }],
    });
  });

  it('refuses nonsense limits', () => {
    expect(() => new LoginThrottle({ maxAttemptsPerSecond: 0 })).toThrow(/maxAttemptsPerSecond/);
  });
});

describe('PasswordPolicy', () => {
  const policy = new PasswordPolicy({ minLength: 4, denyList: DEFAULT_DENY_LIST });
  it('refuses short and common passwords, ignoring case and surrounding spaces', () => {
    expect(policy.weakness('abc')).toBe('too short');
    expect(policy.weakness('')).toBe('too short');
    expect(policy.weakness('1234')).toBe('too common');
    expect(policy.weakness('PassWord')).toBe('too common');
    expect(policy.weakness(' qwerty ')).toBe('too common');
    expect(policy.weakness('alice-pass')).toBeNull();
    expect(policy.weakness('4711')).toBeNull(); // a 4-digit PIN not on the list
  });
  it('counts length in characters, not bytes or UTF-16 units', () => {
    const four = new PasswordPolicy({ minLength: 4, denyList: [] });
    expect(four.weakness('éééé')).toBeNull();
    expect(four.weakness('😀😀😀')).toBe('too short');
  });
  it('minLength 0 and an empty list switch it off', () => {
    const off = new PasswordPolicy({ minLength: 0, denyList: [] });
    expect(off.weakness('x')).toBeNull();
    expect(off.weakness('password')).toBeNull();
  });
});

describe('TokenRateLimit', () => {
  it('allows perMinute requests per key, then refuses with the seconds left in the window; other keys go on', async () => {
    const limiter = new TokenRateLimit(new MemoryStore({ maxSessions: 10, maxSessionsPerPatron: 10 }), 3);
    for (let i = 0; i < 3; i++) expect((await limiter.take('k')).allowed).toBe(true);
    const refused = await limiter.take('k');
    expect(refused.allowed).toBe(false);
    if (!refused.allowed) {
      expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(59);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60);
    }
    expect(await limiter.take('other')).toEqual({ allowed: true, remaining: 2 });
    expect(limiter.stats().limited).toBe(1);
  });
});

describe('LruSessionStore: sessions per patron', () => {
  const session = (patron: string, expiresAt = Date.now() + 60_000) => ({
    patron,
    barcode: patron,
    scopes: ['read_patron'],
    expiresAt,
  });

  it('ends the oldest session of a patron when maxSessionsPerPatron would be exceeded; other patrons unaffected', async () => {
    const store = new LruSessionStore({ maxSessions: 100, maxSessionsPerPatron: 2 });
    const a1 = await store.create(session('a'));
    const b1 = await store.create(session('b'));
    const a2 = await store.create(session('a'));
    const a3 = await store.create(session('a'));
    expect(await store.get(a1)).toBeNull();
    expect(await store.get(a2)).not.toBeNull();
    expect(await store.get(a3)).not.toBeNull();
    expect(await store.get(b1)).not.toBeNull();
    expect(store.size()).toBe(3);
  });

  it('expired sessions make room first; deleteAllFor uses the index', async () => {
    let now = 1000;
    const store = new LruSessionStore({ maxSessions: 100, maxSessionsPerPatron: 2, now: () => now });
    const old = await store.create(session('a', 2000));
    const live = await store.create(session('a', 100_000));
    now = 3000;
    const next = await store.create(session('a', 100_000));
    expect(await store.get(old)).toBeNull();
    expect(await store.get(live)).not.toBeNull();
    expect(await store.get(next)).not.toBeNull();
    expect(await store.deleteAllFor('a')).toBe(2);
    expect(await store.get(live)).toBeNull();
    expect(store.size()).toBe(0);
  });

  it('the patron index follows LRU eviction (stays bounded)', async () => {
    const store = new LruSessionStore({ maxSessions: 3, maxSessionsPerPatron: 2 });
    for (let i = 0; i < 50; i++) await store.create(session(`p${i}`));
    expect(store.size()).toBe(3);
    expect(await store.deleteAllFor('p0')).toBe(0);
    expect(await store.deleteAllFor('p49')).toBe(1);
  });
});
