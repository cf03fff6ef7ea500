import { describe, expect, it } from 'vitest';
import { ClientAllowlist } from '../../../src/auth/client-allowlist.js';
import { LoginService, type LoginServiceOptions } from '../../../src/auth/login.js';
import { LoginThrottle } from '../../../src/auth/login-throttle.js';
import { DEFAULT_DENY_LIST, PasswordPolicy } from '../../../src/auth/password-policy.js';
import { PatronIds } from '../../../src/auth/patron-ids.js';
import type { AccountState, CredentialCheck } from '../../../src/backend/types.js';
import { MemoryStore } from '../../../src/state/memory/index.js';
import { LruSessionStore } from '../../../src/state/memory/sessions.js';

const NOW = 1_800_000_000_000;

/** An ILS that knows alice (active) and bob (expired); `failing` makes the check reject like an unreachable ILS. */
function setup(overrides: Partial<LoginServiceOptions> = {}) {
  const checks: string[] = [];
  let failing = false;
  const accounts: Record<string, { password: string; barcode: string; state: AccountState }> = {
    alice: { password: 'alice-pass', barcode: '1001', state: 0 },
    bob: { password: 'bob-pass', barcode: '3003', state: 2 },
  };
  const backend = {
    async login(username: string, password: string): Promise<CredentialCheck> {
      checks.push(username);
      if (failing) throw new Error('ILS unreachable');
      const account = accounts[username];
      return account && account.password === password
        ? { ok: true, barcode: account.barcode, state: account.state }
        : { ok: false };
    },
  };
  const sessions = new LruSessionStore({ maxSessions: 100, now: () => NOW });
  const throttle = new LoginThrottle(new MemoryStore({ maxSessions: 100, maxSessionsPerPatron: 10 }), {
    freeAttemptsPerUser: 2,
    freeAttemptsPerAddress: 100,
    baseDelayMs: 1000,
  });
  const service = new LoginService({
    backend,
    sessions,
    patronIds: new PatronIds('barcode'),
    throttle,
    passwordPolicy: new PasswordPolicy({ minLength: 4, denyList: DEFAULT_DENY_LIST }),
    tokenLifetimeMs: 600_000,
    now: () => NOW,
    ...overrides,
  });
  const login = (username: string, password: string, extra: { scopes?: string[]; clientAddress?: string } = {}) =>
    service.login({ username, password, scopes: extra.scopes, clientAddress: extra.clientAddress ?? '192.0.2.7' });
  return {
    service,
    login,
    sessions,
    throttle,
    checks,
    fail: (on: boolean) => {
      failing = on;
    },
  };
}

describe('LoginService', () => {
  it('grants the four core scopes to an active account and stores a session under a new token', async () => {
    const { login, sessions } = setup();
    const outcome = await login('alice', 'alice-pass');
    expect(outcome).toMatchObject({
      kind: 'granted',
      patron: '1001',
      scopes: ['read_patron', 'read_fees', 'read_items', 'write_items'],
      expiresInSeconds: 600,
    });
    if (outcome.kind !== 'granted') throw new Error('not granted');
    expect(outcome.token).not.toBe('alice-pass');
    expect(await sessions.get(outcome.token)).toMatchObject({
      patron: '1001',
      barcode: '1001',
      expiresAt: NOW + 600_000,
    });
  });

  it('grants an expired account the read scopes only, and nothing when only write scopes were asked for', async () => {
    const { login } = setup();
    expect(await login('bob', 'bob-pass')).toMatchObject({
      kind: 'granted',
      scopes: ['read_patron', 'read_fees', 'read_items'],
    });
    expect(await login('bob', 'bob-pass', { scopes: ['write_items'] })).toMatchObject({
      kind: 'scopes-not-allowed',
      allowed: ['read_patron', 'read_fees', 'read_items'],
    });
  });

  it('refuses a scope request no login can ever satisfy before asking the ILS', async () => {
    const { login, checks } = setup();
    expect(await login('alice', 'alice-pass', { scopes: ['change_password', 'nonsense'] })).toMatchObject({
      kind: 'no-grantable-scope',
    });
    expect(checks).toEqual([]);
  });

  it('refuses a weak password whether it is right or not, without asking the ILS or counting a failure', async () => {
    const { login, checks, throttle } = setup();
    expect(await login('alice', '1234')).toEqual({ kind: 'weak-password' });
    expect(await login('alice', 'password')).toEqual({ kind: 'weak-password' });
    expect(checks).toEqual([]);
    expect(throttle.stats().failed).toBe(0);
  });

  it('answers a wrong password and a lockout alike, the lockout with a retry time, and locks after the free failures', async () => {
    const { login, checks } = setup();
    expect(await login('alice', 'wrong-one')).toEqual({ kind: 'rejected' });
    expect(await login('alice', 'wrong-two')).toEqual({ kind: 'rejected' });
    const locked = await login('alice', 'alice-pass');
    expect(locked).toMatchObject({ kind: 'rejected', retryAfterSeconds: 1 });
    expect(checks).toEqual(['alice', 'alice']);
  });

  it('does not count an attempt the ILS never checked', async () => {
    const { login, fail, throttle } = setup();
    fail(true);
    for (let i = 0; i < 3; i++) await expect(login('alice', 'alice-pass')).rejects.toThrow('ILS unreachable');
    fail(false);
    expect(await login('alice', 'alice-pass')).toMatchObject({ kind: 'granted' });
    expect(throttle.stats().failed).toBe(0);
  });

  it('admits only clients in the allowlist, and refuses the others before anything else', async () => {
    const { service, login, checks } = setup({ allowedClients: new ClientAllowlist(['10.0.0.0/8']) });
    expect(service.admits('10.1.2.3')).toBe(true);
    expect(service.admits('192.0.2.7')).toBe(false);
    expect(service.admits(undefined)).toBe(false);
    expect(await login('alice', 'alice-pass', { clientAddress: '192.0.2.7' })).toEqual({ kind: 'client-not-allowed' });
    expect(checks).toEqual([]);
    expect(await login('alice', 'alice-pass', { clientAddress: '10.1.2.3' })).toMatchObject({ kind: 'granted' });
  });

  it('says busy past the global login ceiling, which protects the ILS', async () => {
    const { login } = setup({
      throttle: new LoginThrottle(new MemoryStore({ maxSessions: 100, maxSessionsPerPatron: 10 }), {
        maxAttemptsPerSecond: 1,
      }),
    });
    expect(await login('alice', 'alice-pass')).toMatchObject({ kind: 'granted' });
    expect(await login('alice', 'alice-pass')).toMatchObject({ kind: 'busy', retryAfterSeconds: 1 });
  });
});
