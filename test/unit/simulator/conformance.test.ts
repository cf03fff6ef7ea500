import { readFileSync } from 'node:fs';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { inspectMessage, type MessageContext } from '../../../sip2-simulator/src/conformance/check.js';
import { ConnectionConformance } from '../../../sip2-simulator/src/conformance/connection.js';
import { CONFORMANCE_RULES, RULE_IDS, type RuleId } from '../../../sip2-simulator/src/conformance/rules.js';
import { ConformanceTally } from '../../../sip2-simulator/src/conformance/tally.js';
import { KEPT_CHARS, keptClientText } from '../../../sip2-simulator/src/kept-text.js';
import { encodeMessage } from '../../../src/sip2/codec.js';
import { SC_STATUS, Sip2Messages } from '../../../src/sip2/messages.js';
import type { Sip2Message } from '../../../src/sip2/spec.js';
import { sign } from '../../helpers/sip2-text-client.js';

/** A fresh connection: nothing sent yet, not logged in. */
const FIRST_MESSAGE: MessageContext = { loggedIn: false, previous: null, checksums: false, outstanding: false };
const checkMessage = (raw: Buffer | string, context: MessageContext) => inspectMessage(raw, context).deviations;

/**
 * The conformance check, rule by rule: each fires on a message that breaks it,
 * and none fires on what the project's own SIP2 client sends (its message
 * builders through its codec) or on the 3M checksum vectors of
 * /work/shared/reference/checksum-vectors.md.
 */

const LOGGED_IN: MessageContext = { ...FIRST_MESSAGE, loggedIn: true };
const DATE = '20260115    103000';
const rulesOf = (raw: string, context: MessageContext = LOGGED_IN) => checkMessage(raw, context).map((d) => d.rule);
/** A logged-in message with AY/AZ (sign() is the test client's own checksum). */
const signed = (text: string, sequence = 0) => `${sign(text, sequence)}\r`;

describe('checkMessage: silent on well-formed messages', () => {
  it('the checksum vectors: a login, an SC status after it, a 97', () => {
    expect(checkMessage('9300CNscclient|COclientpwd|CPcirc|AY0AZF1E5\r', FIRST_MESSAGE)).toEqual([]);
    const afterLogin = { ...LOGGED_IN, previous: { sequence: 0, checksum: 'F1E5' }, checksums: true };
    expect(checkMessage('9900302.00AY1AZFCA5\r', afterLogin)).toEqual([]);
    expect(checkMessage('97AZFEF5\r', afterLogin)).toEqual([]);
  });

  it("every request the gateway's client builds, encoded by its codec, in sequence, with and without AY/AZ", () => {
    const build = new Sip2Messages({ institutionId: 'DEMO', terminalPassword: 'term-pw', now: () => new Date() });
    const requests: Sip2Message[] = [
      { code: '93', uidAlgorithm: '0', pwdAlgorithm: '0', loginUserId: 'paia', loginPassword: 'paia-secret' },
      SC_STATUS,
      build.patronStatus('alice', 'pw'),
      build.patronInformation('alice', { password: 'pw' }),
      build.patronInformation('alice', { list: 'charged', start: 1, end: 5 }),
      build.itemInformation('it-0001'),
      build.renew('alice', 'it-0001', { password: 'pw' }),
      build.renewAll('alice'),
      build.hold('+', 'alice', { item: 'it-0002', pickupLocation: 'main' }),
      build.hold('-', 'alice', { title: 't-1', password: 'pw' }),
      build.endSession('alice'),
      build.feePaid('alice', { amount: '2.50', currency: 'EUR' }),
    ];
    for (const errorDetection of [true, false]) {
      let context: MessageContext = FIRST_MESSAGE;
      requests.forEach((request, i) => {
        const sequence = i % 10;
        const raw = encodeMessage(request, { charset: 'cp850', errorDetection, sequence });
        expect([request.code, checkMessage(raw, context)]).toEqual([request.code, []]);
        const checksum = raw.toString('latin1').slice(-5, -1);
        context = {
          loggedIn: true,
          outstanding: false,
          checksums: errorDetection,
          previous: errorDetection ? { sequence, checksum } : null,
        };
      });
    }
  });

  it('a command the catalogue does not know: the 3M text asks an ACS to ignore it', () => {
    expect(rulesOf('42hello|\r')).toEqual([]);
  });

  it('a checkout or renew with no block N and the nb due date blank, as most SCs send it', () => {
    expect(rulesOf(`11NN${DATE}${' '.repeat(18)}AODEMO|AAalice|ABit-1|AC|\r`)).toEqual([]);
    expect(rulesOf(`29NN${DATE}${' '.repeat(18)}AODEMO|AAalice|ABit-1|\r`)).toEqual([]);
  });

  it('a message repeated byte for byte while its answer is outstanding: the retransmission the 3M text asks for', () => {
    const connection = new ConnectionConformance(false);
    const raw = Buffer.from(`17${DATE}AODEMO|ABit-1|\r`, 'latin1');
    expect(connection.inspect(raw, { loggedIn: true, outstanding: false }, 'cp850')).toEqual([]);
    expect(connection.inspect(raw, { loggedIn: true, outstanding: true }, 'cp850')).toEqual([]);
    const other = Buffer.from(`17${DATE}AODEMO|ABit-2|\r`, 'latin1');
    expect(connection.inspect(other, { loggedIn: true, outstanding: true }, 'cp850').map((d) => d.rule)).toEqual([
      'one-at-a-time',
    ]);
  });

  it('a retransmission (same AY and AZ) is no sequence break', () => {
    const raw = signed(`17${DATE}AODEMO|ABit-1|`, 4);
    const checksum = raw.slice(-5, -1);
    expect(rulesOf(raw, { ...LOGGED_IN, previous: { sequence: 4, checksum } })).toEqual([]);
  });
});

