import { performance } from 'node:perf_hooks';
import { localDateOf } from '../../backend/account-state.js';
import { inBackendTerms } from '../../backend/errors.js';
import type { Sip2Backend } from '../../backend/sip2-backend.js';
import type { AccountState, FeeRecord, PaiaDocument, PatronRecord } from '../../backend/types.js';
import type { Sip2Setup, StateStoreCheck } from '../../gateway/index.js';
import { createLogger, type Logger } from '../../log.js';
import {
  type AcsStatus,
  type ConnectionOptions,
  decodeText,
  encodeText,
  fetchPatronList,
  IlsTimeout,
  IlsUnavailable,
  listCount,
  parseFineItem,
  SC_STATUS,
  Sip2Connection,
  type Sip2Pool,
  SUMMARY_LISTS,
  type SummaryList,
  type TlsSessionInfo,
  toDate,
} from '../../sip2/index.js';
import {
  type AdviceContext,
  charsetAdvice,
  countLine,
  countsAdvice,
  expiryAdvice,
  explainDemoStart,
  explainOpen,
  explainPatronStep,
  explainRequest,
  fineAdvice,
  idleCloseAdvice,
  messageOf,
  sessionLimitAdvice,
} from './advice.js';
import {
  type CharsetFinding,
  type CountVerdict,
  charsetFinding,
  charsetOfTexts,
  countVerdict,
  fineFindings,
  holdListsOf,
  type IlsEvidence,
  type ListCount,
  supportedMessages,
} from './findings.js';
import type { TestPatron } from './input.js';
import { CheckFailed, formatMs, type Report } from './report.js';

/**
 * The doctor's checks, each one step (or a few) of the report. Sessions are
 * opened exactly as the gateway opens them (sip2ConnectionOptions, and the
 * patron's calls go through the gateway's own pool and backend). Renew,
 * request and cancel change the ILS and are never sent.
 */

export interface CheckContext extends AdviceContext {
  /** The SIP2 side as the gateway runs it: sessions, pool, backend, message builders. */
  setup: Sip2Setup;
  report: Report;
  /** One session's settings, as the gateway's pool opens them. */
  session: Omit<ConnectionOptions, 'id'>;
  /** Run at the end, last registered first, each bounded. */
  cleanups: Array<() => unknown>;
}

/** At most this many documents (and fees) of each PAIA answer are printed. */
const SHOWN_DOCUMENTS = 5;
/** Bound on starting the embedded simulator and on closing the pool. */
const CLEANUP_MS = 5_000;
/** A backstop only: the store check is bounded by state.redis.connectTimeoutMs and commandTimeoutMs itself. */
const STORE_CHECK_BOUND_MS = 30_000;
/** A 98 date/time sync further off than this is worth a warning. */
const CLOCK_SKEW_MS = 5 * 60_000;

const ACCOUNT_STATES: Record<AccountState, string> = {
  0: 'active',
  1: 'inactive',
  2: 'expired',
  3: 'outstanding fees',
  4: 'expired and outstanding fees',
};

// ---------------------------------------------------------------- demo mode

/** Demo mode, as the gateway does it: the embedded simulator with the demo library. */
export async function startDemo(
  setup: Sip2Setup,
  start: NonNullable<Sip2Setup['startDemo']>,
  report: Report,
  cleanups: Array<() => unknown>,
): Promise<{ host: string; port: number }> {
  const simulator = await report.step(
    'start the embedded SIP2 simulator (demo mode: sip2.host is not set)',
    () => withTimeout(start(createLogger({ level: 'silent' })), CLEANUP_MS, 'starting the simulator'),
    (error) => explainDemoStart(error, setup.settings),
  );
  cleanups.push(() => simulator.stop());
  const { host, port } = simulator.target;
  report.detail(
    `the embedded simulator with the demo library listens on ${host}:${port} (dialect ${setup.settings.demo?.dialect});`,
  );
  report.detail('set sip2.host (PAIA_SIP2_HOST) to check a real library system');
  return simulator.target;
}

