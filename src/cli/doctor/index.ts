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
 * Exit codes: 0 all ok (warnings, marked `!`, included), 1 a check failed, 2
 * a usage or configuration problem. Every wait is bounded by the configured
 * timeouts, and everything opened is closed again, so the process ends by
 * itself. Secrets (terminal and patron passwords) are never printed.
 */
import type { Sip2Setup } from '../../gateway/index.js';
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
import { Abort, flush, Report } from './report.js';

export type { DoctorOptions } from './input.js';

/** Bound on each cleanup at the end (closing sessions, the pool, the embedded simulator). */
const CLEANUP_MS = 5_000;

/** Runs the checks on the SIP2 side as the gateway runs it (gateway's sip2Setup); resolves with the exit code. */
export async function runDoctor(setup: Sip2Setup, options: DoctorOptions): Promise<number> {
  const report = new Report(options.out);
  for (const secret of setup.secrets) report.addSecret(secret);

  // ---------------------------------------------------------- usage (exit 2)
  const read = await testPatronOf(options);
  if (!read.ok) {
    options.err.write(`paia-sip2 doctor: ${read.reason}\n`);
    return 2;
  }
  if (read.patron) report.addSecret(read.patron.password);

  const cleanups: Array<() => unknown> = [];
  try {
    await steps(setup, report, cleanups, {
      patron: read.patron,
      quick: options.quick === true,
      roundTrips: options.roundTrips ?? 5,
      stateStore: options.stateStore,
    });
  } catch (error) {
    if (!(error instanceof Abort)) throw error;
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await withTimeout(Promise.resolve().then(cleanup), CLEANUP_MS, 'cleanup').catch(() => {});
    }
  }

  report.line('');
  if (report.failures === 0) {
    report.line('all checks passed');
    if (report.warnings > 0)
      report.line(`${report.warnings} warning${report.warnings === 1 ? '' : 's'}: see the lines marked "!"`);
    await flush(options.out);
    return 0;
  }
  const failed = `${report.failures} check${report.failures === 1 ? '' : 's'} failed`;
  report.line(failed);
  await flush(options.out);
  // For a run whose report goes to a file: which step failed, not again why (one terminal shows both streams).
  options.err.write(
    `paia-sip2 doctor: ${failed}, the first: ${report.firstFailedStep} (its FAIL line in the report says why)\n`,
  );
  await flush(options.err);
  return 1;
}

/** The sequence: each step builds on the one before, and a FAIL (Abort) ends it. */
async function steps(
  setup: Sip2Setup,
  report: Report,
  cleanups: Array<() => unknown>,
  run: {
    patron: TestPatron | null;
    quick: boolean;
    roundTrips: number;
    stateStore: DoctorOptions['stateStore'];
  },
): Promise<void> {
  const { settings, dialect } = setup;
  report.line('paia-sip2 doctor');
  // First, on its own: it needs no ILS session, and a failing ILS step must not hide it.
  if (run.stateStore !== undefined) await stateStore(report, run.stateStore);
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
