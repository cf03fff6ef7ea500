/**
 * `paia-sip2 doctor`: checks the configured ILS step by step, for the
 * sysadmin setting the gateway up next to it. Every step prints one line,
 * `ok   <step> (<ms> ms)` or `FAIL <step>: <reason and what to check>`,
 * with details indented below it.
 *
 *   resolve the host, connect (TCP or TLS), 93 login, 99 -> 98 (what the ACS
 *   says it supports), round-trip times; with a test patron the PAIA login,
 *   patron, items and fees exactly as the gateway computes them. Renew,
 *   request and cancel change the ILS and are never sent.
 *
 * Exit codes: 0 all ok, 1 a check failed, 2 a usage or configuration problem.
 * Every wait is bounded by the configured timeouts, and everything opened is
 * closed again, so the process ends by itself. Secrets (terminal and patron
 * passwords) are never printed.
 */
import { lookup } from 'node:dns/promises';
import net, { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import tls from 'node:tls';
import type { Sip2Backend } from './backend/sip2-backend.js';
import type { AccountState } from './backend/types.js';
import type { Config } from './config/index.js';
import { createLogger, type Logger } from './log.js';
import { type ConnectionOptions, Sip2Connection, sip2Sessions } from './sip2/connection.js';
import { toDate } from './sip2/date.js';
import { type Dialect, loadDialect } from './sip2/dialect.js';
import {
  BackendProtocolError,
  BackendTimeout,
  BackendUnavailable,
  isBackendError,
  Sip2EncodeError,
} from './sip2/errors.js';
import { Sip2Pool } from './sip2/pool.js';
import { SC_STATUS } from './sip2/requests.js';
import { type AcsStatus, SUPPORTED_MESSAGES, type SupportedMessage } from './sip2/spec.js';
import { sip2Backend, sip2ConnectionOptions, sip2TlsOptions } from './wiring.js';

export interface DoctorOptions {
  /** Test patron (user name or barcode, as a PAIA client would log in). */
  patron?: string | undefined;
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
  /** Where the patron's password is read from when PAIA_DOCTOR_PASSWORD is not set; default process.stdin. */
  input?: (NodeJS.ReadableStream & { isTTY?: boolean }) | undefined;
  /** Default process.env. */
  env?: NodeJS.ProcessEnv | undefined;
  /** How many 99s measure the round-trip time; default 5. */
  roundTrips?: number | undefined;
}

/** The environment variable holding the test patron's password. */
export const PASSWORD_ENV = 'PAIA_DOCTOR_PASSWORD';

/** At most this many documents (and fees) of each PAIA answer are printed. */
const SHOWN_DOCUMENTS = 5;
/** Bounds on what has no configured timeout: reading the password, stopping things at the end. */
const PASSWORD_WAIT_TTY_MS = 120_000;
const PASSWORD_WAIT_PIPE_MS = 10_000;
const CLEANUP_MS = 5_000;
/** Shorter secrets are not masked in the output: masking "1234" would mangle dates and amounts. They are never printed by the doctor itself. */
const MIN_MASKED_SECRET = 6;
/** A 98 date/time sync further off than this is worth a note. */
const CLOCK_SKEW_NOTE_MS = 5 * 60_000;

/** The 98 BX positions: message code, name, and what the gateway uses it for. */
const MESSAGES: Record<SupportedMessage, { code: string; name: string; usedFor?: string }> = {
  patronStatus: { code: '23', name: 'patron status' },
  checkout: { code: '11', name: 'checkout' },
  checkin: { code: '09', name: 'checkin' },
  blockPatron: { code: '01', name: 'block patron' },
  scAcsStatus: { code: '99', name: 'SC/ACS status', usedFor: 'status, keepalive' },
  requestResend: { code: '97', name: 'request resend', usedFor: 'garbled replies' },
  login: { code: '93', name: 'login', usedFor: 'every connection' },
  patronInformation: { code: '63', name: 'patron information', usedFor: 'PAIA login, patron, items, fees' },
  endPatronSession: { code: '35', name: 'end patron session', usedFor: 'PAIA logout' },
  feePaid: { code: '37', name: 'fee paid' },
  itemInformation: { code: '17', name: 'item information', usedFor: 'PAIA items' },
  itemStatusUpdate: { code: '19', name: 'item status update' },
  patronEnable: { code: '25', name: 'patron enable' },
  hold: { code: '15', name: 'hold', usedFor: 'PAIA request, cancel' },
  renew: { code: '29', name: 'renew', usedFor: 'PAIA renew' },
  renewAll: { code: '65', name: 'renew all' },
};
/** Messages without which a PAIA method cannot work. */
const NEEDED: readonly SupportedMessage[] = ['patronInformation', 'itemInformation', 'renew', 'hold'];

const ACCOUNT_STATES: Record<AccountState, string> = {
  0: 'active',
  1: 'inactive',
  2: 'expired',
  3: 'outstanding fees',
  4: 'expired and outstanding fees',
};

/** Runs the checks; resolves with the exit code. */
export async function runDoctor(config: Config, options: DoctorOptions): Promise<number> {
  const env = options.env ?? process.env;
  const secrets = [config.sip2.terminal.password];
  const report = new Report(options.out, secrets);

  // ---------------------------------------------------------- usage and configuration (exit 2)
  const demo = config.sip2.host === null;
  let dialect: Dialect;
  let tlsOptions: tls.ConnectionOptions | undefined;
  try {
    dialect = loadDialect(demo ? config.demo.dialect : config.sip2.dialect);
    tlsOptions = config.sip2.tls ? sip2TlsOptions(config.sip2.tls) : undefined;
  } catch (error) {
    options.err.write(`paia-sip2 doctor: ${(error as Error).message}\n`);
    return 2;
  }
  let password: string | undefined;
  if (options.patron !== undefined) {
    if (options.patron.trim() === '') {
      options.err.write('paia-sip2 doctor: --patron needs the user name or barcode of a test patron\n');
      return 2;
    }
    const fromEnv = env[PASSWORD_ENV];
    if (fromEnv !== undefined && fromEnv !== '') {
      password = fromEnv;
    } else {
      const input = options.input ?? process.stdin;
      const read = await readPassword(input, options.err, options.patron);
      if (!read.ok) {
        options.err.write(`paia-sip2 doctor: ${read.reason}\n`);
        return 2;
      }
      password = read.password;
    }
    secrets.push(password);
  }

  const cleanups: Array<() => unknown> = [];
  try {
    await checks({ config, dialect, tlsOptions, demo, patron: options.patron, password, report, cleanups, roundTrips: options.roundTrips ?? 5 });
  } catch (error) {
    if (!(error instanceof Abort)) throw error;
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await withTimeout(Promise.resolve().then(cleanup), CLEANUP_MS, 'cleanup').catch(() => {});
    }
  }

  if (report.failures === 0) {
    report.line('');
    report.line('all checks passed');
    await flush(options.out);
    return 0;
  }
  report.line('');
  report.line(`${report.failures} check${report.failures === 1 ? '' : 's'} failed`);
  await flush(options.out);
  options.err.write(`paia-sip2 doctor: FAIL ${report.firstFailure}\n`);
  await flush(options.err);
  return 1;
}

