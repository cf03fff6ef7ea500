import { BackendFailure } from '../../backend/errors.js';
import { type AdviceContext, explainOpen, explainProtocol, messageOf } from '../../gateway/ils-advice.js';
import type { Sip2Settings } from '../../gateway/index.js';
import {
  BUILTIN_DIALECTS,
  type Dialect,
  IlsProtocolError,
  IlsTimeout,
  IlsUnavailable,
  PoolRefused,
} from '../../sip2/index.js';
import { type CharsetFinding, countVerdict, type FineFindings, type ListCount, listTag } from './findings.js';
import { CheckFailed } from './report.js';

/**
 * What to tell the sysadmin: for each failure the doctor meets, the reason
 * and the setting (or the ILS's setting) to check. Explanations switch on the
 * errors' machine-readable `reason` (and, for a socket error, its errno
 * code), never on message text.
 */

/** The embedded simulator of demo mode did not start. */
export function explainDemoStart(error: unknown, settings: Sip2Settings): string {
  return `${messageOf(error)}; check demo.sip2Port (${settings.demo?.sip2Port}) is free, or set sip2.host to check a real ILS`;
}

/** Why a request on a logged-in session (99, or the patron's 63, 17) failed. */
export function explainRequest(error: unknown, code: string, ctx: AdviceContext): string {
  const sip2 = ctx.settings;
  if (error instanceof IlsTimeout) {
    return `the ILS did not answer a ${code} within sip2.timeouts.responseMs (${sip2.timeouts.responseMs} ms) after the login; check its SIP2 log`;
  }
  if (error instanceof IlsProtocolError) return explainProtocol(error.reason, ctx);
  if (error instanceof IlsUnavailable) {
    switch (error.reason) {
      case 'closed':
      case 'reset':
        return `the ILS ${error.reason === 'closed' ? 'closed' : 'reset'} the session after a ${code}: check the ILS's SIP2 log`;
      case 'login-rejected':
        return (
          `the ILS rejected the login of a further session with the same terminal account (94 with ok = 0): it may allow fewer sessions ` +
          `per account than sip2.pool.max (${sip2.pool.max}); lower sip2.pool.max or allow more in the ILS`
        );
      default:
        return explainOpen(error, ctx, new Set(['93']));
    }
  }
  if (error instanceof PoolRefused) {
    switch (error.reason) {
      case 'circuit-open':
        return (
          `the ILS failed sip2.circuit.failureThreshold (${sip2.circuit.failureThreshold}) times in a row and the gateway stopped sending ` +
          `to it for a while (its circuit breaker): see the failures above and the ILS's SIP2 log`
        );
      case 'terminal-login-refused':
        return (
          `the ILS refused the terminal login sip2.circuit.failureThreshold (${sip2.circuit.failureThreshold}) times in a row and the ` +
          `gateway stopped sending to it for a while (its circuit breaker): check sip2.terminal.user ("${sip2.terminal.user}"), ` +
          'sip2.terminal.password (PAIA_SIP2_TERMINAL_PASSWORD) and sip2.terminal.location against the terminal account in the ILS'
        );
      case 'acquire-timeout':
        return (
          `no session was free within sip2.pool.acquireTimeoutMs (${sip2.pool.acquireTimeoutMs} ms): the ILS serves fewer sessions than ` +
          `the requests need (see "sessions at once" above)`
        );
      case 'queue-full':
        return `more than sip2.pool.maxWaiting (${sip2.pool.maxWaiting}) requests waited for a session`;
      case 'shutting-down':
        return 'the doctor was closing its sessions';
    }
  }
  return messageOf(error);
}

/** Why a PAIA step with the test patron failed: the backend's failure, explained by the SIP2 error behind it. */
export function explainPatronStep(error: unknown, ctx: AdviceContext): string {
  if (error instanceof CheckFailed) return error.message;
  if (!(error instanceof BackendFailure)) return `unexpected error: ${messageOf(error)}`;
  switch (error.kind) {
    case 'unencodable':
      return `the patron name cannot be sent over SIP2 (${error.field}): ${error.message}`;
    case 'cancelled':
      return `the call was cancelled (${error.reason})`;
    default:
      return explainRequest(error.cause ?? error, '63', ctx);
  }
}

// ---------------------------------------------------------------- warnings: what the checks found

export interface Advice {
  text: string;
  more: string[];
}

