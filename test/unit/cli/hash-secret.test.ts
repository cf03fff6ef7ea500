import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { hashVerifier, parseSecretHash } from '../../../src/auth/client-secret.js';
import { hashSecretCommand } from '../../../src/cli/hash-secret.js';

async function run(stdin: string): Promise<{ code: number; out: string; err: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  let outText = '';
  let errText = '';
  out.on('data', (chunk: Buffer) => {
    outText += chunk.toString();
  });
  err.on('data', (chunk: Buffer) => {
    errText += chunk.toString();
  });
  const code = await hashSecretCommand(Readable.from([Buffer.from(stdin)]), out, err);
  return { code, out: outText, err: errText };
}

describe('paia-sip2 hash-secret', () => {
  it('prints a hash of the secret on stdin (without its final line break) that verifies it', async () => {
    const { code, out, err } = await run('a-client-secret-from-stdin\n');
    expect(code).toBe(0);
    expect(err).toBe('');
    const parsed = parseSecretHash(out.trim());
    if (typeof parsed === 'string') throw new Error(parsed);
    expect(await hashVerifier(parsed)('a-client-secret-from-stdin')).toBe(true);
    expect(await hashVerifier(parsed)('a-client-secret-from-stdin\n')).toBe(false);
  });

  it.each([
    ['empty', '', /is empty/],
    ['short', 'short\n', /shorter than 16 characters/],
  ])('refuses an %s secret with exit 2 and says how to make one', async (_, stdin, why) => {
    const { code, out, err } = await run(stdin);
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toMatch(why);
    expect(err).toMatch(/openssl rand/);
  });
});
