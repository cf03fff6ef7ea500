import { describe, expect, it } from 'vitest';
import {
  hashSecret,
  hashVerifier,
  parseSecretHash,
  plainVerifier,
  secretHashProblem,
} from '../../../src/auth/client-secret.js';
import { basicCredentials, plainSecretOf, TrustedClients } from '../../../src/auth/trusted-clients.js';

describe('client secret hashes', () => {
  it('hash a secret into scrypt$N$r$p$salt$hash that verifies the secret and nothing else', async () => {
    const hash = await hashSecret('correct horse battery staple', 1024);
    expect(hash).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    const parsed = parseSecretHash(hash);
    if (typeof parsed === 'string') throw new Error(parsed);
    const verify = hashVerifier(parsed);
    expect(await verify('correct horse battery staple')).toBe(true);
    expect(await verify('correct horse battery stapl')).toBe(false);
    expect(await verify('')).toBe(false);
  });

  it('salt each hash: the same secret twice gives two different hashes', async () => {
    expect(await hashSecret('same-secret-twice-123', 1024)).not.toBe(await hashSecret('same-secret-twice-123', 1024));
  });

  it('use the default cost 2^15 when none is given', async () => {
    expect(await hashSecret('default-cost-secret-1')).toMatch(/^scrypt\$32768\$8\$1\$/);
  });

  it.each([
    ['plain text', 'not-a-hash', /scrypt\$N\$r\$p\$salt\$hash/],
    ['bcrypt', '$2b$10$abcdefghijklmnopqrstuv', /paia-sip2 hash-secret/],
    ['N not a power of two', `scrypt$1000$8$1$${'a'.repeat(22)}$${'b'.repeat(43)}`, /power of two/],
    ['N too small', `scrypt$512$8$1$${'a'.repeat(22)}$${'b'.repeat(43)}`, /power of two between 1024/],
    ['r out of range', `scrypt$1024$99$1$${'a'.repeat(22)}$${'b'.repeat(43)}`, /block size/],
    ['p out of range', `scrypt$1024$8$0$${'a'.repeat(22)}$${'b'.repeat(43)}`, /parallelism/],
    ['too much memory', `scrypt$1048576$16$1$${'a'.repeat(22)}$${'b'.repeat(43)}`, /1 GiB/],
  ])('refuse a hash that is %s, saying why', (_, text, why) => {
    expect(secretHashProblem(text)).toMatch(why);
  });

  it('compare a plain secret (from the environment or a file) exactly, whatever its length', async () => {
    const verify = plainVerifier('sixteen-chars-ok');
    expect(await verify('sixteen-chars-ok')).toBe(true);
    expect(await verify('sixteen-chars-o')).toBe(false);
    expect(await verify('sixteen-chars-ok-and-more')).toBe(false);
  });
});

describe('HTTP Basic client credentials (RFC 6749, 2.3.1)', () => {
  const header = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;

  it('read id and secret, the secret form-urlencoded before they were joined by ":", and keep the secret as sent when it differs', () => {
    expect(basicCredentials(header('vufind:s3cret%3Awith%2Bplus+and+space'))).toEqual({
      id: 'vufind',
      secret: 's3cret:with+plus and space',
      secretAsSent: 's3cret%3Awith%2Bplus+and+space',
    });
    expect(basicCredentials(header('vufind:plain-secret'))).toEqual({ id: 'vufind', secret: 'plain-secret' });
    // Not form encoding at all (VuFind sends the secret as it is): the secret as sent.
    expect(basicCredentials(header('vufind:100%sure'))).toEqual({ id: 'vufind', secret: '100%sure' });
    expect(basicCredentials(`basic  ${Buffer.from('x:y').toString('base64')}`)).toEqual({ id: 'x', secret: 'y' });
  });

  it.each([
    ['no header', undefined],
    ['a bearer token', 'Bearer abc'],
    ['no colon', header('vufind')],
    ['an empty id', header(':secret')],
  ])('give nothing for %s', (_, value) => {
    expect(basicCredentials(value)).toBeNull();
  });
});

describe('client secrets from the environment or a file', () => {
  it('read the variable secretEnv names; a missing or short one is a problem naming it', () => {
    expect(plainSecretOf({ secretEnv: 'S' }, { S: 'long-enough-secret-1' })).toEqual({
      secret: 'long-enough-secret-1',
    });
    expect(plainSecretOf({ secretEnv: 'S' }, {})).toEqual({ problem: 'names S, which is not set' });
    expect(plainSecretOf({ secretEnv: 'S' }, { S: 'short' })).toMatchObject({ problem: /shorter than 16/ });
  });

  it('a client whose secret the loader did not read fails to build, naming the client', async () => {
    await expect(
      TrustedClients.fromSettings([
        { id: 'vufind', secretEnv: 'MISSING_SECRET', scopes: ['read_patron'], allowedAddresses: ['192.0.2.1'] },
      ]),
    ).rejects.toThrow(/client "vufind" has no secret \(its secretEnv was not read/);
  });
});
