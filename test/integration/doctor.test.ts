import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { explainRun as explain, type DoctorRun as Run, runDoctorProcess, warningBlock } from '../helpers/doctor.js';
import { freePort } from '../helpers/free-port.js';
import { type RedisServer, startRedisServer } from '../helpers/redis.js';
import { type SimulatorProcess, simulatorIls, startSimulatorProcess } from '../helpers/simulator.js';

/**
 * `paia-sip2 doctor` as a sysadmin runs it: the real CLI in its own process,
 * against the simulator in another. These runs pass --quick (no idle-session
 * wait) unless they test it; doctor-real-servers.test.ts has the checks
 * against the simulator's real-server profiles.
 */

/** Distinctive, so that finding them anywhere in the output can only be a leak. */
const TERMINAL_SECRET = 'Tq8-doctor-terminal-secret-4711';
const PATRON_SECRET = 'Pw5-doctor-patron-secret-0815';

const doctor = (args: string[], env: Record<string, string>, stdin?: string): Promise<Run> =>
  runDoctorProcess(['--quick', ...args], env, stdin);

/** The list-count step as printed: its ok line and the lines below it, up to the next step. */
function countStep(stdout: string): string {
  const lines = stdout.split('\n');
  const at = lines.findIndex((line) => line.startsWith('ok   list counts'));
  if (at === -1) return '';
  const next = lines.findIndex((line, i) => i > at && /^(ok|skip|FAIL|wait) /.test(line));
  return lines.slice(at, next).join('\n');
}

