import { describe, expect, it } from 'vitest';
import {
  countLine,
  countsAdvice,
  expiryAdvice,
  explainOpen,
  explainRequest,
  fineAdvice,
  idleCloseAdvice,
  sessionLimitAdvice,
} from '../../../src/cli/doctor/advice.js';
import {
  charsetFinding,
  charsetOfTexts,
  countVerdict,
  fineFindings,
  holdListsOf,
  type IlsEvidence,
  type ListCount,
  listTag,
  patternForShape,
  supportedMessages,
} from '../../../src/cli/doctor/findings.js';
import { librariesToCheck } from '../../../src/cli/doctor/input.js';
import { Abort, librarySettings, Report } from '../../../src/cli/doctor/report.js';
import { loadConfig } from '../../../src/config/index.js';
import { sip2Setup } from '../../../src/gateway/index.js';
import { decodeText, encodeText } from '../../../src/sip2/charset.js';
import { loadDialect, parseFineItem } from '../../../src/sip2/dialect.js';
import { IlsProtocolError, IlsTimeout, IlsUnavailable, PoolRefused } from '../../../src/sip2/errors.js';
import { SUMMARY_LISTS } from '../../../src/sip2/spec.js';
import { ILS_ACCOUNT_ENV } from '../config/helpers.js';

/** The doctor's pure parts: what it reads in texts and fine items, the advice it gives, and its report. */

const generic = loadDialect('generic');

describe('charsetFinding', () => {
  it('takes U+FFFD in a UTF-8 decode for a single-byte ILS', () => {
    const sent = encodeText('Émile Zoë', 'cp850');
    expect(charsetFinding(decodeText(sent, 'utf-8'), 'utf-8')).toBe('single-byte-read-as-utf-8');
    expect(charsetFinding('Émile Zoë', 'utf-8')).toBeNull();
  });

  it('takes a cp850 or latin1 decode whose bytes are valid UTF-8 with non-ASCII characters for a UTF-8 ILS', () => {
    const sent = encodeText('Émile Zoë Ångström', 'utf-8');
    expect(charsetFinding(decodeText(sent, 'cp850'), 'cp850')).toBe('utf-8-read-as-single-byte');
    expect(charsetFinding(decodeText(sent, 'latin1'), 'latin1')).toBe('utf-8-read-as-single-byte');
  });

  it('leaves right decodes and plain ASCII alone', () => {
    expect(charsetFinding(decodeText(encodeText('Émile Zoë Ångström', 'cp850'), 'cp850'), 'cp850')).toBeNull();
    expect(charsetFinding(decodeText(encodeText('Hauptstraße 1', 'latin1'), 'latin1'), 'latin1')).toBeNull();
    expect(charsetFinding('Alice Example', 'cp850')).toBeNull();
    expect(charsetFinding('Alice Example', 'utf-8')).toBeNull();
  });
});

describe('patternForShape', () => {
  it('reads an amount at the end (Koha’s "<description> <amount>")', () => {
    expect(patternForShape('Aaaaaaa aaaa 99999 9.99')).toEqual({
      pattern: String.raw`^(?<about>.*\S)\s+(?<amount>-?\d+\.\d{2})$`,
      where: 'at the end',
    });
  });

  it('reads an amount at the start (Evergreen’s legacy "<balance> <type> <title>")', () => {
    expect(patternForShape('9.99 Aaaaaaa aaaaaaaaa Aaaaaaa aaaa 99999 / ')).toEqual({
      pattern: String.raw`^(?<amount>-?\d+\.\d{2})\s+(?<about>.*)$`,
      where: 'at the start',
    });
  });

  it('reads an amount in between, with its currency sign and a decimal comma', () => {
    expect(patternForShape('a-999 $9.99 "AAAA" Aaaaaaa aaaa 99999')?.pattern).toBe(
      String.raw`^.*?(?<![\p{L}\p{N}_.,/-])\$ ?(?<amount>-?\d+\.\d{2})(?!\d|[.,]\d)\W*(?<about>.*)$`,
    );
    expect(patternForShape('Aaaaa 9,99 AAA')?.pattern).toContain(String.raw`(?<amount>-?\d+,\d{2})`);
  });

  it('derives nothing without exactly one amount: none, two, or a date', () => {
    expect(patternForShape('Aaaaaaa aaaa 99999')).toBeNull();
    expect(patternForShape('9.99 aaa 9.99')).toBeNull();
    expect(patternForShape('Aaaaaaa 99.99.9999')).toBeNull();
  });
});

