/**
 * The libraries section on the command line (issue 29): check-config reads
 * config/libraries.example.yaml and prints each library's effective settings,
 * names the library a problem belongs to (serve serves it: libraries.test.ts;
 * the doctor checks it: doctor-libraries.test.ts). The commands run at once.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withoutSettings } from '../../src/config/index.js';
import { sourceEntry } from '../helpers/entry-points.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLE = 'config/libraries.example.yaml';
/** The example leaves the terminal password to the environment. */
const PASSWORD = 'terminal-secret-42';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function paiaSip2(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...sourceEntry('src/cli/main.ts'), ...args],
      { cwd: ROOT, env: { ...withoutSettings(process.env), PAIA_SIP2_TERMINAL_PASSWORD: PASSWORD }, timeout: 15_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('the libraries section on the command line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paia-libraries-'));
  const invalid = join(dir, 'invalid.yaml');
  writeFileSync(
    invalid,
    'sip2:\n  terminal: { user: gw, location: "" }\nlibraries:\n  DE-830:\n    sip2: { host: ils.example.org, institution: A, port: 70000 }\n    paia: { itemUri: "https://a.example.org/{barcode}", editionUri: "https://a.example.org/{title}" }\n',
  );
  // Several workers need a shared store; nothing connects to it before the refusal.
  const withWorkers = join(dir, 'workers.yaml');
  writeFileSync(
    withWorkers,
    'state: { store: redis, redis: { url: "redis://127.0.0.1:6379" } }\nsip2:\n  terminal: { user: gw, location: "" }\nlibraries:\n  DE-830:\n    sip2: { host: ils.example.org, institution: A }\n    paia: { itemUri: "https://a.example.org/{barcode}", editionUri: "https://a.example.org/{title}" }\n',
  );
  let example: Run;
  let broken: Run;
  let workers: Run;

  beforeAll(async () => {
    [example, broken, workers] = await Promise.all([
      paiaSip2(['check-config', '--config', EXAMPLE]),
      paiaSip2(['check-config', '--config', invalid]),
      paiaSip2(['serve', '--workers', '2', '--config', withWorkers]),
    ]);
  }, 30_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('check-config prints the top level, then each library of the example with its effective settings, secrets hidden', () => {
    expect(example.code, example.stderr).toBe(0);
    expect(example.stderr).toBe('');
    const [valid, json] = [
      example.stdout.slice(0, example.stdout.indexOf('\n')),
      example.stdout.slice(example.stdout.indexOf('\n')),
    ];
    expect(valid).toBe('configuration is valid');
    const summary = JSON.parse(json) as { http: unknown; libraries: { id: string; sip2: Record<string, unknown> }[] };
    expect(summary.http).toMatchObject({ listen: 'http://127.0.0.1:8080' });
    expect(summary.libraries.map(({ id }) => id)).toEqual(['DE-830', 'DE-18']);
    expect(summary.libraries[0]?.sip2).toMatchObject({
      ils: 'ils-a.example.org:6001',
      institution: 'DE-830',
      terminal: 'paia-gateway',
      pool: '1-8 connections',
    });
    expect(summary.libraries[1]?.sip2).toMatchObject({
      ils: 'ils-b.example.org:6002',
      pool: '1-4 connections',
      maintenance: ['sun 02:00-03:00 Europe/Berlin'],
    });
    expect(example.stdout + example.stderr).not.toContain(PASSWORD);
  });

  it('check-config exits 2 naming the library whose settings are wrong', () => {
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain(
      `libraries[DE-830].sip2.port: must be a TCP port between 1 and 65535 (got 70000, at ${invalid}:5)`,
    );
    expect(broken.stderr).not.toContain(PASSWORD);
  });

  it('serve refuses libraries with several workers, as a configuration problem', () => {
    expect(workers.code).toBe(2);
    expect(workers.stdout).toBe('');
    expect(workers.stderr).toContain('several libraries are served by one process only yet: set http.workers to 1');
  });
});
