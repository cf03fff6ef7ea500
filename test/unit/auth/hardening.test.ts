import { describe, expect, it } from 'vitest';
import { DEFAULT_DENY_LIST, PasswordPolicy } from '../../../src/auth/password-policy.js';
import { TokenRateLimit } from '../../../src/auth/token-rate-limit.js';
import { MemoryStore } from '../../../src/state/memory/index.js';
import { LruSessionStore } from '../../../src/state/memory/sessions.js';

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

  it('ends the least recently used session of a patron (here the oldest: none was used since) when maxSessionsPerPatron would be exceeded; other patrons unaffected', async () => {
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