// ---------------------------------------------------------------- the first session

/**
 * Connect and 93 login on one socket, as every session of the gateway starts.
 * There is no bare connection before it: a pre-forking SIP server hands
 * every accepted connection to a worker, and one that never logs in holds
 * that worker until the server's timeout.
 */
export async function openSession(ctx: CheckContext): Promise<Sip2Connection> {
  const { report, target } = ctx;
  const answered = new Set<string>();
  const connection = await report.step(
    `connect ${ctx.tls ? 'TLS' : 'TCP'} ${target.host}:${target.port} + 93 login as terminal user "${ctx.settings.terminal.user}"`,
    () =>
      Sip2Connection.open({
        ...ctx.session,
        id: 1,
        onRoundTrip: (event) => event.outcome === 'ok' && answered.add(event.code),
      }),
    (error) => explainOpen(error, ctx, answered),
  );
  ctx.cleanups.push(() => connection.close('doctor done'));
  const session = connection.tlsSession;
  if (session) {
    report.detail(describeTls(session));
    if (!session.verified) {
      report.warn(
        `the ILS's certificate was not verified (${session.verifyError ?? 'no reason given'}) because sip2.tls.rejectUnauthorized is false:`,
        'whoever sits between this host and the ILS can read the terminal and patron passwords. Set sip2.tls.ca to the CA that signed it instead.',
      );
    }
  }
  return connection;
}

function describeTls(session: TlsSessionInfo): string {
  const issuer = session.issuer ? `, issued by ${session.issuer}` : '';
  return (
    `${session.protocol ?? 'TLS'}, certificate ${session.subject ?? '(no CN)'}${issuer}, valid until ${session.validTo ?? '?'}, ` +
    `${session.verified ? 'verified' : 'NOT verified'}`
  );
}

/** 99 -> 98: what the ACS says it is and supports. */
export async function acsStatus(ctx: CheckContext, connection: Sip2Connection): Promise<AcsStatus> {
  const status = await ctx.report.step(
    '99 SC status -> 98 ACS status',
    () => connection.send(SC_STATUS),
    (error) => explainRequest(error, '99', ctx),
  );
  describeAcs(status, ctx);
  return status;
}

/** Prints what the 98 says: on-line status, protocol, institution, library, and the 16 supported messages. */
function describeAcs(status: AcsStatus, ctx: CheckContext): void {
  const { report, settings } = ctx;
  report.detail(`on-line: ${status.onlineStatus ? 'yes' : 'no'}`);
  report.detail(`protocol version: ${status.protocolVersion.trim() || '(not given)'}`);
  report.detail(`institution: ${status.institutionId || '(not given)'}`);
  report.detail(`library name: ${status.libraryName?.trim() || '(not given)'}`);
  if (status.terminalLocation) report.detail(`terminal location: ${status.terminalLocation}`);
  for (const line of status.screenMessage ?? []) report.detail(`screen message: ${line}`);
  const bx = supportedMessages(status.supportedMessages);
  report.detail(`supported messages (BX ${status.supportedMessages || '(empty)'}):`);
  for (const row of bx.rows) report.detail(`  ${row}`);

  if (!status.onlineStatus) {
    report.fail(
      'ACS on-line',
      'the ILS says its SIP2 service is off-line (98 on-line status N); PAIA requests will fail until it is on-line again',
    );
  }
  for (const warning of bx.warnings) report.warn(warning);
  if (status.institutionId && status.institutionId !== settings.institution) {
    report.warn(
      `sip2.institution is "${settings.institution}" but the ILS calls itself "${status.institutionId}" (98 AO); many ILSs need them to match`,
    );
  }
  if (status.dateTimeSync) {
    const skew = toDate(status.dateTimeSync).getTime() - Date.now();
    if (Math.abs(skew) > CLOCK_SKEW_MS) {
      report.warn(
        `the ILS clock is ${Math.round(Math.abs(skew) / 60_000)} min ${skew > 0 ? 'ahead of' : 'behind'} this host's (98 date/time sync): ` +
          'check NTP and time zones on both, or due dates near midnight may be off by a day',
      );
    }
  }
}

