import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

/**
 * `paia-sip2 doctor` as a sysadmin runs it: the real CLI in its own process,
 * against the simulator in another.
 */

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RUN_TIMEOUT_MS = 25_000;
/** Distinctive, so that finding them anywhere in the output can only be a leak. */
const TERMINAL_SECRET = 'Tq8-doctor-terminal-secret-4711';
const PATRON_SECRET = 'Pw5-doctor-patron-secret-0815';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** The environment without any PAIA_* setting of whoever runs the tests. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PAIA_') && name !== 'PORT'));
}

function doctor(args: string[], env: Record<string, string>, stdin?: string): Promise<Run> {
  const started = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'doctor', ...args], {
    cwd: REPO_ROOT,
    env: { ...cleanEnv(), PAIA_HTTP_PORT: '0', ...env },
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (stdin !== undefined) child.stdin!.end(stdin);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    // The doctor must end by itself; a hang is a failure, not a test timeout.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`doctor did not exit within ${RUN_TIMEOUT_MS} ms\n--- stdout:\n${stdout}\n--- stderr:\n${stderr}`));
    }, RUN_TIMEOUT_MS);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

const explain = (run: Run) => `exit ${run.code}\n--- stdout:\n${run.stdout}\n--- stderr:\n${run.stderr}`;

