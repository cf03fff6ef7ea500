/**
 * `paia-sip2 doctor`: checks the configured ILS step by step, for the
 * sysadmin setting the gateway up next to it.
 *
 *   connect + 93 login (TLS details), 99 -> 98 (what the ACS says it
 *   supports), round-trip times, how many sessions the ILS serves at once;
 *   with a test patron the PAIA login, patron (and whether VuFind gets an
 *   `expires` it can read; without one, whether the dialect sends any), items
 *   and fees exactly as the gateway computes them, the 64's counts against its lists (listCounts),
 *   its fine items against the dialect, the charset of its names and titles; last, whether the ILS closes idle sessions before
 *   the keepalive (skipped with --quick). With state.store "redis", whether Redis answers and may be used (its
 *   eviction policy).
 *
 * With a libraries section (issue 29) every library is checked so, or the
 * one of --library: one after another, in file order, each against its own
 * configuration, under a heading `library <id>`; its FAIL and `!` lines and
 * its line on stderr name it. The exit code is the worst of them.
 *
 * Exit codes: 0 all ok (warnings, marked `!`, included), 1 a check failed, 2
 * a usage or configuration problem. Every wait is bounded by the configured
 * timeouts, and everything opened is closed again, so the process ends by
 * itself. Secrets (terminal and patron passwords) are never printed.
 */
import type { Sip2Setup } from '../../gateway/index.js';
import { written } from '../../log.js';
import {
  acsStatus,
  type CheckContext,
  expiry,
  idleSession,
  openSession,
  patronChecks,
  roundTrips,
  sessionsAtOnce,
  startDemo,
  stateStore,
  withTimeout,
} from './checks.js';
import { type DoctorOptions, type TestPatron, testPatronOf } from './input.js';
import { Abort, Report } from './report.js';

export { type DoctorOptions, librariesToCheck } from './input.js';

/** Bound on each cleanup at the end (closing sessions, the pool, the embedded simulator). */
const CLEANUP_MS = 5_000;
/** How long the report may wait for a pipe to take it: a reader that hangs must not keep the doctor alive. */
const FLUSH_MS = 1000;

/** One library of a libraries section, with its SIP2 side as the gateway would build it. */
export interface DoctorLibrary {
  id: string;
  setup: Sip2Setup;
}

/** What every library's checks are run with. */
interface Run {
  patron: TestPatron | null;
  quick: boolean;
  roundTrips: number;
}

/** Runs the checks on the SIP2 side as the gateway runs it (gateway's sip2Setup); resolves with the exit code. */
export async function runDoctor(setup: Sip2Setup, options: DoctorOptions): Promise<number> {
  const run = await runOf(options);
  if (run === null) return 2;
  const report = reportOf(options.out, null, setup.secrets, run.patron);
  report.line('paia-sip2 doctor');
  // First, on its own: it needs no ILS session, and a failing ILS step must not hide it.
  if (options.stateStore !== undefined) await stateStore(report, options.stateStore);
  await checkIls(setup, report, run);
  return summary(report, options, null);
}

/**
 * The checks of runDoctor for each library of a libraries section, one
 * library after another in the order given, each under a heading naming it
 * and in a report of its own (its FAIL and `!` lines name it too); the state
 * store, which the libraries share, once before them. Resolves with the
 * worst exit code.
 */
export async function runLibrariesDoctor(libraries: readonly DoctorLibrary[], options: DoctorOptions): Promise<number> {
  const run = await runOf(options);
  if (run === null) return 2;
  const shared = reportOf(
    options.out,
    null,
    libraries.flatMap(({ setup }) => setup.secrets),
    run.patron,
  );
  shared.line('paia-sip2 doctor');
  shared.line(`libraries: ${libraries.map(({ id }) => id).join(', ')} (checked one after another)`);
  if (options.stateStore !== undefined) await stateStore(shared, options.stateStore);
  const outcomes: string[] = [];
  let code = 0;
  for (const { id, setup } of libraries) {
    const report = reportOf(options.out, id, setup.secrets, run.patron, options.librarySettings);
    report.line('');
    report.line(`library ${id}`);
    await checkIls(setup, report, run);
    const own = await summary(report, options, id);
    code = Math.max(code, own);
    outcomes.push(`${id} ${own === 0 ? 'passed' : 'failed'}`);
  }
  if (shared.failures > 0) outcomes.push('state store failed');
  shared.line('');
  shared.line(`libraries: ${outcomes.join(', ')}`);
  await written(options.out, FLUSH_MS);
  if (shared.failures > 0) return Math.max(code, await failed(shared, options, null));
  return code;
}