/** Fewer sessions than sip2.pool.max: `served` logged in at once, `unanswered` logins got no answer, `refused` were turned down. */
export function sessionLimitAdvice(
  served: number,
  max: number,
  unanswered: number,
  refused: Map<string, number>,
  responseMs: number,
): Advice {
  const sessions = (n: number) => `${n} session${n === 1 ? '' : 's'}`;
  const more: string[] = [];
  if (unanswered > 0) {
    more.push(
      `${unanswered} further login${unanswered === 1 ? '' : 's'} got no answer within sip2.timeouts.responseMs (${responseMs} ms), ` +
        'as a pre-forking SIP server (Koha, SIPServer on Net::Server::PreFork) does when no worker is free; ' +
        'sessions other clients hold (a running gateway, self-check machines) take workers too.',
    );
  }
  if (refused.size > 0) {
    const reasons = [...refused].map(([reason, count]) => `${reason} ${count}`).join(', ');
    more.push(`further sessions were turned down (${reasons}): the ILS may allow fewer sessions per terminal account.`);
  }
  more.push(
    `The gateway opens up to sip2.pool.max (${max}); it finds the limit too (its log says so) and shares the ${sessions(served)} ` +
      'among its requests, which then wait for each other.',
    `Fix: give the ILS more SIP2 workers (Koha, SIPServer: min_servers, min_spare_servers and max_servers in the server-params of SIPconfig.xml), ` +
      `or set sip2.pool.max to ${served} (PAIA_SIP2_POOL_MAX=${served}).`,
  );
  return { text: `the ILS serves ${sessions(served)} to this host at once, fewer than sip2.pool.max (${max}):`, more };
}

/** The ILS closed an idle session after `closedAfterMs`, before the keepalive would have kept it open. */
export function idleCloseAdvice(closedAfterMs: number, keepaliveMs: number): Advice {
  const seconds = closedAfterMs / 1000;
  const shown = seconds < 10 ? seconds.toFixed(1) : String(Math.round(seconds));
  const below = Math.floor(seconds / 2);
  const ilsSide =
    "raise the ILS's idle timeout (Koha: client_timeout of the SIP listener in SIPconfig.xml, or its timeout without one)";
  return {
    text: `the ILS closes idle SIP2 sessions after about ${shown} s, sooner than the gateway's keepalive (sip2.pool.keepaliveMs ${keepaliveMs}):`,
    more: [
      'the gateway then logs in again (93) for the first request after every quiet spell, and a request sent as the ILS closes fails.',
      below >= 1
        ? `Fix: set sip2.pool.keepaliveMs below ${shown} s, e.g. ${below * 1000} (PAIA_SIP2_POOL_KEEPALIVE_MS=${below * 1000}), or ${ilsSide}.`
        : `Fix: no keepalive of at least 1 s (1000 ms) stays safely below ${shown} s: ${ilsSide}.`,
    ],
  };
}

/** Texts that decode wrongly: which ones (the patron's name, 2 of 5 titles ...), and one as it would read in UTF-8 if it can be told. */
export function charsetAdvice(
  finding: CharsetFinding,
  configured: string,
  which: string[],
  example: string | null,
): Advice {
  const list = which.join(', ');
  if (finding === 'utf-8-read-as-single-byte') {
    return {
      text: `${list} look like UTF-8 read as ${configured}: the ILS sends UTF-8.`,
      more: [
        ...(example === null ? [] : [`Read as UTF-8: "${example}"`]),
        'Fix: set sip2.charset: utf-8 (PAIA_SIP2_CHARSET=utf-8); Koha and Evergreen send UTF-8 by default.',
      ],
    };
  }
  return {
    text: `${list} hold characters that are not UTF-8 (shown as \uFFFD): the ILS sends a single-byte charset.`,
    more: [
      "Fix: set sip2.charset: cp850 (the SIP2 standard's) or latin1 (PAIA_SIP2_CHARSET=cp850), whichever shows the names right.",
    ],
  };
}

/** At most this many fine-item shapes are printed. */
const SHOWN_SHAPES = 5;