/** What a Koha SIP server shows besides its fine texts: UTF-8 names, AS with the ready holds only. */
const KOHA_LIKE: IlsEvidence = { charset: 'utf-8', holdLists: 'ready-in-AS' };
/** A server that reads as the generic dialect: a single-byte charset, AS with every hold. */
const GENERIC_LIKE: IlsEvidence = { charset: 'single-byte', holdLists: 'all-in-AS' };
const UNKNOWN: IlsEvidence = { charset: null, holdLists: null };

describe('fineFindings', () => {
  it('finds Koha-style entries unread by the generic dialect, with a pattern that reads them and the koha dialect that does', () => {
    const entries = ['Overdue fine 30002 2.50', 'Processing fee 1.00', ''];
    const findings = fineFindings(entries, generic, KOHA_LIKE);
    expect(findings.read).toBe(2);
    expect(findings.unmatched).toEqual([
      { shape: 'Aaaaaaa aaaa 99999 9.99', count: 1, listed: true },
      { shape: 'Aaaaaaaaaa aaa 9.99', count: 1, listed: true },
    ]);
    expect(findings.patterns.map((p) => p.where)).toEqual(['at the end']);
    expect(findings.otherDialects).toContain('koha');
    expect(findings.withoutAmount).toBe(0);
    // The pattern, put into a dialect, reads amount and about.
    const fixed = { ...generic, fineItems: { ...generic.fineItems, pattern: findings.patterns[0]!.pattern } };
    expect(parseFineItem('Overdue fine 30002 2.50', fixed)).toEqual({ about: 'Overdue fine 30002', amount: '2.50' });
  });

  it('suggests no other dialect when only the fine texts match it: the names or the hold lists say otherwise, or nothing', () => {
    const entries = ['Overdue fine 30002 2.50', 'Processing fee 1.00'];
    for (const evidence of [
      GENERIC_LIKE,
      UNKNOWN,
      { ...KOHA_LIKE, charset: 'single-byte' },
      { ...KOHA_LIKE, holdLists: 'all-in-AS' },
      { ...KOHA_LIKE, holdLists: null },
      { ...KOHA_LIKE, charset: null },
    ] satisfies IlsEvidence[]) {
      const findings = fineFindings(entries, generic, evidence);
      expect(findings.otherDialects, JSON.stringify(evidence)).toEqual([]);
      // The pattern of its own is still offered, and the advice names no dialect.
      expect(findings.patterns).toHaveLength(1);
      expect(fineAdvice(findings, generic).more.join('\n')).not.toMatch(/built-in dialect/);
    }
    const suggested = fineFindings(entries, generic, KOHA_LIKE);
    expect(fineAdvice(suggested, generic).more).toContain(
      'The built-in dialect koha reads them, and its charset and hold lists are what this ILS sends too (the names and titles, AS and CD): is sip2.dialect right?',
    );
  });

  it('reads the charset from the names and titles, and the hold lists from AS and CD', () => {
    expect(charsetOfTexts(['Alice', 'Der Zauberberg'], 'cp850')).toBeNull();
    expect(charsetOfTexts(['Alice', 'Müller'], 'cp850')).toBe('single-byte');
    expect(charsetOfTexts(['Alice', 'Müller'], 'utf-8')).toBe('utf-8');
    expect(charsetOfTexts(['Alice', decodeText(encodeText('Müller', 'utf-8'), 'cp850')], 'cp850')).toBe('utf-8');
    expect(charsetOfTexts(['M\uFFFDller'], 'utf-8')).toBe('single-byte');
    expect(holdListsOf(['it-0010', 'it-0020'], ['it-0020'])).toBe('all-in-AS');
    expect(holdListsOf(['it-0010'], ['it-0020'])).toBe('ready-in-AS');
    expect(holdListsOf([], ['it-0020'])).toBe('ready-in-AS');
    expect(holdListsOf(['it-0010', 'it-0020'], [])).toBeNull();
    expect(holdListsOf(['it-0010', 'it-0020'], ['it-0020', 'it-0030'])).toBeNull();
  });

  it('derives a pattern for Evergreen’s 3m format, with the amount in between', () => {
    const findings = fineFindings(
      ['f-101 $2.50 "FINE" Overdue fine 30002', 'f-102 $12.00 "LOST" Lost item Faust'],
      generic,
      UNKNOWN,
    );
    expect(findings.patterns).toHaveLength(1);
    expect(findings.patterns[0]!.where).toBe('in between');
    expect(findings.withoutPattern).toBe(0);
  });

  it('counts entries without an amount as left out, with no pattern to offer', () => {
    const findings = fineFindings(['Overdue fine 30002', 'Processing fee', 'Processing fee'], generic, KOHA_LIKE);
    expect(findings.unmatched).toEqual([
      { shape: 'Aaaaaaa aaaa 99999', count: 1, listed: false },
      { shape: 'Aaaaaaaaaa aaa', count: 2, listed: false },
    ]);
    expect(findings.withoutAmount).toBe(3);
    expect(findings.patterns).toEqual([]);
    expect(findings.otherDialects).toEqual([]);
  });

  it('finds nothing when the dialect reads every entry', () => {
    expect(fineFindings(['2.50 EUR overdue 20260313 it-0001 Der Zauberberg'], generic, UNKNOWN).unmatched).toEqual([]);
  });
});

