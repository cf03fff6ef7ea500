import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Throwaway certificates for TLS tests, made at test time with the `openssl`
 * CLI in a temporary directory (nothing is committed): a test CA, two server
 * certificates it signed for 127.0.0.1 (and localhost), and a second CA that
 * signed nothing the tests serve (for "not trusted").
 */

interface ServerCert {
  cert: string;
  key: string;
  /** SHA-256 fingerprint as Node reports it (getPeerCertificate().fingerprint256). */
  fingerprint256: string;
}

export interface TestCerts {
  dir: string;
  /** The CA that signed server and second. */
  ca: string;
  /** A CA that signed neither. */
  otherCa: string;
  server: ServerCert;
  second: ServerCert;
  /** Removes the directory. */
  cleanup(): void;
}

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`openssl ${args.join(' ')} failed: ${(error as Error).message}\n${stderr}`);
  }
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function makeCa(dir: string, name: string): { cert: string; key: string } {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  openssl(
    ['req', '-x509', ...EC, '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=paia-sip2 test ${name}`],
    dir,
  );
  return { cert, key };
}

function makeServer(dir: string, name: string, ca: { cert: string; key: string }): ServerCert {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(
    ext,
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n',
  );
  openssl(['req', ...EC, '-keyout', key, '-out', csr, '-subj', `/CN=127.0.0.1`], dir);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      ca.cert,
      '-CAkey',
      ca.key,
      '-CAcreateserial',
      '-out',
      cert,
      '-days',
      '2',
      '-extfile',
      ext,
    ],
    dir,
  );
  return { cert, key, fingerprint256: new X509Certificate(readFileSync(cert)).fingerprint256 };
}

export function makeTestCerts(): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), 'paia-sip2-certs-'));
  const ca = makeCa(dir, 'ca');
  const other = makeCa(dir, 'other-ca');
  return {
    dir,
    ca: ca.cert,
    otherCa: other.cert,
    server: makeServer(dir, 'server', ca),
    second: makeServer(dir, 'second', ca),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