/** `count` 99s one after the other: min, median and max round-trip time. */
export async function roundTrips(ctx: CheckContext, connection: Sip2Connection, count: number): Promise<void> {
  const { responseMs } = ctx.settings.timeouts;
  const times: number[] = [];
  await ctx.report.step(
    `round trips, ${count} x 99`,
    async () => {
      for (let i = 0; i < count; i++) {
        const start = performance.now();
        await connection.send(SC_STATUS);
        times.push(performance.now() - start);
      }
    },
    (error) => explainRequest(error, '99', ctx),
    () => {
      const sorted = [...times].sort((a, b) => a - b);
      return `round trips, ${count} x 99: min ${formatMs(sorted[0]!)} ms, median ${formatMs(median(sorted))} ms, max ${formatMs(sorted.at(-1)!)} ms`;
    },
  );
  const slowest = Math.max(...times);
  if (slowest > responseMs / 2) {
    ctx.report.warn(
      `the slowest round trip (${formatMs(slowest)} ms) is more than half of sip2.timeouts.responseMs (${responseMs} ms): consider raising it`,
    );
  }
}

// ---------------------------------------------------------------- sessions at once

/**
 * With the first session up, the other sip2.pool.max - 1 at once, as the
 * gateway opens them under load: how many logins does the ILS answer within
 * sip2.timeouts.responseMs? Every session opened here is closed again.
 */
export async function sessionsAtOnce(ctx: CheckContext): Promise<void> {
  const { report, settings } = ctx;
  const { max } = settings.pool;
  const { connectMs, responseMs } = settings.timeouts;
  if (max <= 1) {
    report.skip('sessions at once: sip2.pool.max is 1, the gateway opens one session');
    return;
  }
  const further = max - 1;
  report.wait(
    `up to ${formatSeconds(connectMs + 2 * responseMs)} s: ${further} further session${further === 1 ? '' : 's'} at once, as the gateway opens them ` +
      `under load (sip2.pool.max ${max}); a login not answered within sip2.timeouts.responseMs (${responseMs} ms) counts as not served`,
  );
  const outcome = await report.step(
    'sessions at once',
    async () => {
      const opened = await Promise.allSettled(
        Array.from({ length: further }, (_, i) => Sip2Connection.open({ ...ctx.session, id: i + 2 })),
      );
      let served = 1;
      let unanswered = 0;
      const refused = new Map<string, number>();
      for (const result of opened) {
        if (result.status === 'fulfilled') {
          served++;
          result.value.close('doctor: sessions counted');
          continue;
        }
        const error = result.reason as unknown;
        // Accepted by the kernel but not served: the pre-forking server's worker limit.
        if (error instanceof IlsTimeout) unanswered++;
        else {
          const reason = error instanceof IlsUnavailable ? error.reason : messageOf(error);
          refused.set(reason, (refused.get(reason) ?? 0) + 1);
        }
      }
      return { served, unanswered, refused };
    },
    (error) => messageOf(error),
    ({ served }) => `sessions at once: ${served} of sip2.pool.max ${max} logged in`,
  );
  if (outcome.served < max) {
    const advice = sessionLimitAdvice(outcome.served, max, outcome.unanswered, outcome.refused, responseMs);
    report.warn(advice.text, ...advice.more);
  }
}

// ---------------------------------------------------------------- the test patron