/** Fine items (AV) no pattern of the dialect reads: their shapes (never the texts), what the gateway does with them, a pattern that reads them. */
export function fineAdvice(findings: FineFindings, dialect: Dialect): Advice {
  const unmatched = findings.unmatched.reduce((sum, shape) => sum + shape.count, 0);
  const more: string[] = ['Their shapes (letters a/A, digits 9; the texts are patron data):'];
  for (const { shape, count, listed } of findings.unmatched.slice(0, SHOWN_SHAPES)) {
    const fate = listed
      ? 'the gateway lists it by the amount in its text, the whole text as about'
      : 'no amount in it: the gateway leaves it out of the fees';
    more.push(`  "${shape}"${count > 1 ? ` (${count} entries)` : ''}: ${fate}`);
  }
  if (findings.unmatched.length > SHOWN_SHAPES)
    more.push(`  and ${findings.unmatched.length - SHOWN_SHAPES} further shapes`);
  for (const { pattern, where } of findings.patterns) {
    more.push(`A pattern that reads them (the amount ${where}): '${pattern}'`);
  }
  if (findings.patterns.length > 0) {
    more.push(
      `Fix: add it to fineItems.pattern in a dialect file of your own (copy config/dialects/${dialect.name}.yaml, add the pattern ` +
        "to the list under fineItems.pattern, set sip2.dialect to the file's path); the fees then show each text without its amount as about.",
    );
  }
  if (findings.otherDialects.length > 0) {
    const one = findings.otherDialects.length === 1;
    more.push(
      `The built-in dialect${one ? '' : 's'} ${findings.otherDialects.join(', ')} read${one ? 's' : ''} them, and ${one ? 'its' : 'their'} charset ` +
        `and hold lists are what this ILS sends too (the names and titles, AS and CD): is sip2.dialect right?`,
    );
  }
  if (findings.withoutPattern > 0) {
    more.push(
      `${findings.withoutPattern} with an amount fit no simple pattern: write one that captures it as (?<amount>...).`,
    );
  }
  if (findings.withoutAmount > 0) {
    more.push(
      `${findings.withoutAmount} carr${findings.withoutAmount === 1 ? 'ies' : 'y'} no amount, which no pattern can change: have the ILS write the amount ` +
        'into each fine item (Koha: av_field_template in SIPconfig.xml; Evergreen: av_format).',
    );
  }
  return {
    text: `${unmatched} of ${findings.read} fine items (AV) fit none of the patterns of dialect ${dialect.name} (sip2.dialect).`,
    more,
  };
}

/** One list as the count step prints it: its name and 64 field, its count, its entries (never the entries themselves). */
export function countLine(row: ListCount, maxListEntries: number): string {
  const count = row.count === null ? 'blank (unknown)' : String(row.count);
  const line = `${listName(row)}: count ${count}, ${entries(row.entries)}`;
  switch (countVerdict(row)) {
    case 'differs':
      return `${line}: does not match`;
    case 'capped':
      return `${line} (read up to sip2.maxListEntries, ${maxListEntries}): not a contradiction`;
    default:
      return line;
  }
}

/**
 * What the lists say about the dialect's listCounts: notes (detail lines) and,
 * when the dialect trusts counts that do not match, the warning.
 */
export function countsAdvice(
  rows: readonly ListCount[],
  dialect: Dialect,
): { notes: string[]; warning: Advice | null } {
  const notes: string[] = [];
  const blank = rows.filter((row) => countVerdict(row) === 'blank');
  const differing = rows.filter((row) => countVerdict(row) === 'differs');
  const trusted = dialect.listCounts === 'reliable';
  if (blank.length > 0) {
    const which =
      blank.length === 1
        ? `${names(blank)} has a blank count: the gateway reads that list`
        : `${blank.length === rows.length ? 'all six lists' : names(blank)} have blank counts: the gateway reads those lists`;
    notes.push(`${which} on every call, whatever listCounts says (dialect ${dialect.name}: ${dialect.listCounts})`);
  }
  if (rows.every((row) => row.entries === 0)) {
    notes.push(
      'the test patron has no entries in any list, so a wrong count of 0 cannot show: a test patron with loans and holds tells more',
    );
    return { notes, warning: null };
  }
  if (differing.length > 0) {
    if (trusted) return { notes, warning: mismatchWarning(differing, dialect) };
    notes.push(
      `the counts do not match the lists: listCounts: unreliable (dialect ${dialect.name}) is right for this ILS`,
    );
    return { notes, warning: null };
  }
  // Blank counts, or lists read only up to sip2.maxListEntries: nothing was matched.
  if (!rows.some((row) => row.entries > 0 && countVerdict(row) === 'matches')) return { notes, warning: null };
  const counts = blank.length > 0 ? 'the other counts match their lists' : 'the counts match the lists';
  notes.push(
    trusted
      ? `${counts}, as dialect ${dialect.name} (listCounts: reliable) expects`
      : `${counts}: a dialect with listCounts: reliable would save SIP2 messages on this ILS ` +
          `(items calls skip a list whose count is 0; docs/dialects.md, "Dialects"); check a few more patrons before you trust them`,
  );
  return { notes, warning: null };
}

