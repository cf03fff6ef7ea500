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
    tokenLifetimeSeconds: 600,
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

  it("refuses scopes the client can never have before it checks anything, naming the client's scopes", async () => {
    const { login, lookups } = setup();
    expect(await login('reader', SECRET, 'alice', { scopes: ['write_items'] })).toEqual({
      kind: 'no-grantable-scope',
      grantable: ['read_patron', 'read_items'],
    });
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

  it('refuses a known client from an address outside its allowedAddresses, before its secret is checked', async () => {
    const { login, lookups } = setup();
    expect(await login('vufind', SECRET, 'alice', { from: '192.0.2.11' })).toEqual({ kind: 'client-not-allowed' });
    expect(await login('reader', SECRET, 'alice', { from: '192.0.2.200' })).toMatchObject({ kind: 'granted' });
    expect(lookups).toEqual(['alice']);
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