describe('list counts', () => {
  /** alice's six lists (sip2-simulator/data/demo.json), with the counts given. */
  const alice = (counts: Array<number | null>): ListCount[] =>
    SUMMARY_LISTS.map((list, i) => ({
      list,
      count: counts[i]!,
      entries: [2, 1, 3, 2, 0, 1][i]!,
      capped: false,
    }));
  const unreliable = { ...generic, listCounts: 'unreliable' as const };

  it('names each list by its 64 field, from the codec table', () => {
    expect(SUMMARY_LISTS.map(listTag)).toEqual(['AS', 'AT', 'AU', 'AV', 'BU', 'CD']);
  });

  it('takes a list read up to sip2.maxListEntries as no contradiction while its count is not below the entries', () => {
    expect(countVerdict({ list: 'charged', count: 12_000, entries: 10_000, capped: true })).toBe('capped');
    expect(countVerdict({ list: 'charged', count: 10_000, entries: 10_000, capped: true })).toBe('matches');
    expect(countVerdict({ list: 'charged', count: 0, entries: 10_000, capped: true })).toBe('differs');
    expect(countVerdict({ list: 'charged', count: 12_000, entries: 3, capped: false })).toBe('differs');
    expect(countVerdict({ list: 'hold', count: null, entries: 2, capped: false })).toBe('blank');
    expect(countLine({ list: 'charged', count: 12_000, entries: 10_000, capped: true }, 10_000)).toBe(
      'charged (AU): count 12000, 10000 entries (read up to sip2.maxListEntries, 10000): not a contradiction',
    );
    expect(countLine({ list: 'unavailableHold', count: 0, entries: 1, capped: false }, 50)).toBe(
      'unavailable hold (CD): count 0, 1 entry: does not match',
    );
  });

  it('warns when a trusting dialect meets counts of 0 over full lists, naming the lists it would skip and the fix', () => {
    const { notes, warning } = countsAdvice(alice([0, 0, 0, 0, 0, 0]), generic);
    expect(notes).toEqual([]);
    expect(warning?.text).toBe(
      "the ILS's 64 counts do not match its lists (hold (AS) count 0, 2 entries; overdue (AT) count 0, 1 entry; " +
        'charged (AU) count 0, 3 entries; fine (AV) count 0, 2 entries; unavailable hold (CD) count 0, 1 entry), ' +
        'but dialect generic trusts them (listCounts: reliable):',
    );
    const more = warning!.more.join('\n');
    // The charged list is always read and fees read the fine list whatever its count: only these are skipped.
    expect(more).toContain('it skips hold (AS), overdue (AT), unavailable hold (CD), and their entries are missing');
    expect(more).toContain('copy config/dialects/generic.yaml, set listCounts: unreliable in it');
  });

  it('does not say a list the dialect reads with the charged one (chargedIncludes) is skipped for its count', () => {
    const koha = loadDialect('koha');
    expect(koha.chargedIncludes).toContain('overdue');
    const more = countsAdvice(alice([0, 0, 0, 0, 0, 0]), koha).warning!.more.join('\n');
    expect(more).toContain('it skips hold (AS), unavailable hold (CD), and their entries are missing');
  });

  it('only notes mismatching counts when the dialect already reads every list', () => {
    const { notes, warning } = countsAdvice(alice([0, 0, 0, 0, 0, 0]), unreliable);
    expect(warning).toBeNull();
    expect(notes).toEqual([
      'the counts do not match the lists: listCounts: unreliable (dialect generic) is right for this ILS',
    ]);
  });

  it('says a trusting dialect would save messages when an unreliable one meets matching counts', () => {
    expect(countsAdvice(alice([2, 1, 3, 2, 0, 1]), unreliable)).toEqual({
      notes: [
        'the counts match the lists: a dialect with listCounts: reliable would save SIP2 messages on this ILS ' +
          '(items calls skip a list whose count is 0; docs/dialects.md, "Dialects"); check a few more patrons before you trust them',
      ],
      warning: null,
    });
    expect(countsAdvice(alice([2, 1, 3, 2, 0, 1]), generic).notes).toEqual([
      'the counts match the lists, as dialect generic (listCounts: reliable) expects',
    ]);
  });

  it('says blank counts make the gateway read those lists every time, whatever the dialect', () => {
    expect(countsAdvice(alice([null, null, null, null, null, null]), generic)).toEqual({
      notes: [
        'all six lists have blank counts: the gateway reads those lists on every call, whatever listCounts says (dialect generic: reliable)',
      ],
      warning: null,
    });
    expect(countsAdvice(alice([2, 1, 3, 2, 0, null]), generic).notes).toEqual([
      'unavailable hold (CD) has a blank count: the gateway reads that list on every call, whatever listCounts says (dialect generic: reliable)',
      'the other counts match their lists, as dialect generic (listCounts: reliable) expects',
    ]);
  });

  it('says a patron without any entries cannot show a wrong count of 0', () => {
    const empty = alice([0, 0, 0, 0, 0, 0]).map((row) => ({ ...row, entries: 0 }));
    const { notes, warning } = countsAdvice(empty, generic);
    expect(warning).toBeNull();
    expect(notes.join('\n')).toContain('the test patron has no entries in any list, so a wrong count of 0 cannot show');
  });
});

