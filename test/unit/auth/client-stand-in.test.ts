/**
 * The check without a client (an unknown client id, or a client called from
 * outside its addresses) costs what a real check costs, so that the time of
 * a refused client login does not tell which client ids exist. Counted, not
 * timed: every scrypt call is recorded with its cost N.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';

const scrypts = vi.hoisted(() => [] as number[]);
vi.mock('node:crypto', async (importOriginal) => {
  const crypto = await importOriginal<typeof import('node:crypto')>();
  const scrypt = (...args: Parameters<typeof crypto.scrypt>) => {
    const options = args[3] as { N?: number };
    scrypts.push(options.N ?? 0);
    return (crypto.scrypt as (...all: unknown[]) => void)(...args);
  };
  return { ...crypto, default: { ...crypto, scrypt }, scrypt };
});

const { hashSecret } = await import('../../../src/auth/client-secret.js');
const { TrustedClients } = await import('../../../src/auth/trusted-clients.js');

const PLAIN = 'a-plain-client-secret-0123456789';
const entry = (id: string, secret: { secretHash?: string; secretEnv?: string; secret?: string }) => ({
  id,
  ...secret,
  scopes: ['read_patron' as const],
  allowedAddresses: ['192.0.2.10'],
});

describe('TrustedClients: the check without a client', () => {
  beforeEach(() => {
    scrypts.length = 0;
  });

  it("runs scrypt at the costliest client's cost, as every client's check does, plain secrets included", async () => {
    const settings = [
      entry('cheap', { secretHash: await hashSecret('cheap-secret-0123456789', 1024) }),
      entry('costly', { secretHash: await hashSecret('costly-secret-0123456789', 4096) }),
      entry('plain', { secretEnv: 'PLAIN_SECRET', secret: PLAIN }),
    ];
    const clients = await TrustedClients.fromSettings(settings);
    scrypts.length = 0;
    expect(await clients.checkWithoutClient('a-guess')).toBe(false);
    expect(scrypts).toEqual([4096]);
    // A plain secret is checked through scrypt at the same cost (hashed at start), and right when it is right.
    expect(await clients.find('plain')?.verify(PLAIN)).toBe(true);
    expect(await clients.find('plain')?.verify('a-guess')).toBe(false);
    expect(await clients.find('costly')?.verify('a-guess')).toBe(false);
    expect(scrypts).toEqual([4096, 4096, 4096, 4096]);
  });

  it('compares by SHA-256 alone, stand-in included, when every client has a plain secret', async () => {
    const clients = await TrustedClients.fromSettings([entry('plain', { secretEnv: 'PLAIN_SECRET', secret: PLAIN })]);
    expect(await clients.checkWithoutClient('a-guess')).toBe(false);
    expect(await clients.find('plain')?.verify(PLAIN)).toBe(true);
    expect(scrypts).toEqual([]);
  });
});
