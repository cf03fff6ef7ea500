import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { trackChild } from '../helpers/children.js';
import { sourceEntry } from '../helpers/entry-points.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';
import { type Answer, INSTITUTION, sign, sip2Date, TextSip2Client, text } from '../helpers/sip2-text-client.js';

/**
 * Every message a self-check terminal or an ILS client sends, and the three
 * checksum modes, against the simulator as a separate process.
 *
 * The SIP2 client (test/helpers/sip2-text-client.ts) is written from the 3M
 * text (rev. 2.12) alone: requests are literal wire strings after the 3M
 * layouts, answers are read by position and field id, and checksums are
 * computed there. It shares no code with the project's codec, so an encoder
 * or decoder bug fails these tests too.
 */

// ------------------------------------------------------------ a terminal

const field = (answer: Answer, id: string) => answer.fields.get(id)?.[0];
const BLANK_FLAGS = ' '.repeat(14);

/** A terminal's request: answered within 1 s, checksummed exactly when it was signed, and with the AY it was signed with. */
async function ask(t: TextSip2Client, message: string): Promise<Answer> {
  const started = performance.now();
  const sequence = t.write(message);
  const answer = await t.next(1000);
  expect(performance.now() - started).toBeLessThan(1000);
  expect(answer.checksummed).toBe(sequence !== null);
  if (sequence !== null && answer.code !== '96') expect(answer.sequence).toBe(String(sequence));
  return answer;
}

// ------------------------------------------------------------ simulators

let sim: SimulatorProcess;
let strict: SimulatorProcess;
let off: SimulatorProcess;
const sockets: TextSip2Client[] = [];

async function connect(port = sim.port, signing = true): Promise<TextSip2Client> {
  const client = await TextSip2Client.connect(port, { sign: signing });
  sockets.push(client);
  return client;
}

/** A logged-in terminal that signs its requests (AY/AZ), or not. */
async function terminal(signing = true, port = sim.port): Promise<TextSip2Client> {
  const t = await connect(port, signing);
  expect((await ask(t, text.login())).text.slice(0, 3)).toBe('941');
  return t;
}

beforeAll(async () => {
  [sim, strict, off] = await Promise.all([
    startSimulatorProcess(),
    startSimulatorProcess({ extraArgs: ['--strict-checksums'] }),
    startSimulatorProcess({ errorDetection: false }),
  ]);
});

afterAll(async () => {
  for (const s of sockets) s.close();
  await Promise.all([sim, strict, off].map((p) => p?.stop()));
});

beforeEach(async () => {
  while (sockets.length > 0) sockets.pop()!.close();
  await Promise.all([sim.reset(), strict.reset(), off.reset()]);
});

// ------------------------------------------------------------ the messages