/** Login, patron, items (and the 64's counts against the lists) and fees through the pool and backend the gateway builds, then the fine items and the charset. */
export async function patronChecks(ctx: CheckContext, acs: AcsStatus, patron: TestPatron): Promise<void> {
  const { setup, report } = ctx;
  const warnings: string[] = [];
  const logger = collectingLogger(warnings);
  // Sessions only as the methods need them, as many in parallel as the gateway would use; no keepalive for a run of seconds.
  const pool = setup.pool(ctx.target, { logger }, { min: 0, keepaliveIntervalMs: 0 });
  ctx.cleanups.push(() => pool.close(CLEANUP_MS));
  let backend: Sip2Backend;
  try {
    // The 98 of the doctor's first session: the pool's may not exist yet.
    backend = setup.backend(pool, { acsStatus: () => pool.acsStatus ?? acs, logger });
  } catch (error) {
    report.fatal(
      'set up the PAIA backend',
      `${messageOf(error)}; check sip2.currency, sip2.pageSize and the paia URI templates`,
    );
  }
  const explain = (error: unknown) => explainPatronStep(error, ctx);
  const showWarnings = () => {
    for (const warning of warnings.splice(0)) report.warn(warning);
  };

  report.line('');
  report.line(`PAIA methods for test patron "${patron.name}":`);
  const login = await report.step(
    "PAIA login: 63 patron information with the patron's password",
    async () => {
      const outcome = await backend.login(patron.name, patron.password);
      if (!outcome.ok) {
        throw new CheckFailed(
          `the ILS refused the patron login for "${patron.name}" (its 64 did not say BL valid patron = Y and CQ valid password = Y); ` +
            'check the test patron\'s user name or barcode and the password (PAIA_DOCTOR_PASSWORD); a PAIA client would get "access denied"',
        );
      }
      return outcome;
    },
    explain,
  );
  showWarnings();
  const barcode = login.barcode;
  report.detail(`ILS barcode "${barcode}", account state ${login.state} (${ACCOUNT_STATES[login.state]})`);

  const record = await report.step(
    'PAIA patron',
    async () => {
      const found = await backend.patron(barcode);
      if (found === null) {
        throw new CheckFailed(
          `the ILS does not know the barcode "${barcode}" it returned at login (64 BL not Y); a PAIA client would get 404`,
        );
      }
      return found;
    },
    explain,
  );
  showWarnings();
  report.json(record);
  report.detail(`account state ${record.status} (${ACCOUNT_STATES[record.status]})`);
  expiry(ctx, record);

  const docs = await report.step('PAIA items', () => backend.items(barcode), explain);
  showWarnings();
  report.json({ doc: docs.slice(0, SHOWN_DOCUMENTS) });
  report.detail(shownOf(docs.length, 'document'));
  const lists = await listCounts(ctx, pool, barcode);

  const fees = await report.step('PAIA fees', () => backend.fees(barcode), explain);
  showWarnings();
  report.json({ ...fees, fee: fees.fee.slice(0, SHOWN_DOCUMENTS) });
  report.detail(
    `${fees.amount === undefined ? 'no total amount' : `total ${fees.amount}`}, ${shownOf(fees.fee.length, 'fee')}`,
  );

  const texts = namesAndTitles(record, docs, fees);
  await fineItems(ctx, lists.fine, {
    charset: charsetOfTexts(
      texts.flatMap((group) => group.texts),
      ctx.settings.charset,
    ),
    holdLists: holdListsOf(lists.hold, lists.unavailableHold),
  });
  charset(ctx, texts);

  report.skip(
    "PAIA renew, request, cancel: not sent, they would change the patron's account in the ILS (29 renew, 15 hold); " +
      'try them through the gateway with a test account',
  );
  await closePool(ctx, pool);
  showWarnings();
}

/**
 * Whether VuFind gets an expires it can read (expiryAdvice): for the test
 * patron's record, or without one for the dialect alone.
 */
export function expiry(ctx: CheckContext, record: PatronRecord | null): void {
  const advice = expiryAdvice(ctx.dialect, ctx.settings.expiresWhenUnknown, localDateOf(new Date()), record);
  if (advice) ctx.report.warn(advice.text, ...advice.more);
}