describe('supportedMessages', () => {
  it('lists every BX position by code and 3M name, and what the gateway uses it for', () => {
    const { rows, warnings } = supportedMessages('YYYYYYYYYYYYYYYY');
    expect(rows).toHaveLength(16);
    expect(rows[0]).toBe('yes  23 Patron Status Request');
    expect(rows[7]).toMatch(/^yes {2}63 Patron Information +used for PAIA login, patron, items, fees$/);
    expect(warnings).toEqual([]);
  });

  it('warns for each message a PAIA method needs that the ILS says it does not support', () => {
    // 63 (position 7) and 29 (position 14) off, the rest on.
    const { rows, warnings } = supportedMessages('YYYYYYYNYYYYYYNY');
    expect(rows[7]).toMatch(/^no {3}63 /);
    expect(warnings).toEqual([
      'the ILS says it does not support 63 Patron Information, which the gateway needs for PAIA login, patron, items, fees',
      'the ILS says it does not support 29 Renew, which the gateway needs for PAIA renew',
    ]);
  });

  it('marks the positions a short BX leaves out with ? and says the ILS may speak an older SIP2', () => {
    const { rows, warnings } = supportedMessages('YYYYYYYYYY');
    expect(rows[10]).toMatch(/^\? {4}17 Item Information +used for PAIA items$/);
    expect(warnings).toEqual(['BX has 10 of 16 positions: the ILS may speak an older SIP2 version']);
  });
});