/** The lists the items calls read by their count (the charged list always is; fees read the fine list whatever it says). */
const SKIPPED_AT_ZERO: readonly ListCount['list'][] = ['hold', 'overdue', 'recall', 'unavailableHold'];

function mismatchWarning(differing: readonly ListCount[], dialect: Dialect): Advice {
  const numbers = differing.map((row) => `${listName(row)} count ${row.count}, ${entries(row.entries)}`).join('; ');
  // A list the dialect counts among the charged ones (chargedIncludes) is read with the charged list, not by its count.
  const byCount = (list: ListCount['list']) =>
    SKIPPED_AT_ZERO.includes(list) && !(dialect.chargedIncludes as readonly string[]).includes(list);
  const missed = differing.filter((row) => row.count === 0 && row.entries > 0 && byCount(row.list));
  const more: string[] = [];
  if (missed.length > 0) {
    more.push(
      `The gateway does not read a list whose count is 0: for a patron like this one it skips ${names(missed)}, ` +
        'and their entries are missing from PAIA items unless another list carries them.',
    );
  }
  more.push(
    "The gateway notices wrong counts only when the charged list's first page holds more loans than its count " +
      '(then it reads every list and logs a warning); for a patron without loans it cannot.',
  );
  const where = (BUILTIN_DIALECTS as readonly string[]).includes(dialect.name)
    ? `a dialect file of your own (copy config/dialects/${dialect.name}.yaml, set listCounts: unreliable in it, set sip2.dialect to the file's path)`
    : 'the dialect file sip2.dialect names';
  more.push(
    `Fix: set listCounts: unreliable in ${where}; items calls then read all five lists whatever the counts say (docs/dialects.md, "Dialects").`,
  );
  return {
    text: `the ILS's 64 counts do not match its lists (${numbers}), but dialect ${dialect.name} trusts them (listCounts: reliable):`,
    more,
  };
}

function entries(count: number): string {
  return `${count} entr${count === 1 ? 'y' : 'ies'}`;
}

function names(rows: readonly ListCount[]): string {
  return rows.map(listName).join(', ');
}

function listName(row: Pick<ListCount, 'list'>): string {
  const name = row.list === 'unavailableHold' ? 'unavailable hold' : row.list;
  return `${name} (${listTag(row.list)})`;
}

// The doctor's checks take all their advice from here.
export { type AdviceContext, explainOpen, messageOf };

/** What VuFind needs before it offers a hold or request form (its PAIA driver, checkRequestIsValid). */
const VUFIND_FORMS =
  "VuFind's PAIA driver offers a hold or request form only to a patron with status 0, an expires date after today and " +
  'the write_items scope (PAIA.php checkRequestIsValid): without one its users never see such a form.';

/**
 * The patron's `expires` as VuFind reads it: advice when active accounts get
 * none (paia.expiresWhenUnknown off and no expiry date from the ILS), or
 * when the setting's date is not after today. `record` is the test
 * patron's record; without one only the dialect can tell. null: nothing to say.
 */
export function expiryAdvice(
  dialect: Dialect,
  setting: string | null,
  today: string,
  record: { status: number; expires?: string } | null,
): Advice | null {
  const fix =
    'Fix: set paia.expiresWhenUnknown (PAIA_PAIA_EXPIRES_WHEN_UNKNOWN) to a date such as 9999-12-31: the gateway then sends it ' +
    'as expires for active accounts whose ILS sends no expiry date.';
  if (setting !== null) {
    if (setting > today) return null;
    return {
      text: `paia.expiresWhenUnknown (${setting}) is not after today: active accounts without an expiry date from the ILS look expired to VuFind.`,
      more: [VUFIND_FORMS, 'Fix: set it to a date in the future, such as 9999-12-31.'],
    };
  }
  if (record === null) {
    if (dialect.expiry !== null) return null;
    return {
      text: `dialect ${dialect.name} reads no expiry date, so no patron record has expires (paia.expiresWhenUnknown is not set).`,
      more: [VUFIND_FORMS, fix],
    };
  }
  if (record.expires !== undefined || record.status !== 0) return null;
  const why =
    dialect.expiry === null
      ? `dialect ${dialect.name} reads no expiry date`
      : `the patron's 64 carries no expiry date in ${dialect.expiry.field} (the expiry field of dialect ${dialect.name})`;
  return {
    text: `the patron record has no expires: ${why}, and paia.expiresWhenUnknown is not set.`,
    more: [VUFIND_FORMS, fix],
  };
}