describe('checkMessage: each rule fires on a message that breaks it', () => {
  const cases: Array<[RuleId, string, string, MessageContext?]> = [
    ['terminator', 'LF instead of CR', `17${DATE}AODEMO|ABit-1|\n`],
    ['terminator', 'no terminator at all', `17${DATE}AODEMO|ABit-1|`],
    ['nul', 'a NUL byte', `17${DATE}AODEMO|ABit\u00001|\r`],
    ['unknown-message', 'a response id sent to the ACS', '941\r'],
    ['login-first', 'a patron read before login', `17${DATE}AODEMO|ABit-1|\r`, FIRST_MESSAGE],
    [
      'one-at-a-time',
      'a second message before the first was answered',
      '9900302.00\r',
      { ...LOGGED_IN, outstanding: true },
    ],
    ['checksum', 'a wrong AZ', `17${DATE}AODEMO|ABit-1|AY0AZ0000\r`],
    [
      'checksum',
      'AZ dropped after earlier messages carried it',
      `17${DATE}AODEMO|ABit-1|\r`,
      { ...LOGGED_IN, checksums: true },
    ],
    ['checksum', 'an AZ that is not four hex digits', `17${DATE}AODEMO|ABit-1|AY0AZ12G4\r`],
    [
      'sequence',
      'AY skipping a number',
      signed(`17${DATE}AODEMO|ABit-1|`, 5),
      { ...LOGGED_IN, previous: { sequence: 3, checksum: 'ABCD' } },
    ],
    [
      'sequence',
      'AY repeated with another message',
      signed(`17${DATE}AODEMO|ABit-2|`, 3),
      { ...LOGGED_IN, previous: { sequence: 3, checksum: 'ABCD' } },
    ],
    ['sequence', 'AZ without AY', `${sign(`17${DATE}AODEMO|ABit-1|`, null)}\r`],
    ['sequence', 'AY without AZ', `17${DATE}AODEMO|ABit-1|AY0\r`],
    ['sequence', 'AY on a 97', `${sign('97', 1)}\r`],
    ['fixed-length', 'a truncated fixed part', '17202601\r'],
    ['fixed-length', 'a fixed part one character short', `23000${DATE.slice(1)}AODEMO|AAalice|ACx|ADy|\r`],
    ['fixed-value', 'a Y/N fixed field holding X', `29XN${DATE}${DATE}AODEMO|AAalice|ABit-1|\r`],
    ['fixed-value', 'a language that is no code', `63ENG${DATE}          AODEMO|AAalice|\r`],
    ['fixed-value', 'a summary asking for two lists', `63000${DATE}YY        AODEMO|AAalice|\r`],
    ['fixed-value', 'a protocol version not x.xx', '990080200 \r'],
    ['fixed-value', 'a hold mode outside + - *', `15x${DATE}AODEMO|AAalice|ABit-1|\r`],
    ['fixed-value', 'BO neither Y nor N', `65${DATE}AODEMO|AAalice|BOyes|\r`],
    ['date-format', 'a transaction date of 18 blanks', `17${' '.repeat(18)}AODEMO|ABit-1|\r`],
    [
      'date-format',
      'an nb due date of 18 blanks with no block Y',
      `11NY${DATE}${' '.repeat(18)}AODEMO|AAalice|ABit-1|AC|\r`,
    ],
    ['date-format', 'a date in another form', `172026-01-15T10:30:00AODEMO|ABit-1|\r`],
    ['date-format', 'a BW that is no date', `15+${DATE}BW2026-02-01|AODEMO|AAalice|ABit-1|\r`],
    ['required-field', 'a checkout without AO', `11NN${DATE}${DATE}AAalice|ABit-1|AC|\r`],
    ['required-field', 'a login without CO', '9300CNpaia|\r', FIRST_MESSAGE],
    ['required-field', 'a renew with neither AB nor AJ', `29NN${DATE}${DATE}AODEMO|AAalice|\r`],
    ['field-terminator', 'the last field without |', `17${DATE}AODEMO|ABit-1\r`],
    ['field-terminator', 'the last field without | before AY/AZ', signed(`17${DATE}AODEMO|ABit-1`)],
    ['field-id', 'an empty field after a |', `17${DATE}AODEMO||ABit-1|\r`],
    ['field-length', 'a value of 256 characters', `17${DATE}AODEMO|AB${'x'.repeat(256)}|\r`],
    ['duplicate-field', 'AB twice', `17${DATE}AODEMO|ABit-1|ABit-2|\r`],
  ];
  it.each(cases)('%s: %s', (rule, _, raw, context) => {
    expect(rulesOf(raw, context)).toContain(rule);
  });

  it('every rule has a case above', () => {
    expect(new Set(cases.map(([rule]) => rule))).toEqual(new Set(RULE_IDS));
  });

  it('names the 3M section, and the message or field where the rule has one; never a value', () => {
    const [missing] = checkMessage(`11NN${DATE}${DATE}AAalice|ABit-1|ACsecret|\r`, LOGGED_IN);
    expect(missing).toEqual({
      rule: 'required-field',
      section: 'Command Messages to the ACS, Checkout',
      detail: 'AO (institution id) missing',
    });
    const [date] = checkMessage(`17${' '.repeat(18)}AODEMO|ABit-1|\r`, LOGGED_IN);
    expect(date).toMatchObject({ section: 'Field Definitions, transaction date' });
    const all = checkMessage('9300CNuser|COhunter2|CPx|AY5AZ0000\r', {
      ...LOGGED_IN,
      previous: { sequence: 1, checksum: '0000' },
    });
    expect(all.length).toBeGreaterThan(0);
    expect(JSON.stringify(all)).not.toMatch(/hunter2|user/);
  });
});