describe('advice', () => {
  it('advises a keepalive of half the ILS’s idle timeout, or raising the timeout when no keepalive of 1 s or more fits', () => {
    const minute = idleCloseAdvice(59_800, 120_000);
    expect(minute.text).toContain(
      "after about 60 s, sooner than the gateway's keepalive (sip2.pool.keepaliveMs 120000)",
    );
    expect(minute.more.join(' ')).toContain(
      'set sip2.pool.keepaliveMs below 60 s, e.g. 29000 (PAIA_SIP2_POOL_KEEPALIVE_MS=29000)',
    );
    const second = idleCloseAdvice(1004, 3000);
    expect(second.text).toContain('after about 1.0 s');
    expect(second.more.join(' ')).toContain(
      "no keepalive of at least 1 s (1000 ms) stays safely below 1.0 s: raise the ILS's idle timeout",
    );
  });

  it('tells unanswered logins from refused ones in the session limit', () => {
    const advice = sessionLimitAdvice(1, 4, 1, new Map([['login-rejected', 2]]), 5000);
    expect(advice.text).toBe('the ILS serves 1 session to this host at once, fewer than sip2.pool.max (4):');
    const more = advice.more.join('\n');
    expect(more).toContain('1 further login got no answer within sip2.timeouts.responseMs (5000 ms)');
    expect(more).toContain('further sessions were turned down (login-rejected 2)');
    expect(more).toContain('set sip2.pool.max to 1 (PAIA_SIP2_POOL_MAX=1)');
  });

  it('explains a failed first session by the error’s reason and errno code', () => {
    const ils = { ...ILS_ACCOUNT_ENV, PAIA_SIP2_HOST: 'ils.example.org', PAIA_SIP2_PORT: '6001' };
    const { settings } = sip2Setup(loadConfig({ env: ils }));
    const ctx = { settings, dialect: generic, tls: false, target: { host: 'ils.example.org', port: 6001 } };
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND ils.example.org'), { code: 'ENOTFOUND' });
    expect(
      explainOpen(new IlsUnavailable('connect-error', 'cannot connect', { cause: dns }), ctx, new Set()),
    ).toContain('the name "ils.example.org" does not resolve (ENOTFOUND)');
    expect(explainOpen(new IlsUnavailable('refused', 'cannot connect'), ctx, new Set())).toContain(
      'connection refused (nothing listens there)',
    );
    const noLogin = new IlsTimeout('login-timeout', 'the ILS did not answer');
    expect(explainOpen(noLogin, ctx, new Set())).toContain(
      'did not answer the 93 login within sip2.timeouts.responseMs (5000 ms)',
    );
    expect(explainOpen(noLogin, ctx, new Set())).toContain('every SIP2 worker of the ILS is busy');
    expect(explainOpen(noLogin, ctx, new Set(['93']))).toContain(
      'the terminal login was accepted, but the ILS did not answer the 99',
    );
    expect(explainOpen(new IlsProtocolError('resend-refused', 'x'), ctx, new Set())).toContain(
      'the ILS could not read our messages',
    );
  });

  it('names the terminal settings when the circuit opened on refused terminal logins, never the password', () => {
    const ils = {
      ...ILS_ACCOUNT_ENV,
      PAIA_SIP2_HOST: 'ils.example.org',
      PAIA_SIP2_TERMINAL_PASSWORD: 'Tq8-unit-terminal-secret',
    };
    const { settings } = sip2Setup(loadConfig({ env: ils }));
    const ctx = { settings, dialect: generic, tls: false, target: { host: 'ils.example.org', port: 6001 } };
    const advice = explainRequest(new PoolRefused('terminal-login-refused', 'x', 30), '63', ctx);
    expect(advice).toContain('the ILS refused the terminal login sip2.circuit.failureThreshold (5) times in a row');
    expect(advice).toContain('sip2.terminal.password (PAIA_SIP2_TERMINAL_PASSWORD)');
    expect(advice).not.toContain('Tq8-unit-terminal-secret');
  });
});