describe('a client test suite written for a real ACS', () => {
  it.each([
    ['with AY/AZ, as the Perl SIPServer test suite sends them', true],
    ['without AY/AZ, as pysip2-style clients send them', false],
  ])(
    'runs on one connection %s: every request answered within 1 s, circulation state as the 3M text says',
    async (_, signing) => {
      const t = await terminal(signing);

      const acs = await ask(t, text.scStatus());
      expect(acs.code).toBe('98');
      expect(acs.fixed.slice(0, 6)).toBe('YYYYYN'); // on-line, checkin ok, checkout ok, renewal policy, status update ok, off-line N
      expect(field(acs, 'BX')).toBe('YYYYYYYYYYYYYYYY');

      const status = await ask(t, text.patronStatus('hanna', 'hanna-pass'));
      expect(status.code).toBe('24');
      expect(status.fixed.slice(0, 14)).toBe(BLANK_FLAGS);
      expect([field(status, 'AE'), field(status, 'BL'), field(status, 'CQ')]).toEqual(['Hanna Selfcheck', 'Y', 'Y']);

      const before = await ask(t, text.patronInformation('hanna'));
      expect(before.code).toBe('64');
      expect(before.fixed.slice(43, 47)).toBe('0002'); // charged items count

      const lent = await ask(t, text.checkout('hanna', 'sc-0001'));
      expect(lent.code).toBe('12');
      expect(lent.fixed.slice(0, 4)).toBe('1NNY'); // ok, not a renewal, not magnetic, desensitize
      expect(field(lent, 'AJ')).toBe('Der Schimmelreiter');
      const due = field(lent, 'AH')!;
      expect(due).toMatch(/^\d{8} {4}\d{6}$/);

      const item = await ask(t, text.itemInformation('sc-0001'));
      expect(item.fixed.slice(0, 2)).toBe('04'); // charged
      expect(field(item, 'AH')).toBe(due);

      const loans = await ask(t, text.patronInformation('hanna', 'charged'));
      expect(loans.fixed.slice(43, 47)).toBe('0003');
      expect(loans.fields.get('AU')).toEqual(['sc-0001', 'sc-0002', 'sc-0003']);

      const renewed = await ask(t, text.renew('hanna', 'sc-0001'));
      expect(renewed.code).toBe('30');
      expect(renewed.fixed.slice(0, 2)).toBe('1Y');
      expect(field(renewed, 'AH')! > due).toBe(true);
      expect(field(await ask(t, text.itemInformation('sc-0001')), 'AH')).toBe(field(renewed, 'AH'));

      const all = await ask(t, text.renewAll('hanna'));
      expect(all.code).toBe('66');
      expect(all.fixed.slice(0, 9)).toBe('100020001');
      expect(all.fields.get('BM')).toEqual(['sc-0001', 'sc-0003']);
      expect(all.fields.get('BN')).toEqual(['sc-0002']); // ida's hold

      const blocked = await ask(t, text.blockPatron('hanna', 'Card left in the machine'));
      expect(blocked.code).toBe('24');
      expect(blocked.fixed.slice(0, 4)).toBe('YYYY');
      expect(blocked.fixed.slice(14, 17)).toBe('000');
      expect(blocked.fields.get('AF')).toContain('Card left in the machine');
      expect((await ask(t, text.patronStatus('hanna'))).fixed.slice(0, 4)).toBe('YYYY');

      const enabled = await ask(t, text.patronEnable('hanna'));
      expect(enabled.code).toBe('26');
      expect(enabled.fixed.slice(0, 14)).toBe(BLANK_FLAGS);
      expect(field(enabled, 'AF')).toBe('Card block lifted');
      expect((await ask(t, text.patronStatus('hanna'))).fixed.slice(0, 14)).toBe(BLANK_FLAGS);

      // another patron's hold waits for the item when it comes back
      const held = await ask(t, text.hold('alice', 'sc-0001', 'MAIN'));
      expect(held.code).toBe('16');
      expect(held.fixed[0]).toBe('1');

      const returned = await ask(t, text.checkin('sc-0001'));
      expect(returned.code).toBe('10');
      expect(returned.fixed.slice(0, 4)).toBe('1YNY'); // ok, resensitize, not magnetic, alert
      expect(
        Object.fromEntries(['AB', 'AQ', 'AA', 'CV', 'CT', 'CY', 'DA'].map((id) => [id, field(returned, id)])),
      ).toEqual({
        AB: 'sc-0001',
        AQ: 'MAIN',
        AA: 'hanna',
        CV: '01',
        CT: 'MAIN',
        CY: 'alice',
        DA: 'Alice Example',
      });
      expect(field(returned, 'AF')).toMatch(/^Item on hold for alice: put it on the hold shelf/);

      const shelved = await ask(t, text.itemInformation('sc-0001'));
      expect(shelved.fixed.slice(0, 2)).toBe('08'); // waiting on hold shelf
      expect(field(shelved, 'CM')).toMatch(/^\d{8} {4}\d{6}$/);
      expect((await ask(t, text.patronInformation('hanna', 'charged'))).fields.get('AU')).toEqual([
        'sc-0002',
        'sc-0003',
      ]);

      expect((await ask(t, text.endPatronSession('hanna'))).fixed[0]).toBe('Y');
    },
  );
});

describe('11 Checkout -> 12', () => {
  it('lends an available item; a refusal is 0NUN with the reason in AF and an empty AH', async () => {
    const t = await terminal();
    const refused = await ask(t, text.checkout('hanna', 'it-0020'));
    expect(refused.text).toMatch(/^120NUN\d{8} {4}\d{6}AODEMO\|AAhanna\|ABit-0020\|AJBuddenbrooks\|AH\|/);
    expect(field(refused, 'AF')).toBe('Item is checked out to another patron');
    const unknown = await ask(t, text.checkout('hanna', 'zz-404'));
    expect([unknown.fixed.slice(0, 4), field(unknown, 'AJ'), field(unknown, 'AF')]).toEqual([
      '0NUN',
      '',
      'Item not found',
    ]);
    const lent = await ask(t, text.checkout('hanna', 'sc-0004'));
    expect(lent.fixed.slice(0, 4)).toBe('1NYN'); // an audio tape: magnetic media, not desensitized
    expect(field(lent, 'CK')).toBe('004');
    const counters = await sim.counters();
    expect([counters.received['11'], counters.executed['11']]).toEqual([3, 3]);
  });
});

