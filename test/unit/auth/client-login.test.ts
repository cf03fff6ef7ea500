import { describe, expect, it } from 'vitest';
import { ClientAllowlist } from '../../../src/auth/client-allowlist.js';
import { ClientCredentialsLogin } from '../../../src/auth/client-login.js';
import { plainVerifier } from '../../../src/auth/client-secret.js';
import { LoginThrottle } from '../../../src/auth/login-throttle.js';
import { PatronIds } from '../../../src/auth/patron-ids.js';
import { TrustedClients } from '../../../src/auth/trusted-clients.js';
import type { AccountState, PatronLookup } from '../../../src/backend/types.js';
import { MemoryStore } from '../../../src/state/memory/index.js';
import { LruSessionStore } from '../../../src/state/memory/sessions.js';

const NOW = 1_800_000_000_000;
const SECRET = 'vufind-secret-0123456789';
const HOME = '192.0.2.10';

/** An ILS that knows alice (active, barcode 1001, username alice) and bob (expired). */
function setup() {
  const lookups: string[] = [];
  const patrons: Record<string, { barcode: string; state: AccountState }> = {
    alice: { barcode: '1001', state: 0 },
    '1001': { barcode: '1001', state: 0 },
    bob: { barcode: '3003', state: 2 },
  };
  const backend = {
    async lookupPatron(identifier: string): Promise<PatronLookup | null> {
      lookups.push(identifier);
      return patrons[identifier] ?? null;
    },
  };
  const sessions = new LruSessionStore({ maxSessions: 100, now: () => NOW });
  const throttle = new LoginThrottle(new MemoryStore({ maxSessions: 100, maxSessionsPerPatron: 10 }), {
    freeAttemptsPerUser: 2,
    freeAttemptsPerAddress: 100,
    baseDelayMs: 60_000,
  });
  const clients = new TrustedClients([
    {
      id: 'vufind',
      scopes: ['read_patron', 'read_items', 'read_fees', 'write_items'],
      addresses: new ClientAllowlist([HOME]),
      verify: plainVerifier(SECRET),
    },
    {
      id: 'reader',
      scopes: ['read_patron', 'read_items'],
      addresses: new ClientAllowlist(['192.0.2.0/24']),
      verify: plainVerifier(SECRET),
    },
  ]);
  const service = new ClientCredentialsLogin({
    clients,
    backend,
    sessions,
    patronIds: new PatronIds('barcode'),
    throttle,
    tokenLifetimeMs: 600_000,
    now: () => NOW,
  });
  const login = (
    clientId: string | undefined,
    clientSecret: string | undefined,
    patron: string,
    extra: { scopes?: string[]; from?: string } = {},
  ) => service.login({ clientId, clientSecret, patron, scopes: extra.scopes, clientAddress: extra.from ?? HOME });
  return { service, login, sessions, lookups };
}