function shownOf(count: number, noun: string): string {
  const plural = count === 1 ? noun : `${noun}s`;
  if (count <= SHOWN_DOCUMENTS) return `${count} ${plural}${count === 0 ? '' : ', all shown'}`;
  return `${count} ${plural}, the first ${SHOWN_DOCUMENTS} shown`;
}

/** Closes the pool and waits until its logins still under way (a worker may free late) have ended: nothing of the doctor stays open. */
async function closePool(ctx: CheckContext, pool: Sip2Pool): Promise<void> {
  const { connectMs, responseMs } = ctx.settings.timeouts;
  await pool.close(CLEANUP_MS);
  const deadline = Date.now() + connectMs + 2 * responseMs + 1000;
  while (pool.stats().opening > 0 && Date.now() < deadline) await sleep(50);
}

/**
 * The six counts of the 64 against the lists they announce, each list read
 * in full (BP/BQ pages, up to sip2.maxListEntries). With listCounts: reliable
 * the gateway skips a list whose count is 0, so a count that does not match
 * is worth a warning then; a mismatch never fails the run, it is advice.
 * Only numbers are printed: the entries are patron data. Returns each
 * list's entries, for the fine-items step and the hold lists (each list is read once).
 */
async function listCounts(
  ctx: CheckContext,
  pool: Sip2Pool,
  barcode: string,
): Promise<Record<SummaryList, readonly string[]>> {
  const { setup, settings, dialect, report } = ctx;
  const requests = setup.messages;
  const { rows, lists } = await report.step(
    'list counts: the six lists of the 64, each read with 63s, against their counts',
    // In the backend's terms, so that a SIP2 failure is explained as in the PAIA steps.
    () =>
      inBackendTerms(async () => {
        const rows: ListCount[] = [];
        const lists = {} as Record<SummaryList, readonly string[]>;
        let sent = 0;
        // One list after the other: a few round trips, and an ILS with few workers is not crowded.
        for (const list of SUMMARY_LISTS) {
          const read = await fetchPatronList(
            (message) => pool.send(message),
            (start, end) => requests.patronInformation(barcode, { list, start, end }),
            list,
            { pageSize: settings.pageSize, maxEntries: settings.maxListEntries },
          );
          sent += read.requests;
          const entries = read.entries.filter((entry) => entry.trim() !== '');
          lists[list] = entries;
          rows.push({
            list,
            count: listCount(read.first, list),
            entries: entries.length,
            capped: read.entries.length >= settings.maxListEntries,
          });
        }
        return { rows, lists, sent };
      }),
    (error) => explainPatronStep(error, ctx),
    ({ rows, sent }) => {
      const tally = (verdict: CountVerdict) => rows.filter((row) => countVerdict(row) === verdict).length;
      const capped = tally('capped') > 0 ? `, ${tally('capped')} read only up to sip2.maxListEntries` : '';
      return `list counts: 6 lists read with ${sent} 63s; counts: ${tally('matches')} matching${capped}, ${tally('differs')} differing, ${tally('blank')} blank`;
    },
  );
  for (const row of rows) report.detail(countLine(row, settings.maxListEntries));
  const { notes, warning } = countsAdvice(rows, dialect);
  for (const note of notes) report.detail(note);
  if (warning) report.warn(warning.text, ...warning.more);
  return lists;
}

/**
 * The test patron's fine items (AV) as the ILS writes them (read with a 63
 * fine summary by the list-count step), against the dialect's patterns.
 * Only their shapes are printed: the texts are patron data. `evidence`:
 * what else the answers showed, for naming another dialect only when it fits.
 */
