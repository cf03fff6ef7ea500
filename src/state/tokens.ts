import { hash, randomBytes } from 'node:crypto';

/** 256 bits of randomness per access token. */
const TOKEN_BYTES = 32;

/**
 * Length of a token as issued (base64url of 32 bytes, no padding).
 * @internal What the tests hold issued tokens to.
 */
export const TOKEN_LENGTH = 43;

/** A new access token: 256 random bits, base64url without padding. */
export function newToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/**
 * The only form in which a token is stored: SHA-256, base64url. A stolen
 * session store or heap dump does not yield usable tokens, and lookups
 * compare hashes, so their timing says nothing about the token.
 */
export function hashToken(token: string): string {
  // The one-shot crypto.hash (Node 20.12+) is the same SHA-256 without a Hash object: about 2.5× faster,
  // and every authenticated request hashes its token (bench/README.md, CPU profile).
  return hash('sha256', token, 'base64url');
}
