import { hashSecret, MIN_PLAIN_SECRET_LENGTH } from '../gateway/index.js';

/**
 * `paia-sip2 hash-secret`: reads a client secret from stdin (never from the
 * command line, where `ps` and the shell history would see it) and prints
 * the hash for auth.clients[].secretHash. Exit 0, or 2 for an unusable secret.
 */
export async function hashSecretCommand(
  input: NodeJS.ReadableStream & { isTTY?: boolean },
  output: NodeJS.WritableStream,
  errors: NodeJS.WritableStream,
): Promise<number> {
  if (input.isTTY === true) errors.write('type the client secret, then Enter and Ctrl-D\n');
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  // One final line break is the file's or the terminal's, not the secret's.
  const secret = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (secret.length < MIN_PLAIN_SECRET_LENGTH) {
    errors.write(
      `paia-sip2 hash-secret: the secret on stdin is ${secret.length === 0 ? 'empty' : `shorter than ${MIN_PLAIN_SECRET_LENGTH} characters`}; generate one, e.g. with \`openssl rand -base64 32\`\n`,
    );
    return 2;
  }
  output.write(`${await hashSecret(secret)}\n`);
  return 0;
}