async function fineItems(ctx: CheckContext, entries: readonly string[], evidence: IlsEvidence): Promise<void> {
  const { dialect, report } = ctx;
  await report.step(
    'fine items (AV): 63 with the fine summary',
    async () => entries,
    messageOf,
    (read) => {
      const matched = read.filter((entry) => parseFineItem(entry, dialect) !== null).length;
      return `fine items (AV): ${read.length} read with a 63 fine summary, ${matched} fit the patterns of dialect ${dialect.name}`;
    },
  );
  const findings = fineFindings(entries, dialect, evidence);
  if (findings.unmatched.length > 0) {
    const advice = fineAdvice(findings, dialect);
    report.warn(advice.text, ...advice.more);
  }
}

interface TextGroup {
  label: (affected: number, of: number) => string;
  texts: string[];
}

/** The patron's name and address and the titles of items and fees: what the charset is judged by. */
function namesAndTitles(record: PatronRecord, docs: PaiaDocument[], fees: FeeRecord): TextGroup[] {
  return [
    { label: () => "the patron's name", texts: [record.name] },
    { label: () => "the patron's address", texts: record.address === undefined ? [] : [record.address] },
    {
      label: (n, of) => `${n} of ${of} item title${of === 1 ? '' : 's'}`,
      texts: docs.flatMap((doc) => (doc.about === undefined ? [] : [doc.about])),
    },
    {
      label: (n, of) => `${n} of ${of} fee text${of === 1 ? '' : 's'}`,
      texts: fees.fee.flatMap((fee) => (fee.about === undefined ? [] : [fee.about])),
    },
  ];
}

/** Those texts, decoded in the configured charset: do they look like the wrong one? */
function charset(ctx: CheckContext, groups: readonly TextGroup[]): void {
  const { settings, report } = ctx;
  const configured = settings.charset;
  const checked = groups.reduce((sum, group) => sum + group.texts.length, 0);
  const found = new Map<CharsetFinding, { which: string[]; example: string | null }>();
  for (const group of groups) {
    const byFinding = new Map<CharsetFinding, string[]>();
    for (const text of group.texts) {
      const finding = charsetFinding(text, configured);
      if (finding !== null) byFinding.set(finding, [...(byFinding.get(finding) ?? []), text]);
    }
    for (const [finding, texts] of byFinding) {
      const entry = found.get(finding) ?? { which: [], example: null };
      entry.which.push(group.label(texts.length, group.texts.length));
      if (finding === 'utf-8-read-as-single-byte')
        entry.example ??= decodeText(encodeText(texts[0]!, configured), 'utf-8');
      found.set(finding, entry);
    }
  }
  const affected = found.size === 0 ? 'none looks mis-decoded' : 'some look mis-decoded';
  report.line(`ok   charset ${configured}: ${checked} names and titles checked, ${affected}`);
  for (const [finding, { which, example }] of found) {
    const advice = charsetAdvice(finding, configured, which, example);
    report.warn(advice.text, ...advice.more);
  }
}

// ---------------------------------------------------------------- the idle session

/**
 * At the end, when no other session of the doctor is open (on a one-worker
 * ILS it would otherwise wait for the worker): one fresh session stays idle
 * for sip2.pool.keepaliveMs + 1 s. An ILS that closes it before then
 * closes the gateway's idle sessions before its keepalive reaches them.
 */