describe('paia-sip2 doctor', () => {
  let sim: SimulatorProcess;
  let ils: Record<string, string>;

  beforeAll(async () => {
    sim = await startSimulatorProcess();
    ils = simulatorIls(sim.port);
  });
  afterAll(async () => {
    await sim?.stop();
  });
  beforeEach(async () => {
    await sim.reset();
  });

  it('checks a healthy ILS: login, ACS status with the 16 supported messages, round-trip times, sessions at once; exit 0', async () => {
    const run = await doctor([], ils);
    expect(run.code, explain(run)).toBe(0);
    const out = run.stdout;
    expect(out).toMatch(
      new RegExp(
        `^ok   connect TCP 127\\.0\\.0\\.1:${sim.port} \\+ 93 login as terminal user "paia" \\([\\d.]+ ms\\)$`,
        'm',
      ),
    );
    expect(out).toMatch(/^ok {3}99 SC status -> 98 ACS status \([\d.]+ ms\)$/m);
    expect(out).toMatch(/on-line: yes/);
    expect(out).toMatch(/protocol version: 2\.00/);
    expect(out).toMatch(/institution: DEMO/);
    expect(out).toMatch(/library name: Demo Public Library/);
    // The simulator's BX is YYYYYYYYYYYYYYYY: every position by name, with yes or no.
    const listed = [...out.matchAll(/^ {7}(yes|no)\s+(\d\d) (.+?)(?:\s{2,}used for .*)?$/gm)].map((m) => [
      m[2],
      m[1],
      m[3]!.trim(),
    ]);
    expect(listed).toEqual([
      ['23', 'yes', 'Patron Status Request'],
      ['11', 'yes', 'Checkout'],
      ['09', 'yes', 'Checkin'],
      ['01', 'yes', 'Block Patron'],
      ['99', 'yes', 'SC Status'],
      ['97', 'yes', 'Request ACS Resend'],
      ['93', 'yes', 'Login'],
      ['63', 'yes', 'Patron Information'],
      ['35', 'yes', 'End Patron Session'],
      ['37', 'yes', 'Fee Paid'],
      ['17', 'yes', 'Item Information'],
      ['19', 'yes', 'Item Status Update'],
      ['25', 'yes', 'Patron Enable'],
      ['15', 'yes', 'Hold'],
      ['29', 'yes', 'Renew'],
      ['65', 'yes', 'Renew All'],
    ]);
    expect(out).toMatch(/^ok {3}round trips, 5 x 99: min [\d.]+ ms, median [\d.]+ ms, max [\d.]+ ms \([\d.]+ ms\)$/m);
    expect(out).toMatch(/^ok {3}sessions at once: 4 of sip2\.pool\.max 4 logged in \([\d.]+ ms\)$/m);
    expect(out).toMatch(/^skip PAIA methods: give --patron/m);
    expect(out).toMatch(/^skip idle session: --quick/m);
    expect(out).toMatch(/^all checks passed$/m);
    expect(out).not.toContain('FAIL');
    expect(out).not.toMatch(/^ {5}! /m);
    expect(out + run.stderr).not.toContain('paia-secret');
    // The first session (93, its own 99, the status step's 99, five timed ones), then three further sessions (93, 99 each).
    const counters = await sim.counters();
    expect(counters.received['93']).toBe(4);
    expect(counters.received['99']).toBe(10);
  });

  it('with --patron shows what login, patron, items and fees return, and sends no renew or hold', async () => {
    const run = await doctor(['--patron', 'alice'], { ...ils, PAIA_DOCTOR_PASSWORD: 'alice-pass' });
    expect(run.code, explain(run)).toBe(0);
    const out = run.stdout;
    expect(out).toMatch(/^ok {3}PAIA login: 63 patron information with the patron's password \([\d.]+ ms\)$/m);
    expect(out).toMatch(/ILS barcode "alice", account state 0 \(active\)/);
    expect(out).toMatch(/^ok {3}PAIA patron \([\d.]+ ms\)$/m);
    expect(out).toContain('"name": "Alice Example"');
    expect(out).toMatch(/^ok {3}PAIA items \([\d.]+ ms\)$/m);
    expect(out).toMatch(/^ {5}5 documents, all shown$/m);
    expect(out).toContain('"about": "Der Zauberberg"');
    expect(out).toMatch(/^ok {3}PAIA fees \([\d.]+ ms\)$/m);
    expect(out).toContain('"amount": "3.50 EUR"');
    expect(out).toMatch(/total 3\.50 EUR, 2 fees/);
    expect(out).toMatch(
      /^ok {3}fine items \(AV\): 2 read with a 63 fine summary, 2 fit the patterns of dialect generic \([\d.]+ ms\)$/m,
    );
    expect(out).toMatch(/^ok {3}charset cp850: 9 names and titles checked, none looks mis-decoded$/m);
    expect(out).not.toMatch(/^ {5}! /m);
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
    expect(run.stdout).toMatch(
      /^FAIL connect TCP [\d.:]+ \+ 93 login as terminal user "paia": the ILS rejected the SIP2 terminal login/m,
    );
    expect(run.stdout).toMatch(/check sip2\.terminal\.user \("paia"\), sip2\.terminal\.password/);
    // The finding once, in the report; stderr names the step only (a terminal shows both streams).
    const both = run.stdout + run.stderr;
    expect(both.split('the ILS rejected the SIP2 terminal login').length - 1, explain(run)).toBe(1);
    expect(both.match(/^FAIL /gm), explain(run)).toHaveLength(1);
    expect(run.stderr).toMatch(
      /^paia-sip2 doctor: 1 check failed, the first: connect TCP [\d.:]+ \+ 93 login as terminal user "paia" \(its FAIL line in the report says why\)$/m,
    );
    expect(run.stdout + run.stderr).not.toContain(TERMINAL_SECRET);
    expect(run.stdout).not.toContain('all checks passed');
  });

  it('an ILS that refuses connections: exit 1 with the reason within a few seconds', async () => {
    const port = await freePort();
    const run = await doctor([], simulatorIls(port));
    expect(run.code, explain(run)).toBe(1);
    expect(run.stdout).toMatch(
      new RegExp(
        `^FAIL connect TCP 127\\.0\\.0\\.1:${port} \\+ 93 login as terminal user "paia": connection refused \\(nothing listens there\\): check sip2\\.host`,
        'm',
      ),
    );
    expect(run.stdout).not.toMatch(/^ok {3}connect/m);
    expect(run.ms).toBeLessThan(10_000);
  });

  it('a refused patron login: exit 1 saying so, without the password', async () => {
    const run = await doctor(['--patron', 'alice'], { ...ils, PAIA_DOCTOR_PASSWORD: PATRON_SECRET });
    expect(run.code, explain(run)).toBe(1);
    expect(run.stdout).toMatch(/^ok {3}connect TCP [\d.:]+ \+ 93 login/m);
    expect(run.stdout).toMatch(
      /^FAIL PAIA login: 63 patron information with the patron's password: the ILS refused the patron login for "alice"/m,
    );
    expect(run.stdout).not.toMatch(/^ok {3}PAIA login/m);
    expect(run.stdout).not.toMatch(/^ok {3}PAIA items/m);
    expect(run.stdout + run.stderr).not.toContain(PATRON_SECRET);
  });

  it('without sip2.host checks the embedded simulator and says so', async () => {
    const run = await doctor([], {});
    expect(run.code, explain(run)).toBe(0);
    expect(run.stdout).toMatch(
      /^ok {3}start the embedded SIP2 simulator \(demo mode: sip2\.host is not set\) \([\d.]+ ms\)$/m,
    );
    expect(run.stdout).toMatch(/the embedded simulator with the demo library listens on 127\.0\.0\.1:\d+/);
    expect(run.stdout).toMatch(/^ok {3}connect TCP 127\.0\.0\.1:\d+ \+ 93 login/m);
    expect(run.stdout).toMatch(/^ok {3}round trips, 5 x 99/m);
    expect(run.stdout).toMatch(/^all checks passed$/m);
    // The doctor talked to its own simulator, not to the test's.
    expect((await sim.counters()).received['93'] ?? 0).toBe(0);
  });
  describe("the 64's counts against the lists (profile counts=...)", () => {
    const alice = { PAIA_DOCTOR_PASSWORD: 'alice-pass' };
    let dir: string;
    /** The generic dialect with listCounts: unreliable, as a sysadmin writes one (docs/dialects.md, "Dialects"). */
    let untrusting: string;

    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'paia-doctor-dialect-'));
      untrusting = join(dir, 'untrusting.yaml');
      const generic = readFileSync(new URL('../../config/dialects/generic.yaml', import.meta.url), 'utf8');
      expect(generic).toMatch(/^listCounts: reliable$/m);
      writeFileSync(
        untrusting,
        generic
          .replace(/^name: generic$/m, 'name: untrusting')
          .replace(/^listCounts: reliable$/m, 'listCounts: unreliable'),
      );
    });
    afterAll(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    });
    afterEach(async () => {
      await sim.setProfile('none');
    });

    it('with exact counts prints each list’s count and entries (never the entries) and no warning', async () => {
      const run = await doctor(['--patron', 'alice'], { ...ils, ...alice });
      expect(run.code, explain(run)).toBe(0);
      const step = countStep(run.stdout);
      expect(step).toMatch(
        /^ok {3}list counts: 6 lists read with 6 63s; counts: 6 matching, 0 differing, 0 blank \([\d.]+ ms\)$/m,
      );
      // alice: 3 loans (1 overdue), fines f-0001 and f-0002, a hold ready (it-0010) and one pending (it-0020).
      expect(step.split('\n').slice(1, 7)).toEqual([
        '     hold (AS): count 2, 2 entries',
        '     overdue (AT): count 1, 1 entry',
        '     charged (AU): count 3, 3 entries',
        '     fine (AV): count 2, 2 entries',
        '     recall (BU): count 0, 0 entries',
        '     unavailable hold (CD): count 1, 1 entry',
      ]);
      expect(step).toContain('the counts match the lists, as dialect generic (listCounts: reliable) expects');
      expect(step).not.toMatch(/it-00|Zauberberg|overdue 2/);
      expect(run.stdout).not.toMatch(/^ {5}! /m);
    });

    it('with counts=zero and the trusting generic dialect warns, names the lists and numbers, and advises listCounts: unreliable; exit 0', async () => {
      await sim.setProfile('counts=zero');
      const run = await doctor(['--patron', 'alice'], { ...ils, ...alice });
      expect(run.code, explain(run)).toBe(0);
      const step = countStep(run.stdout);
      expect(step).toMatch(/counts: 1 matching, 5 differing, 0 blank/);
      expect(step).toContain('     hold (AS): count 0, 2 entries: does not match');
      expect(step).toContain('     recall (BU): count 0, 0 entries\n');
      const warning = warningBlock(run.stdout, '64 counts do not match its lists');
      expect(warning, run.stdout).not.toBeNull();
      expect(warning).toContain(
        "! the ILS's 64 counts do not match its lists (hold (AS) count 0, 2 entries; overdue (AT) count 0, 1 entry; " +
          'charged (AU) count 0, 3 entries; fine (AV) count 0, 2 entries; unavailable hold (CD) count 0, 1 entry), ' +
          'but dialect generic trusts them (listCounts: reliable):',
      );
      expect(warning).toContain('it skips hold (AS), overdue (AT), unavailable hold (CD)');
      expect(warning).toContain(
        "Fix: set listCounts: unreliable in a dialect file of your own (copy config/dialects/generic.yaml, set listCounts: unreliable in it, set sip2.dialect to the file's path)",
      );
      expect(run.stdout).toMatch(/^all checks passed$/m);
    });

    it('with counts=zero warns for a patron with holds and no loans, whose holds the gateway then misses without noticing', async () => {
      await sim.setProfile('counts=zero');
      const run = await doctor(['--patron', 'gina'], { ...ils, PAIA_DOCTOR_PASSWORD: 'gina-pass' });
      expect(run.code, explain(run)).toBe(0);
      // What the gateway makes of it: no documents, and no warning of its own (no charged page to contradict).
      expect(run.stdout).toMatch(/^ok {3}PAIA items \([\d.]+ ms\)\n {5}\{\n {7}"doc": \[\]\n {5}\}\n {5}0 documents$/m);
      expect(run.stdout).not.toContain('announced fewer charged items');
      const warning = warningBlock(run.stdout, '64 counts do not match its lists');
      expect(warning, run.stdout).toContain('(hold (AS) count 0, 1 entry; unavailable hold (CD) count 0, 1 entry)');
      expect(warning).toContain('for a patron without loans it cannot');
      expect(warning).toContain('set listCounts: unreliable');
    });

    it('with counts=blank says every list is read on every call, whatever the dialect says, and does not warn', async () => {
      await sim.setProfile('counts=blank');
      const run = await doctor(['--patron', 'alice'], { ...ils, ...alice });
      expect(run.code, explain(run)).toBe(0);
      const step = countStep(run.stdout);
      expect(step).toMatch(/counts: 0 matching, 0 differing, 6 blank/);
      expect(step).toContain('     charged (AU): count blank (unknown), 3 entries');
      expect(step).toContain(
        'all six lists have blank counts: the gateway reads those lists on every call, whatever listCounts says (dialect generic: reliable)',
      );
      expect(step).not.toContain('the counts match');
      expect(run.stdout).not.toMatch(/^ {5}! /m);
    });

    it('with a dialect marked listCounts: unreliable and exact counts says a trusting dialect would save messages, without a warning', async () => {
      const run = await doctor(['--patron', 'alice'], { ...ils, ...alice, PAIA_SIP2_DIALECT: untrusting });
      expect(run.code, explain(run)).toBe(0);
      expect(run.stdout).toMatch(/, dialect untrusting, /);
      expect(countStep(run.stdout)).toContain(
        'the counts match the lists: a dialect with listCounts: reliable would save SIP2 messages on this ILS',
      );
      expect(run.stdout).not.toMatch(/^ {5}! /m);
    });
  });

  // VuFind PAIA.php checkRequestIsValid: no hold or request form without status 0, an expires after today
  // and write_items; FOLIO's edge-sip2 sends no expiry date.
  describe('expires for VuFind (dialect folio, which reads no expiry date)', () => {
    let folio: SimulatorProcess;
    let env: Record<string, string>;

    beforeAll(async () => {
      folio = await startSimulatorProcess({ dialect: 'folio' });
      env = { ...simulatorIls(folio.port), PAIA_SIP2_DIALECT: 'folio', PAIA_DOCTOR_PASSWORD: 'alice-pass' };
    });
    afterAll(async () => {
      await folio?.stop();
    });

    it('warns, with and without a test patron, naming VuFind’s condition and paia.expiresWhenUnknown; exit 0', async () => {
      const withPatron = await doctor(['--patron', 'alice'], env);
      const without = await doctor([], env);
      for (const run of [withPatron, without]) {
        expect(run.code, explain(run)).toBe(0);
        expect(run.stdout).toContain(
          "VuFind's PAIA driver offers a hold or request form only to a patron with status 0",
        );
        expect(run.stdout).toContain('Fix: set paia.expiresWhenUnknown (PAIA_PAIA_EXPIRES_WHEN_UNKNOWN)');
      }
      expect(
        warningBlock(withPatron.stdout, 'the patron record has no expires: dialect folio reads no expiry date'),
      ).not.toBeNull();
      expect(
        warningBlock(without.stdout, 'dialect folio reads no expiry date, so no patron record has expires'),
      ).not.toBeNull();
    });

    it('with paia.expiresWhenUnknown set: the patron record carries it, and no warning', async () => {
      const run = await doctor(['--patron', 'alice'], { ...env, PAIA_PAIA_EXPIRES_WHEN_UNKNOWN: '9999-12-31' });
      expect(run.code, explain(run)).toBe(0);
      expect(run.stdout).toContain('"expires": "9999-12-31"');
      expect(run.stdout).not.toMatch(/^ {5}! /m);
    });
  });

  describe('the state store (state.store: redis)', () => {
    let redis: RedisServer;
    let raw: Redis;
    let store: Record<string, string>;

    beforeAll(async () => {
      redis = await startRedisServer();
      raw = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      raw.on('error', () => {});
      await raw.connect();
      store = { PAIA_STATE_STORE: 'redis', PAIA_STATE_REDIS_URL: redis.url };
    });
    afterAll(async () => {
      raw?.disconnect();
      await redis?.close();
    });

    it('says that Redis answers and keeps its keys', async () => {
      const run = await doctor([], { ...ils, ...store });
      expect(run.code, explain(run)).toBe(0);
      expect(run.stdout).toMatch(
        /^ok {3}state store redis \(redis:\/\/127\.0\.0\.1:\d+\): answers, and may not evict keys \([\d.]+ ms\)$/m,
      );
    });

    it('fails a Redis that may evict keys, with the policy and the fix, and still checks the ILS; exit 1', async () => {
      await raw.config('SET', 'maxmemory-policy', 'allkeys-lru');
      try {
        const run = await doctor([], { ...ils, ...store });
        expect(run.code, explain(run)).toBe(1);
        expect(run.stdout).toMatch(/^FAIL state store redis: .*may evict keys \(maxmemory-policy allkeys-lru\)/m);
        expect(run.stdout).toContain('CONFIG SET maxmemory-policy noeviction');
        expect(run.stdout).toMatch(/^ok {3}sessions at once/m);
      } finally {
        await raw.config('SET', 'maxmemory-policy', 'noeviction');
      }
    });
  });
});