// ------------------------------------------------------------------ the checks

interface CheckContext {
  config: Config;
  dialect: Dialect;
  tlsOptions: tls.ConnectionOptions | undefined;
  demo: boolean;
  patron: string | undefined;
  password: string | undefined;
  report: Report;
  /** Run at the end, last registered first, each bounded. */
  cleanups: Array<() => unknown>;
  roundTrips: number;
}

async function checks(ctx: CheckContext): Promise<void> {
  const { config, report } = ctx;
  const { sip2 } = config;
  let host = sip2.host ?? '127.0.0.1';
  let port = sip2.port;

  report.line('paia-sip2 doctor');
  if (ctx.demo) {
    // Demo mode, as the gateway does it: the simulator is imported only here.
    const simulator = await report.step(
      'start the embedded SIP2 simulator (demo mode: sip2.host is not set)',
      async () => {
        const { startSimulator } = await import('../sip2-simulator/src/server.js');
        return withTimeout(
          startSimulator({
            host: '127.0.0.1',
            port: config.demo.sip2Port,
            dialect: config.demo.dialect,
            charset: config.demo.charset,
            errorDetection: sip2.errorDetection,
            logger: createLogger({ level: 'silent' }),
          }),
          CLEANUP_MS,
          'starting the simulator',
        );
      },
      (error) => `${messageOf(error)}; check demo.sip2Port (${config.demo.sip2Port}) is free, or set sip2.host to check a real ILS`,
    );
    ctx.cleanups.push(() => simulator.stop());
    host = simulator.host;
    port = simulator.port;
    report.detail(`the embedded simulator with the demo library listens on ${host}:${port} (dialect ${config.demo.dialect});`);
    report.detail('set sip2.host (PAIA_SIP2_HOST) to check a real library system');
  }
  const transport = ctx.tlsOptions ? 'TLS' : 'TCP';
  report.line(
    `ILS ${host}:${port} over ${transport}, dialect ${ctx.dialect.name}, terminal user "${sip2.terminal.user}"` +
      `${sip2.terminal.location ? ` at location "${sip2.terminal.location}"` : ''}, institution "${sip2.institution}"`,
  );
  report.line('');

  // ---------------------------------------------------------- network
  const { connectMs, responseMs } = sip2.timeouts;
  if (isIP(host) === 0) {
    await report.step(
      `resolve ${host}`,
      async () => {
        const addresses = await withTimeout(lookup(host, { all: true }), connectMs, `no answer from DNS within ${connectMs} ms`);
        return addresses.map((a) => a.address);
      },
      (error) => `${codeOrMessage(error)}; check sip2.host ("${host}") for typos and that this machine's DNS knows the ILS host`,
      (addresses) => `resolve ${host} -> ${addresses.join(', ')}`,
    );
  }
  await report.step(
    `connect ${transport} ${host}:${port}`,
    () => probe(host, port, ctx.tlsOptions, connectMs),
    (error) => explainConnect(error, host, port, ctx, connectMs),
    undefined,
    (info) => {
      if (info) report.detail(info);
    },
  );

  // ---------------------------------------------------------- SIP2 session
  const connectionOptions: ConnectionOptions = sip2ConnectionOptions(config, ctx.dialect, { host, port }, ctx.tlsOptions);
  const connection = await report.step(
    `connect + 93 login as terminal user "${sip2.terminal.user}"`,
    () => Sip2Connection.open(connectionOptions),
    (error) => explainOpen(error, ctx),
  );
  ctx.cleanups.push(() => connection.close('doctor done'));

  const status = await report.step(
    '99 SC status -> 98 ACS status',
    () => connection.request(SC_STATUS),
    (error) => explainRequest(error, '99', ctx),
  );
  describeAcs(status, ctx);

  const times: number[] = [];
  await report.step(
    `round trips, ${ctx.roundTrips} x 99`,
    async () => {
      for (let i = 0; i < ctx.roundTrips; i++) {
        const start = performance.now();
        await connection.request(SC_STATUS);
        times.push(performance.now() - start);
      }
    },
    (error) => explainRequest(error, '99', ctx),
    () => {
      const sorted = [...times].sort((a, b) => a - b);
      return `round trips, ${ctx.roundTrips} x 99: min ${formatMs(sorted[0]!)} ms, median ${formatMs(median(sorted))} ms, max ${formatMs(sorted.at(-1)!)} ms`;
    },
  );
  const slowest = Math.max(...times);
  if (slowest > responseMs / 2) {
    report.note(`the slowest round trip (${formatMs(slowest)} ms) is more than half of sip2.timeouts.responseMs (${responseMs} ms): consider raising it`);
  }
  connection.close('doctor done');

  // ---------------------------------------------------------- PAIA with a test patron
  if (ctx.patron === undefined || ctx.password === undefined) {
    report.line('');
    report.line('skip PAIA methods: give --patron NAME (password in PAIA_DOCTOR_PASSWORD or on stdin) to see what they return');
    return;
  }
  await checkPatron(ctx, connectionOptions, status, ctx.patron, ctx.password);
}