describe('09 Checkin -> 10', () => {
  it('says where the item goes: hold shelf (CV 01), in transit to a hold (CV 02) or home (CV 04), or the shelf (no alert)', async () => {
    const t = await terminal();
    const toShelf = await ask(t, text.checkin('it-0020'));
    expect(toShelf.fixed.slice(0, 4)).toBe('1YNY');
    expect([
      field(toShelf, 'AA'),
      field(toShelf, 'CV'),
      field(toShelf, 'CY'),
      field(toShelf, 'DA'),
      field(toShelf, 'CT'),
    ]).toEqual(['frank', '01', 'gina', 'Gina Lostcard', 'MAIN']);
    const toHold = await ask(t, text.checkin('sc-0002'));
    expect([field(toHold, 'CV'), field(toHold, 'CT'), field(toHold, 'CY')]).toEqual(['02', 'BRANCH', 'ida']);
    expect((await ask(t, text.itemInformation('sc-0002'))).fixed.slice(0, 2)).toBe('10'); // in transit
    const home = await ask(t, text.checkin('sc-0003'));
    expect([field(home, 'CV'), field(home, 'CT'), field(home, 'AQ')]).toEqual(['04', 'BRANCH', 'BRANCH']);
    const plain = await ask(t, text.checkin('it-0002'));
    expect(plain.fixed.slice(0, 4)).toBe('1YNN');
    expect([field(plain, 'AA'), field(plain, 'CV')]).toEqual(['alice', undefined]);
    // the item is back: no longer among alice's loans, and a second checkin is refused
    const again = await ask(t, text.checkin('it-0002'));
    expect([again.fixed[0], field(again, 'AF')]).toEqual(['0', 'Item was not checked out']);
    const unknown = await ask(t, text.checkin('zz-404'));
    expect([unknown.fixed.slice(0, 4), field(unknown, 'AQ'), field(unknown, 'CV')]).toEqual(['0NUY', '', '99']);
  });

  it('receives an item in transit at its pickup location and puts it on that hold shelf', async () => {
    const t = await terminal();
    await ask(t, text.checkin('sc-0002', 'MAIN'));
    const arrived = await ask(t, text.checkin('sc-0002', 'BRANCH'));
    expect([arrived.fixed[0], field(arrived, 'CV'), field(arrived, 'CT'), field(arrived, 'CY')]).toEqual([
      '1',
      '01',
      'BRANCH',
      'ida',
    ]);
    expect((await ask(t, text.itemInformation('sc-0002'))).fixed.slice(0, 2)).toBe('08');
  });
});

describe('01 Block Patron -> 24, 25 Patron Enable -> 26', () => {
  it('a block denies the privileges that later 23 and 63 show; an enable lifts it', async () => {
    const t = await terminal();
    const blocked = await ask(t, text.blockPatron('alice', 'Tampering with the machine'));
    expect(blocked.code).toBe('24');
    expect(blocked.fixed.slice(0, 14)).toBe(`YYYY${' '.repeat(10)}`);
    expect(field(blocked, 'BL')).toBe('Y');
    expect(blocked.fields.has('CQ')).toBe(false);
    expect((await ask(t, text.patronInformation('alice'))).fixed.slice(0, 4)).toBe('YYYY');
    const refused = await ask(t, text.checkout('alice', 'sc-0001'));
    expect([refused.fixed[0], field(refused, 'AF')]).toEqual(['0', 'Tampering with the machine']);
    const enabled = await ask(t, text.patronEnable('alice'));
    expect([
      enabled.code,
      enabled.fixed.slice(0, 14),
      enabled.fixed.slice(14, 17),
      field(enabled, 'AE'),
      field(enabled, 'BL'),
    ]).toEqual(['26', BLANK_FLAGS, '000', 'Alice Example', 'Y']);
    expect((await ask(t, text.patronInformation('alice'))).fixed.slice(0, 14)).toBe(BLANK_FLAGS);
    const stranger = await ask(t, text.patronEnable('nobody'));
    expect([stranger.fixed.slice(0, 4), field(stranger, 'BL'), field(stranger, 'CQ')]).toEqual(['YYYY', 'N', 'N']);
  });
});

