/**
 * `paia-sip2 doctor` with a libraries section (issue 29): the real CLI in its
 * own process against two real simulators, one library on each. DE-830 is
 * set up right; DE-18's terminal password is wrong, so its ILS refuses the
 * 93 login. The doctor checks both, each under its heading, names DE-18 in
 * its finding, and exits with the failure's code; --library checks one
 * library; a --library the configuration lacks is a usage error. The runs
 * pass --quick (no idle-session wait).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { explainRun as explain, runDoctorProcess } from '../helpers/doctor.js';
import { type SimulatorProcess, simulatorIls, startSimulatorProcess } from '../helpers/simulator.js';

/** Distinctive, so that finding it anywhere in the output can only be a leak. */
const WRONG_PASSWORD = 'Wx7-libraries-doctor-wrong-4711';

describe('paia-sip2 doctor with two libraries on two simulators', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paia-doctor-libraries-'));
  const file = join(dir, 'libraries.yaml');
  let good: SimulatorProcess;
  let bad: SimulatorProcess;
  let env: Record<string, string>;
  const doctor = (...args: string[]) => runDoctorProcess(['--quick', '--config', file, ...args], env);
  /** The lines of the report from `library <id>` up to the next library's heading (or the end). */
  const section = (stdout: string, id: string): string => {
    const start = stdout.indexOf(`\nlibrary ${id}\n`);
    if (start === -1) return '';
    const next = stdout.indexOf('\nlibrary ', start + 1);
    return stdout.slice(start + 1, next === -1 ? undefined : next);
  };
  const logins = async (sim: SimulatorProcess) => (await sim.counters()).received['93'] ?? 0;

  beforeAll(async () => {
    [good, bad] = await Promise.all([
      startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] }),
      startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] }),
    ]);
    // The top level's sip2 (host, terminal, institution) and paia come from the environment, for both libraries.
    env = simulatorIls(good.port);
    writeFileSync(
      file,
      [
        'libraries:',
        '  DE-830:',
        `    sip2: { port: ${good.port} }`,
        '  DE-18:',
        `    sip2: { port: ${bad.port}, terminal: { password: "${WRONG_PASSWORD}" } }`,
        '',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    await Promise.all([good?.stop(), bad?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await Promise.all([good.reset(), bad.reset()]);
  });

  it('checks both libraries in file order, each against its own ILS; the FAIL names DE-18; exit 1', async () => {
    const run = await doctor();
    expect(run.code, explain(run)).toBe(1);
    const out = run.stdout;
    expect(out.indexOf('\nlibrary DE-830\n'), explain(run)).toBeGreaterThan(0);
    expect(out.indexOf('\nlibrary DE-18\n'), explain(run)).toBeGreaterThan(out.indexOf('\nlibrary DE-830\n'));

    const first = section(out, 'DE-830');
    expect(first).toMatch(new RegExp(`^ILS 127\\.0\\.0\\.1:${good.port} over TCP`, 'm'));
    expect(first).toMatch(
      new RegExp(`^ok {3}connect TCP 127\\.0\\.0\\.1:${good.port} \\+ 93 login as terminal user "paia"`, 'm'),
    );
    expect(first).toMatch(/^ok {3}99 SC status -> 98 ACS status/m);
    expect(first).toMatch(/^ok {3}sessions at once: 4 of libraries\[DE-830\]\.sip2\.pool\.max 4 logged in/m);
    expect(first).toMatch(/^all checks passed$/m);
    expect(first).not.toContain('FAIL');

    const second = section(out, 'DE-18');
    expect(second).toMatch(new RegExp(`^ILS 127\\.0\\.0\\.1:${bad.port} over TCP`, 'm'));
    expect(second).toMatch(
      new RegExp(
        `^FAIL \\[DE-18\\] connect TCP 127\\.0\\.0\\.1:${bad.port} \\+ 93 login as terminal user "paia": the ILS rejected the SIP2 terminal login`,
        'm',
      ),
    );
    expect(second).toMatch(/^1 check failed$/m);
    expect(out.match(/^FAIL /gm), explain(run)).toHaveLength(1);
    expect(out).toMatch(/^libraries: DE-830 passed, DE-18 failed$/m);
    expect(run.stderr).toMatch(
      /^paia-sip2 doctor: library DE-18: 1 check failed, the first: connect TCP [\d.:]+ \+ 93 login as terminal user "paia" \(its FAIL line in the report says why\)$/m,
    );
    expect(run.stderr).not.toMatch(/library DE-830/);
    expect(out + run.stderr).not.toContain(WRONG_PASSWORD);
    expect(out + run.stderr).not.toContain('paia-secret');
    // Each library's sessions went to its own simulator: DE-830's four, DE-18's one refused login.
    expect(await logins(good)).toBe(4);
    expect(await logins(bad)).toBe(1);
  });

  it('--library DE-830 checks that library only; exit 0', async () => {
    const run = await doctor('--library', 'DE-830');
    expect(run.code, explain(run)).toBe(0);
    expect(run.stdout).toMatch(/^library DE-830$/m);
    expect(run.stdout).not.toContain('DE-18');
    expect(run.stdout).toMatch(/^all checks passed$/m);
    expect(await logins(good)).toBe(4);
    expect(await logins(bad)).toBe(0);
  });

  it('a --library the configuration lacks is a usage error listing its libraries, and so is --library without a libraries section; exit 2', async () => {
    const [unknown, single] = await Promise.all([
      doctor('--library', 'DE-1'),
      runDoctorProcess(['--quick', '--library', 'DE-830'], simulatorIls(good.port)),
    ]);
    expect(unknown.code, explain(unknown)).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain(
      'paia-sip2 doctor: --library "DE-1" is not a library of the configuration; its libraries are DE-830, DE-18',
    );
    expect(single.code, explain(single)).toBe(2);
    expect(single.stdout).toBe('');
    expect(single.stderr).toContain('paia-sip2 doctor: --library "DE-830": the configuration has no libraries section');
    expect(await logins(good)).toBe(0);
    expect(await logins(bad)).toBe(0);
  });
});