describe('the report', () => {
  it('masks AC, AD and CO (and AZ, which gives away their byte sum), whatever the layout, and bounds the text', () => {
    const ok = signed(`23000${DATE}AODEMO|AAalice|ACterm|ADpin|`);
    expect(keptClientText(ok)).toBe(`23000${DATE}AODEMO|AAalice|AC***|AD***|AY0AZ****\r`);
    // A fixed part too short, one 18 characters too long (a date twice), a | missing before AD.
    for (const broken of [
      '93COhunter2|CNpaia|\r',
      `23000${DATE}${DATE}ADhunter2|AODEMO|AAalice|ACterm|\r`,
      `63000${DATE}Y         AODEMOADhunter2|AAalice|\r`,
    ])
      expect(keptClientText(broken)).not.toContain('hunter2');
    const huge = `63000${DATE}Y         AODEMO|AA${'x'.repeat(300_000)}|\r`;
    expect(keptClientText(huge).length).toBeLessThan(KEPT_CHARS + 40);
    expect(keptClientText(huge)).toMatch(/… \(300\d{3} characters\)$/);
  });

  it('counts per rule and per connection, keeps the last messages, logs each rule once', () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const tally = new ConformanceTally(logger, { messagesPerConnection: 2, connections: 1 });
    const bad = `17${DATE}AODEMO|ABit-1\r`;
    for (let i = 0; i < 3; i++) tally.record(1, bad, checkMessage(bad, LOGGED_IN));
    tally.record(2, '9300CNpaia|COpw\r', checkMessage('9300CNpaia|COpw\r', LOGGED_IN));
    const snapshot = tally.snapshot();
    expect(snapshot.totals).toEqual({ 'field-terminator': 4 });
    expect(snapshot.connections.map((c) => [c.connection, c.counts, c.messages.length])).toEqual([
      [2, { 'field-terminator': 1 }, 1],
    ]);
    expect(snapshot.connections[0]!.messages[0]!.text).toBe('9300CNpaia|CO***\r');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ rule: 'field-terminator', section: 'Variable-length fields' });
    tally.reset();
    expect(tally.snapshot()).toEqual({ totals: {}, connections: [] });
  });

  it("the simulator's README lists every rule with its 3M section", () => {
    const readme = readFileSync(new URL('../../../sip2-simulator/README.md', import.meta.url), 'utf8');
    for (const [rule, { section }] of Object.entries(CONFORMANCE_RULES))
      expect(readme).toMatch(new RegExp(`\\| \`${rule}\` \\| ${section} \\|`));
  });
});