describe('19 Item Status Update -> 20', () => {
  it('stores the item properties that the next 17 shows', async () => {
    const t = await terminal();
    const stored = await ask(t, text.itemStatusUpdate('sc-0001', 'weight 310 g'));
    expect(stored.text).toMatch(/^201\d{8} {4}\d{6}ABsc-0001\|AJDer Schimmelreiter\|CHweight 310 g\|/);
    expect(field(await ask(t, text.itemInformation('sc-0001')), 'CH')).toBe('weight 310 g');
    expect((await ask(t, text.itemStatusUpdate('zz-404', 'x'))).fixed[0]).toBe('0');
  });
});

describe('63 -> 64 patron data', () => {
  it('carries BZ CA CB, AQ home library, PB birth date, PI internet profile, AF and AG when the data has them', async () => {
    const t = await terminal();
    const info = await ask(t, text.patronInformation('hanna'));
    expect(
      Object.fromEntries(
        ['BZ', 'CA', 'CB', 'AQ', 'PB', 'PI', 'BD', 'BE', 'BF', 'AF', 'AG'].map((id) => [id, field(info, id)]),
      ),
    ).toEqual({
      BZ: '0005',
      CA: '0003',
      CB: '0010',
      AQ: 'MAIN',
      PB: '19900412',
      PI: 'Y',
      BD: 'Lindenweg 7, 12345 Demostadt',
      BE: 'hanna@example.org',
      BF: '+49 30 7654321',
      AF: 'Welcome back, Hanna',
      AG: 'Demo Public Library - thank you',
    });
    const ida = await ask(t, text.patronInformation('ida'));
    expect([field(ida, 'AQ'), field(ida, 'PI'), ida.fields.has('PB'), ida.fields.has('BZ')]).toEqual([
      'BRANCH',
      'N',
      false,
      false,
    ]);
  });
});

describe('command ids that are not SC commands', () => {
  it('get 96 in the form of the request, and the connection stays usable; before login they close it', async () => {
    const t = await terminal();
    const signed = await t.exchange(sign(`41${sip2Date()}AO${INSTITUTION}|`, 4), 1000);
    expect(signed.text).toBe('96AZFEF6');
    expect((await t.exchange('42', 1000)).text).toBe('96');
    // a response id sent to the ACS is no command either
    expect((await t.exchange(`24${BLANK_FLAGS}000${sip2Date()}AO${INSTITUTION}|AAalice|AE|`, 1000)).text).toBe('96');
    expect((await ask(t, text.scStatus())).code).toBe('98');
    const counters = await sim.counters();
    expect([counters.received['41'], counters.received['42'], counters.executed['41']]).toEqual([1, 1, undefined]);

    const stranger = await connect();
    stranger.writeRaw('41\r');
    await stranger.closed;
    expect(stranger.pending.length).toBe(0);
  });
});

describe('counters and the control endpoint', () => {
  it('count the new messages, received and executed; GET /state reports the checksum mode', async () => {
    const t = await terminal();
    await ask(t, text.blockPatron('hanna', 'x'));
    await ask(t, text.patronEnable('hanna'));
    await ask(t, text.checkout('hanna', 'sc-0001'));
    await ask(t, text.checkin('sc-0001'));
    await ask(t, text.itemStatusUpdate('sc-0001', 'y'));
    await sim.setFaults({ rejectMessage: '11' });
    const rejected = await ask(t, text.checkout('hanna', 'sc-0004'));
    expect([rejected.fixed[0], field(rejected, 'AF')]).toEqual(['0', 'rejected by fault injection']);
    const state = await sim.state();
    expect(state).toMatchObject({ errorDetection: true, strictChecksums: false });
    for (const code of ['01', '25', '09', '19'])
      expect([code, state.counters.received[code], state.counters.executed[code]]).toEqual([code, 1, 1]);
    expect([state.counters.received['11'], state.counters.executed['11']]).toEqual([2, 1]);
    expect((await strict.state()).strictChecksums).toBe(true);
  });
});

// ------------------------------------------------------------ checksum modes