/** Login, patron, items and fees through the same pool and backend the gateway builds. */
async function checkPatron(ctx: CheckContext, connection: ConnectionOptions, status: AcsStatus, patron: string, password: string): Promise<void> {
  const { config, report } = ctx;
  const { sip2 } = config;
  const warnings: string[] = [];
  const logger = collectingLogger(warnings);

  const pool = new Sip2Pool({
    connect: sip2Sessions({ ...connection, logger }),
    // Connections only as the methods need them, as many in parallel as the gateway would use.
    min: 0,
    max: sip2.pool.max,
    acquireTimeoutMs: sip2.pool.acquireTimeoutMs,
    maxWaiting: sip2.pool.maxWaiting,
    keepaliveIntervalMs: 0,
    maxLifetimeMs: 0,
    backoff: { initialMs: 250, maxMs: 30_000 },
    logger,
  });
  ctx.cleanups.push(() => pool.close(CLEANUP_MS));
  let backend: Sip2Backend;
  try {
    // The 98 of the doctor's own connection: the pool's may not exist yet.
    backend = sip2Backend(config, ctx.dialect, pool, { acsStatus: () => pool.acsStatus ?? status, logger });
  } catch (error) {
    return report.fatal('set up the PAIA backend', `${messageOf(error)}; check sip2.currency, sip2.pageSize and the paia URI templates`);
  }
  const explain = (error: unknown) => explainPatronStep(error, ctx);
  const showWarnings = () => {
    for (const warning of warnings.splice(0)) report.note(warning);
  };

  report.line('');
  report.line(`PAIA methods for test patron "${patron}":`);
  const login = await report.step(
    'PAIA login: 63 patron information with the patron\'s password',
    async () => {
      const outcome = await backend.login(patron, password);
      if (!outcome.ok) {
        throw new CheckFailed(
          `the ILS refused the patron login for "${patron}" (its 64 did not say BL valid patron = Y and CQ valid password = Y); ` +
            `check the test patron's user name or barcode and the password (${PASSWORD_ENV}); a PAIA client would get "access denied"`,
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
        throw new CheckFailed(`the ILS does not know the barcode "${barcode}" it returned at login (64 BL not Y); a PAIA client would get 404`);
      }
      return found;
    },
    explain,
  );
  showWarnings();
  report.json(record);
  report.detail(`account state ${record.status} (${ACCOUNT_STATES[record.status]})`);

  const docs = await report.step('PAIA items', () => backend.items(barcode), explain);
  showWarnings();
  report.json({ doc: docs.slice(0, SHOWN_DOCUMENTS) });
  report.detail(shownOf(docs.length, 'document'));

  const fees = await report.step('PAIA fees', () => backend.fees(barcode), explain);
  showWarnings();
  report.json({ ...fees, fee: fees.fee.slice(0, SHOWN_DOCUMENTS) });
  report.detail(`${fees.amount === undefined ? 'no total amount' : `total ${fees.amount}`}, ${shownOf(fees.fee.length, 'fee')}`);

  report.skip(
    'PAIA renew, request, cancel: not sent, they would change the patron\'s account in the ILS (29 renew, 15 hold); ' +
      'try them through the gateway with a test account',
  );
}

function shownOf(count: number, noun: string): string {
  const plural = count === 1 ? noun : `${noun}s`;
  if (count <= SHOWN_DOCUMENTS) return `${count} ${plural}${count === 0 ? '' : ', all shown'}`;
  return `${count} ${plural}, the first ${SHOWN_DOCUMENTS} shown`;
}

/** Prints what the 98 says: on-line status, protocol, institution, library, and the 16 supported messages. */
function describeAcs(status: AcsStatus, ctx: CheckContext): void {
  const { report, config } = ctx;
  report.detail(`on-line: ${status.onlineStatus ? 'yes' : 'no'}`);
  report.detail(`protocol version: ${status.protocolVersion.trim() || '(not given)'}`);
  report.detail(`institution: ${status.institutionId || '(not given)'}`);
  report.detail(`library name: ${status.libraryName?.trim() || '(not given)'}`);
  if (status.terminalLocation) report.detail(`terminal location: ${status.terminalLocation}`);
  for (const line of status.screenMessage ?? []) report.detail(`screen message: ${line}`);
  const bx = status.supportedMessages;
  report.detail(`supported messages (BX ${bx || '(empty)'}):`);
  const width = Math.max(...SUPPORTED_MESSAGES.map((m) => MESSAGES[m].name.length));
  SUPPORTED_MESSAGES.forEach((message, index) => {
    const { code, name, usedFor } = MESSAGES[message];
    const flag = bx[index];
    const answer = flag === 'Y' ? 'yes' : flag === 'N' ? 'no ' : '?  ';
    report.detail(`  ${answer}  ${code} ${name.padEnd(width)}${usedFor ? `  used for ${usedFor}` : ''}`);
  });

  if (!status.onlineStatus) {
    report.fail('ACS on-line', 'the ILS says its SIP2 service is off-line (98 on-line status N); PAIA requests will fail until it is on-line again');
  }
  for (const message of NEEDED) {
    const flag = bx[SUPPORTED_MESSAGES.indexOf(message)];
    if (flag === 'N') {
      const { code, name, usedFor } = MESSAGES[message];
      report.note(`the ILS says it does not support ${code} ${name}, which the gateway needs for ${usedFor}`);
    }
  }
  if (bx.length < SUPPORTED_MESSAGES.length) {
    report.note(`BX has ${bx.length} of ${SUPPORTED_MESSAGES.length} positions: the ILS may speak an older SIP2 version`);
  }
  if (status.institutionId && status.institutionId !== config.sip2.institution) {
    report.note(
      `sip2.institution is "${config.sip2.institution}" but the ILS calls itself "${status.institutionId}" (98 AO); many ILSs need them to match`,
    );
  }
  if (status.dateTimeSync) {
    const skew = toDate(status.dateTimeSync).getTime() - Date.now();
    if (Math.abs(skew) > CLOCK_SKEW_NOTE_MS) {
      report.note(
        `the ILS clock is ${Math.round(Math.abs(skew) / 60_000)} min ${skew > 0 ? 'ahead of' : 'behind'} this host's (98 date/time sync): ` +
          'check NTP and time zones on both, or due dates near midnight may be off by a day',
      );
    }
  }
}

// ------------------------------------------------------------------ explanations

function explainConnect(error: unknown, host: string, port: number, ctx: CheckContext, connectMs: number): string {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `sip2.host ("${host}") and sip2.port (${port})`;
  if (error instanceof ProbeTimeout) {
    return `no connection within sip2.timeouts.connectMs (${connectMs} ms): the host is down or a firewall drops the packets; check ${where} and that the ILS lets this host in`;
  }
  switch (code) {
    case 'ECONNREFUSED':
      return `connection refused (nothing listens there): check ${where}, that the ILS's SIP2 service is running, and that no firewall rejects this host`;
    case 'ECONNRESET':
      return `the ILS reset the connection: check ${where}, whether the port expects ${ctx.tlsOptions ? 'plain TCP (sip2.tls: null)' : 'TLS (sip2.tls)'}, and the ILS's list of allowed client addresses`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `no route to the ILS (${code}): check sip2.host ("${host}") and this host's network and firewall`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${code}: check sip2.host ("${host}") and this machine's DNS`;
  }
  if (ctx.tlsOptions) {
    return `TLS failed (${codeOrMessage(error)}): check that the ILS port speaks TLS, sip2.tls.ca (the CA that signed the ILS certificate), sip2.tls.servername, and the client certificate (sip2.tls.cert/key) if the ILS asks for one`;
  }
  return `${codeOrMessage(error)}: check ${where}`;
}

function explainOpen(error: unknown, ctx: CheckContext): string {
  const { sip2 } = ctx.config;
  const message = messageOf(error);
  const account = `sip2.terminal.user ("${sip2.terminal.user}"), sip2.terminal.password (PAIA_SIP2_TERMINAL_PASSWORD)`;
  if (error instanceof BackendUnavailable && /terminal login/.test(message)) {
    return `the ILS rejected the SIP2 terminal login (94 with ok = 0): check ${account} and sip2.terminal.location ("${sip2.terminal.location}") against the terminal account in the ILS`;
  }
  if (error instanceof BackendTimeout && /\b93\b/.test(message)) {
    return `${message}: is ${ctx.config.sip2.port} the SIP2 port, does it expect ${ctx.tlsOptions ? 'plain TCP' : 'TLS (sip2.tls)'}, and is the line end of dialect ${ctx.dialect.name} (${ctx.dialect.terminator}) what the ILS expects? (sip2.timeouts.responseMs is ${sip2.timeouts.responseMs} ms)`;
  }
  if (error instanceof BackendTimeout && /\b99\b/.test(message)) {
    return `the terminal login was accepted, but ${message}; check the ILS's SIP2 log (sip2.timeouts.responseMs is ${sip2.timeouts.responseMs} ms)`;
  }
  if (error instanceof BackendUnavailable && /lost/.test(message)) {
    return `${message} during the login: check ${account}, whether the port expects ${ctx.tlsOptions ? 'plain TCP' : 'TLS (sip2.tls)'}, and the ILS's list of allowed client addresses`;
  }
  if (error instanceof BackendProtocolError) {
    return `${message}: check sip2.dialect (${ctx.dialect.name}), sip2.charset and sip2.errorDetection (AY/AZ checksums)`;
  }
  if (error instanceof Sip2EncodeError) {
    return `the terminal user, password or location cannot be sent in ${sip2.charset ?? ctx.dialect.charset} (${error.field}): check sip2.terminal and sip2.charset`;
  }
  return message;
}

function explainRequest(error: unknown, code: string, ctx: CheckContext): string {
  const message = messageOf(error);
  if (error instanceof BackendTimeout) {
    return `${message}: the ILS stopped answering after the login; check its SIP2 log (sip2.timeouts.responseMs is ${ctx.config.sip2.timeouts.responseMs} ms)`;
  }
  if (error instanceof BackendProtocolError) {
    return `${message}: check sip2.dialect (${ctx.dialect.name}), sip2.charset and sip2.errorDetection`;
  }
  if (error instanceof BackendUnavailable) return `${message} after a ${code}: check the ILS's SIP2 log`;
  return message;
}

function explainPatronStep(error: unknown, ctx: CheckContext): string {
  const message = messageOf(error);
  const { sip2 } = ctx.config;
  if (error instanceof CheckFailed) return message;
  if (error instanceof BackendUnavailable && /terminal login|lost/.test(message) && sip2.pool.max > 1) {
    return `${message}: the gateway opens up to sip2.pool.max (${sip2.pool.max}) sessions with the same terminal account; the ILS may allow fewer, so lower sip2.pool.max or raise the ILS's limit`;
  }
  if (error instanceof Sip2EncodeError) return `the patron name cannot be sent over SIP2 (${error.field}): ${message}`;
  if (isBackendError(error)) return explainRequest(error, '63', ctx);
  return `unexpected error: ${message}`;
}

// ------------------------------------------------------------------ output

class Abort extends Error {}

/** A step that ran but found something wrong; its message is the reason printed. */
class CheckFailed extends Error {}

/** The step lines, with the secrets masked in everything written. */
class Report {
  failures = 0;
  firstFailure = '';
  private readonly secrets: string[];

  constructor(
    private readonly out: NodeJS.WritableStream,
    secrets: string[],
  ) {
    // Shared with the caller: the patron password is added once read.
    this.secrets = secrets;
  }

  line(text: string): void {
    let masked = text;
    for (const secret of this.secrets) if (secret.length >= MIN_MASKED_SECRET) masked = masked.replaceAll(secret, '***');
    this.out.write(`${masked.trimEnd()}\n`);
  }

  detail(text: string): void {
    this.line(`     ${text}`);
  }

  note(text: string): void {
    this.line(`     ! ${text}`);
  }

  json(value: unknown): void {
    for (const line of JSON.stringify(value, null, 2).split('\n')) this.detail(line);
  }

  skip(text: string): void {
    this.line(`skip ${text}`);
  }

  fail(step: string, reason: string): void {
    this.failures++;
    if (this.failures === 1) this.firstFailure = `${step}: ${reason}`;
    this.line(`FAIL ${step}: ${reason}`);
  }

  /** Fails the step and stops the checks. */
  fatal(step: string, reason: string): never {
    this.fail(step, reason);
    throw new Abort(reason);
  }

  /**
   * Runs one step and prints its line: `ok` with the time (and the title
   * `done` makes of the result), or FAIL with `explain`'s reason, which stops
   * the checks.
   */
  async step<T>(
    name: string,
    run: () => Promise<T>,
    explain: (error: unknown) => string,
    done?: (result: T) => string,
    after?: (result: T) => void,
  ): Promise<T> {
    const start = performance.now();
    let result: T;
    try {
      result = await run();
    } catch (error) {
      if (error instanceof Abort) throw error;
      this.fatal(name, explain(error));
    }
    this.line(`ok   ${done ? done(result) : name} (${formatMs(performance.now() - start)} ms)`);
    after?.(result);
    return result;
  }
}

function formatMs(ms: number): string {
  return ms < 10 ? ms.toFixed(1) : String(Math.round(ms));
}

function median(sorted: number[]): number {
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function codeOrMessage(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : messageOf(error);
}

/** A pino logger whose warnings (the backend's "a fine item does not fit the dialect" ...) become doctor notes. */
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

function flush(stream: NodeJS.WritableStream): Promise<void> {
  return withTimeout(new Promise<void>((resolve) => stream.write('', () => resolve())), 1000, 'flush').catch(() => {});
}

// ------------------------------------------------------------------ helpers

class ProbeTimeout extends Error {}

/** Opens and closes one TCP (or TLS) connection: the plain reachability check before SIP2. Resolves with TLS details, if any. */
function probe(host: string, port: number, tlsOptions: tls.ConnectionOptions | undefined, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const socket: net.Socket = tlsOptions ? tls.connect({ host, port, ...tlsOptions }) : net.connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new ProbeTimeout(`no connection within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('error', (error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    });
    socket.once(tlsOptions ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      // Errors while closing (a reset after our FIN) do not matter any more.
      socket.on('error', () => {});
      let info: string | null = null;
      if (socket instanceof tls.TLSSocket) {
        const cert = socket.getPeerCertificate();
        const subject = cert.subject?.CN ?? '(no CN)';
        info = `${socket.getProtocol() ?? 'TLS'}, certificate ${subject}, valid until ${cert.valid_to ?? '?'}${socket.authorized ? '' : ' (NOT verified: sip2.tls.rejectUnauthorized is false)'}`;
      }
      socket.end();
      // An ILS that never answers our FIN must not keep the socket open.
      setTimeout(() => socket.destroy(), 1000).unref();
      resolve(info);
    });
  });
}

type PasswordRead = { ok: true; password: string } | { ok: false; reason: string };

/** One line from stdin (a prompt on stderr when it is a terminal), bounded in time. */
async function readPassword(input: NodeJS.ReadableStream & { isTTY?: boolean }, err: NodeJS.WritableStream, patron: string): Promise<PasswordRead> {
  const tty = input.isTTY === true;
  if (tty) err.write(`password of test patron "${patron}" (or set ${PASSWORD_ENV}): `);
  const waitMs = tty ? PASSWORD_WAIT_TTY_MS : PASSWORD_WAIT_PIPE_MS;
  const reader = createInterface({ input, terminal: false });
  try {
    const line = await new Promise<string | null | 'timeout'>((resolve) => {
      const timer = setTimeout(() => resolve('timeout'), waitMs);
      reader.once('line', (text) => {
        clearTimeout(timer);
        resolve(text);
      });
      reader.once('close', () => {
        clearTimeout(timer);
        resolve(null);
      });
    });
    if (line === 'timeout') return { ok: false, reason: `no password for --patron within ${waitMs / 1000} s: set ${PASSWORD_ENV} or give it on stdin` };
    const password = line?.replace(/\r$/, '') ?? '';
    if (password === '') return { ok: false, reason: `--patron needs the patron's password: set ${PASSWORD_ENV} or give it on stdin` };
    return { ok: true, password };
  } finally {
    reader.close();
    input.pause();
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(what.startsWith('no ') ? what : `${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