describe('paia-sip2 doctor', () => {
  let sim: SimulatorProcess;
  let ils: Record<string, string>;

  beforeAll(async () => {
    sim = await startSimulatorProcess();
    ils = { PAIA_SIP2_HOST: '127.0.0.1', PAIA_SIP2_PORT: String(sim.port) };
  });
  afterAll(async () => {
    await sim?.stop();
  });
  beforeEach(async () => {
    await sim.reset();
  });

  it('checks a healthy ILS: login, ACS status with the 16 supported messages, round-trip times; exit 0', async () => {
    const run = await doctor([], ils);
    expect(run.code, explain(run)).toBe(0);
    const out = run.stdout;
    expect(out).toMatch(new RegExp(`^ok   connect TCP 127\\.0\\.0\\.1:${sim.port} \\([\\d.]+ ms\\)$`, 'm'));
    expect(out).toMatch(/^ok   connect \+ 93 login as terminal user "paia" \([\d.]+ ms\)$/m);
    expect(out).toMatch(/^ok   99 SC status -> 98 ACS status \([\d.]+ ms\)$/m);
    expect(out).toMatch(/on-line: yes/);
    expect(out).toMatch(/protocol version: 2\.00/);
    expect(out).toMatch(/institution: DEMO/);
    expect(out).toMatch(/library name: Demo Public Library/);
    // The simulator's BX is YYYYYYYYYYYYYYYY: every position by name, with yes or no.
    const listed = [...out.matchAll(/^ {7}(yes|no)\s+(\d\d) (.+?)(?:\s{2,}used for .*)?$/gm)].map((m) => [m[2], m[1], m[3]!.trim()]);
    expect(listed).toEqual([
      ['23', 'yes', 'patron status'],
      ['11', 'yes', 'checkout'],
      ['09', 'yes', 'checkin'],
      ['01', 'yes', 'block patron'],
      ['99', 'yes', 'SC/ACS status'],
      ['97', 'yes', 'request resend'],
      ['93', 'yes', 'login'],
      ['63', 'yes', 'patron information'],
      ['35', 'yes', 'end patron session'],
      ['37', 'yes', 'fee paid'],
      ['17', 'yes', 'item information'],
      ['19', 'yes', 'item status update'],
      ['25', 'yes', 'patron enable'],
      ['15', 'yes', 'hold'],
      ['29', 'yes', 'renew'],
      ['65', 'yes', 'renew all'],
    ]);
    expect(out).toMatch(/^ok   round trips, 5 x 99: min [\d.]+ ms, median [\d.]+ ms, max [\d.]+ ms \([\d.]+ ms\)$/m);
    expect(out).toMatch(/^skip PAIA methods: give --patron/m);
    expect(out).toMatch(/^all checks passed$/m);
    expect(out).not.toContain('FAIL');
    expect(out + run.stderr).not.toContain('paia-secret');
    // One login, the 99 of the status step and five timed ones (the connection's own 99 after login comes first).
    const counters = await sim.counters();
    expect(counters.received['93']).toBe(1);
    expect(counters.received['99']).toBe(7);
  });

  it('with --patron shows what login, patron, items and fees return, and sends no renew or hold', async () => {
    const run = await doctor(['--patron', 'alice'], { ...ils, PAIA_DOCTOR_PASSWORD: 'alice-pass' });
    expect(run.code, explain(run)).toBe(0);
    const out = run.stdout;
    expect(out).toMatch(/^ok   PAIA login: 63 patron information with the patron's password \([\d.]+ ms\)$/m);
    expect(out).toMatch(/ILS barcode "alice", account state 0 \(active\)/);
    expect(out).toMatch(/^ok   PAIA patron \([\d.]+ ms\)$/m);
    expect(out).toContain('"name": "Alice Example"');
    expect(out).toMatch(/^ok   PAIA items \([\d.]+ ms\)$/m);
    expect(out).toMatch(/^ {5}5 documents, all shown$/m);
    expect(out).toContain('"about": "Der Zauberberg"');
    expect(out).toMatch(/^ok   PAIA fees \([\d.]+ ms\)$/m);
    expect(out).toContain('"amount": "3.50 EUR"');
    expect(out).toMatch(/total 3\.50 EUR, 2 fees/);
    expect(out).toMatch(/^skip PAIA renew, request, cancel: not sent, they would change the patron's account/m);
    expect(out + run.stderr).not.toContain('alice-pass');
    const counters = await sim.counters();
    for (const code of ['29', '15', '65', '37']) {
      expect(counters.received[code] ?? 0, `message ${code}`).toBe(0);
      expect(counters.executed[code] ?? 0, `message ${code}`).toBe(0);
    }
    expect(counters.received['63']).toBeGreaterThan(0);
    expect(counters.received['17']).toBeGreaterThan(0);
  });

  it('prints only the first 5 documents of a long account', async () => {
    const run = await doctor(['--patron', 'dave'], { ...ils, PAIA_DOCTOR_PASSWORD: 'dave-pass' });
    expect(run.code, explain(run)).toBe(0);
    expect(run.stdout).toMatch(/^ {5}\d+ documents, the first 5 shown$/m);
    expect(run.stdout.match(/"item": "http:\/\/127\.0\.0\.1:8080\/item\/dv-/g)).toHaveLength(5);
  });

  it('reads the patron password from stdin when PAIA_DOCTOR_PASSWORD is not set', async () => {
    const run = await doctor(['--patron', 'alice'], ils, 'alice-pass\n');
    expect(run.code, explain(run)).toBe(0);
    expect(run.stdout).toContain('"name": "Alice Example"');
    expect(run.stdout + run.stderr).not.toContain('alice-pass');
  });

  it('exits 2 when --patron has no password (neither the variable nor stdin)', async () => {
    const run = await doctor(['--patron', 'alice'], ils);
    expect(run.code, explain(run)).toBe(2);
    expect(run.stderr).toMatch(/--patron needs the patron's password: set PAIA_DOCTOR_PASSWORD or give it on stdin/);
    expect((await sim.counters()).received['93'] ?? 0).toBe(0);
  });

  it('a rejected terminal login: exit 1, points at sip2.terminal, never prints the password', async () => {
    const run = await doctor([], { ...ils, PAIA_SIP2_TERMINAL_PASSWORD: TERMINAL_SECRET });
    expect(run.code, explain(run)).toBe(1);
    expect(run.stdout).toMatch(/^FAIL connect \+ 93 login as terminal user "paia": the ILS rejected the SIP2 terminal login/m);
    expect(run.stdout).toMatch(/check sip2\.terminal\.user \("paia"\), sip2\.terminal\.password/);
    expect(run.stderr).toMatch(/^paia-sip2 doctor: FAIL connect \+ 93 login/m);
    expect(run.stdout + run.stderr).not.toContain(TERMINAL_SECRET);
    expect(run.stdout).not.toContain('all checks passed');
  });

  it('an ILS that refuses connections: exit 1 with the reason within a few seconds', async () => {
    const port = await freePort();
    const run = await doctor([], { PAIA_SIP2_HOST: '127.0.0.1', PAIA_SIP2_PORT: String(port) });
    expect(run.code, explain(run)).toBe(1);
    expect(run.stdout).toMatch(new RegExp(`^FAIL connect TCP 127\\.0\\.0\\.1:${port}: connection refused \\(nothing listens there\\): check sip2\\.host`, 'm'));
    expect(run.stdout).not.toMatch(/^ok   connect \+ 93/m);
    expect(run.ms).toBeLessThan(10_000);
  });

  it('a refused patron login: exit 1 saying so, without the password', async () => {
    const run = await doctor(['--patron', 'alice'], { ...ils, PAIA_DOCTOR_PASSWORD: PATRON_SECRET });
    expect(run.code, explain(run)).toBe(1);
    expect(run.stdout).toMatch(/^ok   connect \+ 93 login/m);
    expect(run.stdout).toMatch(/^FAIL PAIA login: 63 patron information with the patron's password: the ILS refused the patron login for "alice"/m);
    expect(run.stdout).not.toMatch(/^ok   PAIA login/m);
    expect(run.stdout).not.toMatch(/^ok   PAIA items/m);
    expect(run.stdout + run.stderr).not.toContain(PATRON_SECRET);
  });

  it('without sip2.host checks the embedded simulator and says so', async () => {
    const run = await doctor([], {});
    expect(run.code, explain(run)).toBe(0);
    expect(run.stdout).toMatch(/^ok   start the embedded SIP2 simulator \(demo mode: sip2\.host is not set\) \([\d.]+ ms\)$/m);
    expect(run.stdout).toMatch(/the embedded simulator with the demo library listens on 127\.0\.0\.1:\d+/);
    expect(run.stdout).toMatch(/^ok   connect \+ 93 login/m);
    expect(run.stdout).toMatch(/^ok   round trips, 5 x 99/m);
    expect(run.stdout).toMatch(/^all checks passed$/m);
    // The doctor talked to its own simulator, not to the test's.
    expect((await sim.counters()).received['93'] ?? 0).toBe(0);
  });
});