describe('error detection on (default): checksums as real ACSs treat them', () => {
  it('answers a request without AY/AZ without them, and executes it', async () => {
    const t = await terminal(false);
    const lent = await ask(t, text.checkout('hanna', 'sc-0001'));
    expect(lent.fixed[0]).toBe('1');
    expect(lent.text).not.toMatch(/AZ[0-9A-F]{4}$/);
    expect((await sim.counters()).executed['11']).toBe(1);
  });

  it('checks a request that carries AY/AZ: echoes AY and checksums the answer; a wrong AZ gets 96 and nothing runs', async () => {
    const t = await terminal(true);
    const bad = `${sign(text.checkout('hanna', 'sc-0001'), 5).slice(0, -4)}0000`;
    expect((await t.exchange(bad, 1000)).text).toBe('96AZFEF6');
    expect((await ask(t, text.itemInformation('sc-0001'))).fixed.slice(0, 2)).toBe('03'); // still available
    expect((await sim.counters()).executed['11']).toBeUndefined();
  });

  it('accepts AZ without AY, and both forms on one connection', async () => {
    const raw = await connect();
    expect((await raw.exchange(text.login(), 1000)).text).toBe('941');
    const answer = await raw.exchange(sign(text.scStatus(), null), 1000);
    expect([answer.code, answer.checksummed]).toEqual(['98', true]);
    expect((await raw.exchange(text.scStatus(), 1000)).checksummed).toBe(false);
    const signed = await raw.exchange(sign(text.scStatus(), 7), 1000);
    expect([signed.checksummed, signed.sequence]).toEqual([true, '7']);
  });

  it('still treats a request with the previous AY and AZ as a retransmission: same answer, not executed again', async () => {
    const t = await terminal(true);
    const wire = sign(text.checkout('hanna', 'sc-0001'), 3);
    const first = await t.exchange(wire, 1000);
    expect((await t.exchange(wire, 1000)).text).toBe(first.text);
    expect(first.fixed[0]).toBe('1');
    expect((await sim.counters()).executed['11']).toBe(1);
  });
});

describe('--strict-checksums', () => {
  it('answers 96 to a request without AY/AZ or without AY and executes nothing; a signed request works', async () => {
    const raw = await connect(strict.port);
    expect((await raw.exchange(sign(text.login(), 0), 1000)).text.slice(0, 3)).toBe('941');
    expect((await raw.exchange(text.checkout('hanna', 'sc-0001'), 1000)).text).toBe('96AZFEF6');
    expect((await raw.exchange(sign(text.checkout('hanna', 'sc-0001'), null), 1000)).text).toBe('96AZFEF6');
    expect((await strict.counters()).executed['11']).toBeUndefined();
    const lent = await raw.exchange(sign(text.checkout('hanna', 'sc-0001'), 1), 1000);
    expect([lent.fixed[0], lent.sequence]).toEqual(['1', '1']);
  });
});

describe('--error-detection off', () => {
  it('sends no AY/AZ, even to a request that carries them', async () => {
    const raw = await connect(off.port);
    expect((await raw.exchange(sign(text.login(), 0), 1000)).text).toBe('941');
    const lent = await raw.exchange(sign(text.checkout('hanna', 'sc-0001'), 1), 1000);
    expect([lent.code, lent.fixed[0], lent.checksummed]).toEqual(['12', '1', false]);
    expect((await raw.exchange(text.checkin('sc-0001'), 1000)).checksummed).toBe(false);
  });
});

// ------------------------------------------------------------ the data file

describe('--data FILE', () => {
  it('is validated at start: exit 2 with the record and the field that are wrong', async () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const dir = await mkdtemp(join(tmpdir(), 'sip2-data-'));
    try {
      const data = JSON.parse(await readFile(join(root, 'sip2-simulator/data/demo.json'), 'utf8')) as {
        patrons: Array<Record<string, unknown>>;
      };
      data.patrons[4]!.birthDate = '14.09.2001';
      data.patrons[7]!.holdItemsLimit = -1;
      const file = join(dir, 'my-library.json');
      await writeFile(file, JSON.stringify(data));
      const child = spawn(
        process.execPath,
        [...sourceEntry('sip2-simulator/src/main.ts'), '--port', '0', '--data', file],
        { cwd: root },
      );
      trackChild(child);
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(2);
      expect(stderr).toContain(`data file ${file} is invalid`);
      expect(stderr).toContain('patrons[4] (barcode "emile").birthDate: must be YYYY-MM-DD');
      expect(stderr).toMatch(/patrons\[7\] \(barcode "hanna"\)\.holdItemsLimit: /);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
