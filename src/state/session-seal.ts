import { createCipheriv, createDecipheriv, hash, randomBytes } from 'node:crypto';
import { type Session, sessionFrom } from './sessions.js';

/**
 * A session as a shared store holds it: AES-256-GCM under a key derived
 * from the access token. The store keeps sessions under the token's SHA-256
 * and never the token, so whoever reads the store (a dump, a replica, a
 * backup) finds neither the patron's barcode nor the public patron id in
 * clear, and cannot decrypt a session without its token, secret or not.
 * Its cost per call is measured with the bench's CPU profile
 * (bench/README.md), not written here: figures change with machine and Node.
 */

const FORMAT = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Distinct from hashToken(token), the lookup key, by its purpose prefix: the key never lies beside what it opens. */
function keyOf(token: string): Buffer {
  return hash('sha256', `paia-sip2 session key\0${token}`, 'buffer');
}

export function sealSession(session: Session, token: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyOf(token), iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(session), 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${FORMAT}.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
}

/** The session sealed with `token`; null for anything else (another token's, damaged, or a value in clear). */
export function openSession(text: string, token: string): Session | null {
  const [format, ivText, sealedText] = text.split('.');
  if (format !== FORMAT || ivText === undefined || sealedText === undefined) return null;
  const iv = Buffer.from(ivText, 'base64url');
  const sealed = Buffer.from(sealedText, 'base64url');
  if (iv.length !== IV_BYTES || sealed.length <= TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(token), iv);
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    const json =
      decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES), undefined, 'utf8') + decipher.final('utf8');
    return sessionFrom(JSON.parse(json));
  } catch {
    return null;
  }
}