/** The run's settings, after reading the test patron; null on a usage error (exit 2), said on stderr. */
async function runOf(options: DoctorOptions): Promise<Run | null> {
  const read = await testPatronOf(options);
  if (!read.ok) {
    options.err.write(`paia-sip2 doctor: ${read.reason}\n`);
    return null;
  }
  return { patron: read.patron, quick: options.quick === true, roundTrips: options.roundTrips ?? 5 };
}

function reportOf(
  out: NodeJS.WritableStream,
  library: string | null,
  secrets: readonly string[],
  patron: TestPatron | null,
  librarySettings?: ReadonlySet<string>,
): Report {
  const report = new Report(out, library, librarySettings);
  for (const secret of secrets) report.addSecret(secret);
  if (patron) report.addSecret(patron.password);
  return report;
}

/** The checks of one ILS; everything they open is closed again, each cleanup bounded. */
async function checkIls(setup: Sip2Setup, report: Report, run: Run): Promise<void> {
  const cleanups: Array<() => unknown> = [];
  try {
    await steps(setup, report, cleanups, run);
  } catch (error) {
    if (!(error instanceof Abort)) throw error;
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await withTimeout(Promise.resolve().then(cleanup), CLEANUP_MS, 'cleanup').catch(() => {});
    }
  }
}

/** The report's last lines, and its exit code: 0 passed (warnings included), 1 a check failed. */
async function summary(report: Report, options: DoctorOptions, library: string | null): Promise<number> {
  report.line('');
  if (report.failures === 0) {
    report.line('all checks passed');
    if (report.warnings > 0)
      report.line(`${report.warnings} warning${report.warnings === 1 ? '' : 's'}: see the lines marked "!"`);
    await written(options.out, FLUSH_MS);
    return 0;
  }
  report.line(failedChecks(report));
  await written(options.out, FLUSH_MS);
  return failed(report, options, library);
}

const failedChecks = (report: Report) => `${report.failures} check${report.failures === 1 ? '' : 's'} failed`;

/** For a run whose report goes to a file: which step failed, not again why (one terminal shows both streams). */
async function failed(report: Report, options: DoctorOptions, library: string | null): Promise<number> {
  options.err.write(
    `paia-sip2 doctor: ${library === null ? '' : `library ${library}: `}${failedChecks(report)}, the first: ${report.firstFailedStep} (its FAIL line in the report says why)\n`,
  );
  await written(options.err, FLUSH_MS);
  return 1;
}

/** The sequence: each step builds on the one before, and a FAIL (Abort) ends it. */
async function steps(setup: Sip2Setup, report: Report, cleanups: Array<() => unknown>, run: Run): Promise<void> {
  const { settings, dialect } = setup;
  const target = setup.startDemo ? await startDemo(setup, setup.startDemo, report, cleanups) : setup.target;
  if (target === null) throw new Error('no SIP2 target: neither sip2.host nor the embedded simulator');
  report.line(
    `ILS ${target.host}:${target.port} over ${settings.tls ? 'TLS' : 'TCP'}, dialect ${dialect.name}, terminal user "${settings.terminal.user}"` +
      `${settings.terminal.location ? ` at location "${settings.terminal.location}"` : ''}, institution "${settings.institution}"`,
  );
  report.line('');

  const ctx: CheckContext = {
    setup,
    settings,
    dialect,
    tls: settings.tls,
    target,
    report,
    session: setup.session(target),
    cleanups,
  };
  const first = await openSession(ctx);
  const acs = await acsStatus(ctx, first);
  await roundTrips(ctx, first, run.roundTrips);
  await sessionsAtOnce(ctx);
  // The patron's calls get sessions of their own, as in the gateway; a one-worker ILS needs this one gone first.
  first.close('doctor: first session done');

  if (run.patron === null) {
    report.line('');
    report.skip(
      'PAIA methods: give --patron NAME (password in PAIA_DOCTOR_PASSWORD or on stdin) to see what they return',
    );
    expiry(ctx, null);
  } else {
    await patronChecks(ctx, acs, run.patron);
  }
  report.line('');
  await idleSession(ctx, run.quick);
}
