import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Client secrets of auth.clients: stored as a self-describing scrypt hash
 * (`scrypt$N$r$p$salt$hash`, salt and hash base64url), so that the
 * configuration file need not hold the secret itself. Comparisons run in
 * constant time.
 */

/** 2^15: about 50 ms per check on a current core; a client logs in once per patron login. */
const DEFAULT_COST = 2 ** 15;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const KEY_LENGTH = 32;
const SALT_BYTES = 16;

const FORMAT = /^scrypt\$(\d{1,8})\$(\d{1,3})\$(\d{1,3})\$([A-Za-z0-9_-]{16,})\$([A-Za-z0-9_-]{43,})$/;

export interface ScryptHash {
  cost: number;
  blockSize: number;
  parallelism: number;
  salt: Buffer;
  hash: Buffer;
}

/** Why `text` is not a hash this module can check, or null when it is one. */
export function secretHashProblem(text: string): string | null {
  const parsed = parseSecretHash(text);
  return typeof parsed === 'string' ? parsed : null;
}

/** The hash's parts, or what is wrong with it. */
export function parseSecretHash(text: string): ScryptHash | string {
  const match = FORMAT.exec(text);
  if (match === null) {
    return 'is not a secret hash of the form scrypt$N$r$p$salt$hash; make one with `paia-sip2 hash-secret` (the secret on stdin)';
  }
  const [cost, blockSize, parallelism] = [Number(match[1]), Number(match[2]), Number(match[3])];
  // Powers of two from 2^10 (weaker is not worth having) to 2^20 (1 GiB of memory per check).
  if (cost < 2 ** 10 || cost > 2 ** 20 || (cost & (cost - 1)) !== 0) {
    return 'has a cost N that is not a power of two between 1024 and 1048576';
  }
  if (blockSize < 1 || blockSize > 32) return 'has a block size r outside 1..32';
  if (parallelism < 1 || parallelism > 16) return 'has a parallelism p outside 1..16';
  if (128 * cost * blockSize > 2 ** 30) return 'needs more than 1 GiB of memory per check (128 * N * r); lower N or r';
  const salt = Buffer.from(match[4] as string, 'base64url');
  const hash = Buffer.from(match[5] as string, 'base64url');
  if (hash.length < 32) return 'has a hash shorter than 32 bytes';
  return { cost, blockSize, parallelism, salt, hash };
}

function derive(secret: string, salt: Buffer, params: Omit<ScryptHash, 'salt' | 'hash'>, length: number) {
  return new Promise<Buffer>((resolve, reject) => {
    scrypt(
      secret.normalize('NFC'),
      salt,
      length,
      {
        N: params.cost,
        r: params.blockSize,
        p: params.parallelism,
        maxmem: 256 * params.cost * params.blockSize + 1024 * 1024,
      },
      (error, key) => (error ? reject(error) : resolve(key)),
    );
  });
}

/** The parameters `paia-sip2 hash-secret` uses. */
const DEFAULT_HASH_PARAMS: Readonly<Omit<ScryptHash, 'salt' | 'hash'>> = Object.freeze({
  cost: DEFAULT_COST,
  blockSize: BLOCK_SIZE,
  parallelism: PARALLELISM,
});

/** What one check with these parameters costs, in scrypt's units of work: whichever is larger costs more time. */
export function checkCost(params: Omit<ScryptHash, 'salt' | 'hash'>): number {
  return params.cost * params.blockSize * params.parallelism;
}

/** `secret` hashed with a random salt: the parts, for a verifier made at start. */
export async function scryptHash(
  secret: string,
  params: Omit<ScryptHash, 'salt' | 'hash'> = DEFAULT_HASH_PARAMS,
): Promise<ScryptHash> {
  const salt = randomBytes(SALT_BYTES);
  return { ...params, salt, hash: await derive(secret, salt, params, KEY_LENGTH) };
}

/** A new hash of `secret` with a random salt, as the configuration holds it. */
export async function hashSecret(secret: string, cost = DEFAULT_COST): Promise<string> {
  const hashed = await scryptHash(secret, { ...DEFAULT_HASH_PARAMS, cost });
  return [
    'scrypt',
    hashed.cost,
    hashed.blockSize,
    hashed.parallelism,
    hashed.salt.toString('base64url'),
    hashed.hash.toString('base64url'),
  ].join('$');
}

/** How a client's secret is checked: against a scrypt hash, or against the secret itself (from the environment or a file). */
export type SecretVerifier = (given: string) => Promise<boolean>;

export function hashVerifier(hash: ScryptHash): SecretVerifier {
  return async (given) => {
    const derived = await derive(given, hash.salt, hash, hash.hash.length);
    return timingSafeEqual(derived, hash.hash);
  };
}

/** Compares digests, so that the lengths match and the time says nothing about the secret. */
export function plainVerifier(secret: string): SecretVerifier {
  const expected = digest(secret);
  return async (given) => timingSafeEqual(digest(given), expected);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text.normalize('NFC'), 'utf8').digest();
}