describe('ClientCredentialsLogin', () => {
  it('grants a client with the right secret a session for the patron the ILS names, by username or barcode', async () => {
    const { login, sessions } = setup();
    for (const name of ['alice', '1001']) {
      const outcome = await login('vufind', SECRET, name);
      if (outcome.kind !== 'granted') throw new Error(outcome.kind);
      expect(outcome).toMatchObject({
        patron: '1001',
        scopes: ['read_patron', 'read_fees', 'read_items', 'write_items'],
        expiresInSeconds: 600,
      });
      expect(await sessions.get(outcome.token)).toMatchObject({ patron: '1001', barcode: '1001' });
    }
  });

  it("grants requested ∩ the client's ∩ what the account state allows", async () => {
    const { login } = setup();
    expect(await login('reader', SECRET, 'alice', { scopes: ['read_patron', 'write_items'] })).toMatchObject({
      kind: 'granted',
      scopes: ['read_patron'],
    });
    expect(await login('reader', SECRET, 'alice')).toMatchObject({
      kind: 'granted',
      scopes: ['read_patron', 'read_items'],
    });
    expect(await login('vufind', SECRET, 'bob')).toMatchObject({
      kind: 'granted',
      scopes: ['read_patron', 'read_fees', 'read_items'],
    });
    expect(await login('vufind', SECRET, 'bob', { scopes: ['write_items'] })).toMatchObject({
      kind: 'scopes-not-allowed',
    });
  });

  it("refuses scopes the client can never have once its secret is right, naming the client's scopes, before the ILS", async () => {
    const { login, lookups } = setup();
    expect(await login('reader', SECRET, 'alice', { scopes: ['write_items'] })).toEqual({
      kind: 'no-grantable-scope',
      grantable: ['read_patron', 'read_items'],
    });
    // A wrong secret learns nothing of the client's scopes: it is answered as any wrong secret.
    expect(await login('reader', 'wrong', 'alice', { scopes: ['write_items'] })).toEqual({ kind: 'rejected' });
    expect(lookups).toEqual([]);
  });

  it('answers a wrong secret, an unknown client, no credentials and an unknown patron alike: rejected', async () => {
    const { login, lookups } = setup();
    expect(await login('vufind', 'wrong', 'alice')).toEqual({ kind: 'rejected' });
    expect(await login('nobody', SECRET, 'alice')).toEqual({ kind: 'rejected' });
    expect(await login(undefined, undefined, 'alice')).toEqual({ kind: 'rejected' });
    expect(await login('vufind', SECRET, 'no-such-patron')).toEqual({ kind: 'rejected' });
    // Only the right secret reaches the ILS.
    expect(lookups).toEqual(['no-such-patron']);
  });

  it('takes the secret as sent when its form-decoded reading is wrong (a client that does not form-encode it)', async () => {
    const { service } = setup();
    const base = { clientId: 'vufind', patron: 'alice', scopes: undefined, clientAddress: HOME };
    expect(await service.login({ ...base, clientSecret: 'decoded-reading', clientSecretAsSent: SECRET })).toMatchObject(
      { kind: 'granted' },
    );
    expect(await service.login({ ...base, clientSecret: 'decoded-reading', clientSecretAsSent: 'also-wrong' })).toEqual(
      { kind: 'rejected' },
    );
  });

  it('answers a known client from outside its allowedAddresses as an unknown id: rejected, its real secret never checked', async () => {
    const { login, lookups } = setup();
    expect(await login('vufind', SECRET, 'alice', { from: '192.0.2.11' })).toEqual({ kind: 'rejected' });
    expect(await login('nobody', SECRET, 'alice', { from: '192.0.2.11' })).toEqual({ kind: 'rejected' });
    expect(await login('reader', SECRET, 'alice', { from: '192.0.2.200' })).toMatchObject({ kind: 'granted' });
    expect(lookups).toEqual(['alice']);
  });

  it('never locks a client out through failures from outside its addresses: they count apart', async () => {
    const { login } = setup();
    for (let i = 0; i < 6; i++) await login('vufind', `guess-${i}`, 'alice', { from: '198.51.100.7' });
    const elsewhere = await login('vufind', SECRET, 'alice', { from: '198.51.100.7' });
    expect(elsewhere.kind === 'rejected' && elsewhere.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(await login('vufind', SECRET, 'alice')).toMatchObject({ kind: 'granted' });
  });

  it('checks a secret against a stand-in where there is no client to check it against, as often as against a client', async () => {
    const checked: string[] = [];
    const counting = (who: string) => async (given: string) => {
      checked.push(`${who}:${given}`);
      return given === SECRET && who !== 'stand-in';
    };
    const clients = new TrustedClients(
      [{ id: 'vufind', scopes: ['read_patron'], addresses: new ClientAllowlist([HOME]), verify: counting('vufind') }],
      counting('stand-in'),
    );
    const service = new ClientCredentialsLogin({
      clients,
      backend: { lookupPatron: async () => null },
      sessions: new LruSessionStore({ maxSessions: 10, now: () => NOW }),
      patronIds: new PatronIds('barcode'),
      throttle: new LoginThrottle(new MemoryStore({ maxSessions: 10, maxSessionsPerPatron: 10 }), {
        freeAttemptsPerUser: 100,
      }),
      tokenLifetimeMs: 600_000,
    });
    const base = { patron: 'alice', scopes: undefined, clientSecret: 'a', clientSecretAsSent: 'b' };
    await service.login({ ...base, clientId: 'vufind', clientAddress: HOME });
    await service.login({ ...base, clientId: 'nobody', clientAddress: HOME });
    await service.login({ ...base, clientId: 'vufind', clientAddress: '198.51.100.7' });
    expect(checked).toEqual(['vufind:a', 'vufind:b', 'stand-in:a', 'stand-in:b', 'stand-in:a', 'stand-in:b']);
  });

  it('locks a client out after its free failed secrets, the right secret included, with a retry time', async () => {
    const { login } = setup();
    expect(await login('vufind', 'guess-1', 'alice')).toEqual({ kind: 'rejected' });
    expect(await login('vufind', 'guess-2', 'alice')).toEqual({ kind: 'rejected' });
    const locked = await login('vufind', SECRET, 'alice');
    expect(locked.kind).toBe('rejected');
    expect(locked.kind === 'rejected' && locked.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    // Another client is not locked with it.
    expect(await login('reader', SECRET, 'alice')).toMatchObject({ kind: 'granted' });
  });

  it('does not count an unknown patron against the client: its secret was right', async () => {
    const { login } = setup();
    for (let i = 0; i < 4; i++) expect(await login('vufind', SECRET, `typo-${i}`)).toEqual({ kind: 'rejected' });
    expect(await login('vufind', SECRET, 'alice')).toMatchObject({ kind: 'granted' });
  });
});