export async function idleSession(ctx: CheckContext, quick: boolean): Promise<void> {
  const { report } = ctx;
  const keepaliveMs = ctx.settings.pool.keepaliveMs;
  // Shown in seconds, as the ILS's own idle timeouts are given.
  const keepalive = keepaliveMs / 1000;
  if (quick) {
    report.skip(
      'idle session: --quick (without it the doctor waits to see whether the ILS closes idle sessions before the keepalive)',
    );
    return;
  }
  if (keepaliveMs === 0) {
    report.skip('idle session: sip2.pool.keepaliveMs is 0, the gateway sends no keepalive to compare with');
    return;
  }
  const waitMs = keepaliveMs + 1000;
  report.wait(
    `${keepalive + 1} s: one session stays idle, to see whether the ILS closes it before the gateway's keepalive ` +
      `(sip2.pool.keepaliveMs ${keepaliveMs}) would; --quick skips this`,
  );
  const answered = new Set<string>();
  const outcome = await report.step(
    'idle session',
    async () => {
      const connection = await Sip2Connection.open({
        ...ctx.session,
        id: 1000,
        onRoundTrip: (event) => event.outcome === 'ok' && answered.add(event.code),
      });
      ctx.cleanups.push(() => connection.close('doctor done'));
      const idleSince = performance.now();
      const closedAfterMs = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => {
          connection.off('close', onClose);
          resolve(null);
        }, waitMs);
        const onClose = () => {
          clearTimeout(timer);
          resolve(performance.now() - idleSince);
        };
        connection.once('close', onClose);
      });
      if (closedAfterMs !== null) return { closedAfterMs, silent: false };
      try {
        // Still open: does it still answer, or did something between (a firewall) forget it?
        await connection.send(SC_STATUS);
      } catch (error) {
        if (error instanceof IlsTimeout) return { closedAfterMs: null, silent: true };
        // The ILS closed it just as the 99 went out.
        return { closedAfterMs: performance.now() - idleSince, silent: false };
      }
      connection.close('doctor done');
      return { closedAfterMs: null, silent: false };
    },
    (error) => explainOpen(error, ctx, answered),
    ({ closedAfterMs, silent }) =>
      closedAfterMs !== null
        ? `idle session: the ILS closed it after ${formatSeconds(closedAfterMs)} s`
        : silent
          ? `idle session: still open after ${keepalive + 1} s, but a 99 on it got no answer`
          : `idle session: still open after ${keepalive + 1} s and answers a 99`,
  );
  if (outcome.closedAfterMs !== null) {
    const advice = idleCloseAdvice(outcome.closedAfterMs, keepaliveMs);
    report.warn(advice.text, ...advice.more);
  } else if (outcome.silent) {
    report.warn(
      `a session idle for ${keepalive + 1} s stayed open but no longer answered:`,
      'something between this host and the ILS (a firewall, NAT) may drop idle connections without closing them; ' +
        'lower sip2.pool.keepaliveMs until it answers, or ask the network admins about idle timeouts',
    );
  }
}

// ---------------------------------------------------------------- helpers

function median(sorted: number[]): number {
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return seconds < 10 ? seconds.toFixed(1) : String(Math.round(seconds));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The state store, as the gateway would find it at start: Redis answers and
 * may not evict keys. A failure here does not stop the ILS checks: the two
 * are independent, and the sysadmin wants to hear about both.
 */
export async function stateStore(report: Report, check: () => Promise<StateStoreCheck>): Promise<void> {
  const started = performance.now();
  let found: StateStoreCheck;
  try {
    found = await withTimeout(check(), STORE_CHECK_BOUND_MS, 'checking the state store');
  } catch (error) {
    report.fail('state store', (error as Error).message);
    return;
  }
  if (found.kind === 'memory') {
    report.skip('state store: "memory" (this process only): nothing to check');
    return;
  }
  if (found.problem !== null) {
    report.fail('state store redis', found.problem);
    return;
  }
  report.line(
    `ok   state store redis (${found.name}): answers, and may not evict keys (${formatMs(performance.now() - started)} ms)`,
  );
  if (found.warning !== null) report.warn(found.warning);
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A pino logger whose warnings (the pool's "the ILS serves only 2 sessions", the backend's "fine items left out" ...) become doctor warnings. */
function collectingLogger(into: string[]): Logger {
  return createLogger({
    level: 'warn',
    destination: {
      write(line: string) {
        try {
          const entry = JSON.parse(line) as { msg?: string; reason?: string };
          into.push(`${entry.msg ?? 'warning'}${entry.reason ? ` (${entry.reason})` : ''}`);
        } catch {
          into.push(line.trim());
        }
      },
    },
  });
}