// VuFind PAIA.php checkRequestIsValid: a hold or request form only with status 0, expires after today, write_items.
describe('expiryAdvice', () => {
  const folio = loadDialect('folio');
  const today = '2026-03-15';

  it('warns when active accounts get no expires: the dialect reads none, or the patron’s 64 carries none', () => {
    const dialectOnly = expiryAdvice(folio, null, today, null);
    expect(dialectOnly?.text).toBe(
      'dialect folio reads no expiry date, so no patron record has expires (paia.expiresWhenUnknown is not set).',
    );
    const more = dialectOnly?.more.join('\n') ?? '';
    expect(more).toContain(
      'status 0, an expires date after today and the write_items scope (PAIA.php checkRequestIsValid)',
    );
    expect(more).toContain('set paia.expiresWhenUnknown (PAIA_PAIA_EXPIRES_WHEN_UNKNOWN) to a date such as 9999-12-31');
    expect(expiryAdvice(folio, null, today, { status: 0 })?.text).toBe(
      'the patron record has no expires: dialect folio reads no expiry date, and paia.expiresWhenUnknown is not set.',
    );
    expect(expiryAdvice(generic, null, today, { status: 0 })?.text).toBe(
      "the patron record has no expires: the patron's 64 carries no expiry date in PA (the expiry field of dialect generic), and paia.expiresWhenUnknown is not set.",
    );
  });

  it('says nothing when VuFind gets what it needs, or the account is not active anyway', () => {
    expect(expiryAdvice(generic, null, today, null)).toBeNull();
    expect(expiryAdvice(generic, null, today, { status: 0, expires: '2027-01-01' })).toBeNull();
    expect(expiryAdvice(folio, null, today, { status: 2 })).toBeNull();
    expect(expiryAdvice(folio, '9999-12-31', today, null)).toBeNull();
    expect(expiryAdvice(folio, '9999-12-31', today, { status: 0, expires: '9999-12-31' })).toBeNull();
  });

  it('warns of a setting that is not after today', () => {
    expect(expiryAdvice(folio, today, today, null)?.text).toBe(
      'paia.expiresWhenUnknown (2026-03-15) is not after today: active accounts without an expiry date from the ILS look expired to VuFind.',
    );
  });
});

describe('Report', () => {
  const collect = (library: string | null = null) => {
    const lines: string[] = [];
    const out = { write: (text: string) => lines.push(text) } as unknown as NodeJS.WritableStream;
    return { lines, report: new Report(out, library) };
  };

  it('masks secrets of six characters or more in every line, and leaves shorter ones (dates, amounts) alone', () => {
    const { lines, report } = collect();
    report.addSecret('alice-pass');
    report.addSecret('1234');
    report.detail('password alice-pass, PIN 1234');
    expect(lines).toEqual(['     password ***, PIN 1234\n']);
  });

  it('counts a warning with its continuation lines once', () => {
    const { lines, report } = collect();
    report.warn('first', 'second', 'third');
    expect(report.warnings).toBe(1);
    expect(lines).toEqual(['     ! first\n', '       second\n', '       third\n']);
  });

  it('prints a failed step as FAIL with the explanation and stops the checks', async () => {
    const { lines, report } = collect();
    await expect(
      report.step(
        'connect',
        () => Promise.reject(new Error('boom')),
        () => 'it broke: check this',
      ),
    ).rejects.toBeInstanceOf(Abort);
    expect(lines).toEqual(['FAIL connect: it broke: check this\n']);
    expect(report.failures).toBe(1);
    expect(report.firstFailedStep).toBe('connect');
  });

  it('of a library names it in its findings (FAIL and warnings), and not in the other lines', () => {
    const { lines, report } = collect('DE-830');
    report.line('ok   connect (1 ms)');
    report.warn('first', 'second');
    report.fail('connect', 'refused');
    expect(lines).toEqual([
      'ok   connect (1 ms)\n',
      '     ! [DE-830] first\n',
      '       second\n',
      'FAIL [DE-830] connect: refused\n',
    ]);
    expect(report.firstFailedStep).toBe('connect');
  });
});

describe('librariesToCheck (--library)', () => {
  const libraries = [{ id: 'DE-830' }, { id: 'DE-18' }];

  it('checks every library in file order, or the one asked for; without a libraries section the one ILS', () => {
    expect(librariesToCheck(libraries, undefined)).toEqual({ ok: true, libraries });
    expect(librariesToCheck(libraries, 'DE-18')).toEqual({ ok: true, libraries: [{ id: 'DE-18' }] });
    expect(librariesToCheck(null, undefined)).toEqual({ ok: true, libraries: null });
  });

  it("refuses --patron without --library when there are several libraries: a test patron is one library's", () => {
    const refused = librariesToCheck(libraries, undefined, 'alice');
    expect(refused).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^--patron needs --library: .*DE-830, DE-18/),
    });
    expect(librariesToCheck(libraries, 'DE-18', 'alice')).toEqual({ ok: true, libraries: [{ id: 'DE-18' }] });
    expect(librariesToCheck([{ id: 'DE-830' }], undefined, 'alice')).toEqual({
      ok: true,
      libraries: [{ id: 'DE-830' }],
    });
    expect(librariesToCheck(null, undefined, 'alice')).toEqual({ ok: true, libraries: null });
  });

  it('refuses an id the configuration lacks, listing its ids, and --library without a libraries section', () => {
    expect(librariesToCheck(libraries, 'de-830')).toEqual({
      ok: false,
      reason: '--library "de-830" is not a library of the configuration; its libraries are DE-830, DE-18',
    });
    expect(librariesToCheck(null, 'DE-830')).toEqual({
      ok: false,
      reason:
        '--library "DE-830": the configuration has no libraries section, so there is one ILS to check; leave out --library',
    });
  });
});

describe("a library's report names the library's settings", () => {
  it('by their place in the libraries section, without the environment hints that set the top level only', () => {
    const lines: string[] = [];
    // As main.ts gives them: the settings of sip2, paia and daia, and their sections.
    const settings = new Set([
      'sip2',
      'sip2.host',
      'sip2.port',
      'sip2.pool',
      'sip2.pool.max',
      'paia.itemUri',
      'daia.records.file',
    ]);
    const report = new Report(
      { write: (text: string) => lines.push(text) } as unknown as NodeJS.WritableStream,
      'DE-830',
      settings,
    );
    report.fail(
      'connect',
      'check sip2.host and sip2.port; set sip2.pool.max to 2 (PAIA_SIP2_POOL_MAX=2), the ILS is sip2.example.org:6001',
    );
    expect(lines).toEqual([
      'FAIL [DE-830] connect: check libraries[DE-830].sip2.host and libraries[DE-830].sip2.port; set libraries[DE-830].sip2.pool.max to 2, the ILS is sip2.example.org:6001\n',
    ]);
    expect(librarySettings('paia.itemUri, daia.records.file, demo.sip2Port', 'A', settings)).toBe(
      'libraries[A].paia.itemUri, libraries[A].daia.records.file, demo.sip2Port',
    );
  });
});
