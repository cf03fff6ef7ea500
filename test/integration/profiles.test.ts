import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';
import { summaryCounts, TextSip2Client, text } from '../helpers/sip2-text-client.js';

/**
 * Server profiles, end to end: the simulator CLI as a process with
 * --profile, driven by a SIP2 client written from the 3M text (not the
 * project's codec, not the gateway's pool). Fine texts use a small data file
 * whose patron "dora" owes 2.50 (overdue, item 30002), 1.00 (no item) and
 * 12.00 (lost, item 30003).
 */

const FINES_DATA = fileURLToPath(new URL('../fixtures/simulator/fines.json', import.meta.url));
const clients: TextSip2Client[] = [];

async function client(sim: SimulatorProcess, charset: 'latin1' | 'utf8' = 'latin1'): Promise<TextSip2Client> {
  const c = await TextSip2Client.connect(sim.port, { charset });
  clients.push(c);
  return c;
}

afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

describe('workers=N', () => {
  let sim: SimulatorProcess;
  beforeAll(async () => {
    sim = await startSimulatorProcess({ profile: 'workers=1' });
  });
  afterAll(async () => {
    await sim?.stop();
  });
  afterEach(async () => {
    await sim.setProfile('workers=1');
    await sim.disconnectAll();
  });

  it('accepts a second connection but answers its login only after the first session closes', async () => {
    const first = await client(sim);
    await first.start();
    const second = await client(sim); // the TCP connect succeeds: the kernel accepted it
    second.write(text.login());
    expect(await second.silentFor(800)).toBe(true);
    const state = await sim.state();
    expect(state.connections).toBe(1);
    expect(state.waiting).toBe(1);
    expect(state.profile.workers).toBe(1);

    first.close();
    expect((await second.next(3000)).text).toMatch(/^941/);
    expect((await sim.state()).waiting).toBe(0);
  });

  it('skips a waiting client that gave up: the next one is served when the worker frees', async () => {
    const first = await client(sim);
    await first.start();
    const quitter = await client(sim);
    quitter.write(text.login());
    const patient = await client(sim);
    patient.write(text.login());
    await expect.poll(async () => (await sim.state()).waiting, { timeout: 3000 }).toBe(2);
    quitter.close();
    await quitter.closed;

    first.close();
    expect((await patient.next(3000)).text).toMatch(/^941/);
    await expect.poll(async () => (await sim.state()).connections, { timeout: 3000 }).toBe(1);
    expect((await sim.state()).counters.executed['93']).toBeGreaterThanOrEqual(2);
  });

  it('serves waiting connections at once when PUT /profile raises the limit', async () => {
    const first = await client(sim);
    await first.start();
    const second = await client(sim);
    second.write(text.login());
    expect(await second.silentFor(500)).toBe(true);

    const profile = await sim.setProfile('workers=2');
    expect(profile).toMatchObject({ profile: 'workers=2', workers: 2 });
    expect((await second.next(3000)).text).toMatch(/^941/);
    expect(first.isClosed).toBe(false);
  });

  it('lets a lower limit take effect as sessions end, without closing open ones', async () => {
    await sim.setProfile('workers=2');
    const a = await client(sim);
    await a.start();
    const b = await client(sim);
    await b.start();
    await sim.setProfile('workers=1');
    expect((await a.send(text.scStatus())).text).toMatch(/^98/);
    const c = await client(sim);
    c.write(text.login());
    a.close();
    // One session (b) still fills the single worker.
    expect(await c.silentFor(800)).toBe(true);
    b.close();
    expect((await c.next(3000)).text).toMatch(/^941/);
  });
});

describe('idle-timeout=S', () => {
  let sim: SimulatorProcess;
  beforeAll(async () => {
    // --idle-timeout-s 300 loses to the profile's 2 s.
    sim = await startSimulatorProcess({ idleTimeoutS: 300, profile: ['workers=1', 'idle-timeout=2'] });
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('closes a logged-in session that sends nothing for 2 s', async () => {
    expect((await sim.state()).profile.idleTimeoutS).toBe(2);
    const c = await client(sim);
    await c.start();
    const started = Date.now();
    await c.closed;
    const after = Date.now() - started;
    expect(after).toBeGreaterThanOrEqual(1500);
    expect(after).toBeLessThan(6000);
  });

  it('starts the idle clock of a waiting connection only when a worker takes it', async () => {
    const first = await client(sim);
    await first.start();
    const waiting = await client(sim);
    waiting.write(text.login());
    // The first session times out after 2 s of silence; the waiting one, though connected as long, is then served.
    await first.closed;
    expect((await waiting.next(3000)).text).toMatch(/^941/);
    expect((await waiting.send(text.scStatus())).text).toMatch(/^98/);
    expect(waiting.isClosed).toBe(false);
  });
});

describe('fine item profiles (AV, BV, BH)', () => {
  let sim: SimulatorProcess;
  beforeAll(async () => {
    sim = await startSimulatorProcess({ dataFile: FINES_DATA, profile: 'sipserver' });
  });
  afterAll(async () => {
    await sim?.stop();
  });

  async function fines(startItem?: number, endItem?: number) {
    const c = await client(sim);
    await c.start();
    const reply = await c.send(text.patronInformation('dora', 'fine', startItem, endItem));
    c.close();
    return { counts: summaryCounts(reply), fields: reply.fields };
  }

  it('sipserver (preset from the command line): plain texts, no BV, no BH, pages padded with empty AV up to BQ', async () => {
    expect((await sim.state()).profile.profile).toBe(
      'workers=50,idle-timeout=0,fines=sipserver,pad=on,sc-status-first=on,transfers=off,refused-checkin-alert=off,hold-available=waiting',
    );
    const page = await fines(1, 5);
    expect(page.counts.fine).toBe(3);
    expect(page.fields.get('AV')).toEqual(['Overdue fine 30002', 'Processing fee', 'Lost item Faust', '', '']);
    expect(page.fields.has('BV')).toBe(false);
    expect(page.fields.has('BH')).toBe(false);
    // Without BQ the slice ends at the list's end: no padding.
    expect((await fines()).fields.get('AV')).toHaveLength(3);
  });

  it('koha: "<description> <amount>", BV as Perl prints the balance, no BH', async () => {
    await sim.setProfile('fines=koha');
    const page = await fines(1, 5);
    expect(page.fields.get('AV')).toEqual(['Overdue fine 30002 2.50', 'Processing fee 1.00', 'Lost item Faust 12.00']);
    expect(page.fields.get('BV')).toEqual(['15.5']);
    expect(page.fields.has('BH')).toBe(false);
  });

  it('eg-legacy: "<balance> <billing type> <title> / <author>" or the billing note, BV and BH', async () => {
    await sim.setProfile('fines=eg-legacy');
    const page = await fines(1, 5);
    expect(page.fields.get('AV')).toEqual([
      '2.50 Overdue materials Overdue fine 30002 / ',
      '1.00 processing Processing fee',
      '12.00 Lost Materials Lost item Faust / ',
    ]);
    expect(page.fields.get('BV')).toEqual(['15.50']);
    expect(page.fields.get('BH')).toEqual(['EUR']);
  });

  it('eg-3m: \'<id> $<balance> "<FINE|LOST|FEE>" <title>\'', async () => {
    await sim.setProfile('fines=eg-3m');
    const page = await fines();
    expect(page.fields.get('AV')).toEqual([
      'f-101 $2.50 "FINE" Overdue fine 30002',
      'f-102 $1.00 "FEE" Processing fee',
      'f-103 $12.00 "LOST" Lost item Faust',
    ]);
  });

  it('eg-swyer-b: "Charge-Number: <id>, Amount-Due: <balance>, Fine-Type: <type>, Title: <title>"', async () => {
    await sim.setProfile('fines=eg-swyer-b');
    const page = await fines();
    expect(page.fields.get('AV')![0]).toBe(
      'Charge-Number: f-101, Amount-Due: 2.50, Fine-Type: FINE, Title: Overdue fine 30002',
    );
    expect(page.fields.get('AV')![2]).toBe(
      'Charge-Number: f-103, Amount-Due: 12.00, Fine-Type: LOST, Title: Lost item Faust',
    );
  });

  it('folio: item barcodes of the open accounts only (the fine without an item is counted, not listed), BV as a Java float', async () => {
    await sim.setProfile('folio');
    const page = await fines();
    expect(page.counts.fine).toBe(3);
    expect(page.fields.get('AV')).toEqual(['30002', '30003']);
    expect(page.fields.get('BV')).toEqual(['15.5']);
    expect(page.fields.get('BH')).toEqual(['EUR']);
  });

  it('bv=off and bh=off drop the fields whatever the format, and pad=on pads any format', async () => {
    await sim.setProfile('fines=eg-3m,bv=off,bh=off,pad=on');
    const page = await fines(2, 6);
    expect(page.fields.get('AV')).toEqual([
      'f-102 $1.00 "FEE" Processing fee',
      'f-103 $12.00 "LOST" Lost item Faust',
      '',
      '',
      '',
    ]);
    expect(page.fields.has('BV')).toBe(false);
    expect(page.fields.has('BH')).toBe(false);
  });
});

// One simulator on the demo data for the knobs that need its locations and loans.
describe('sc-status-first, transfers, refused-checkin-alert, hold-available', () => {
  let sim: SimulatorProcess;
  beforeAll(async () => {
    sim = await startSimulatorProcess({ profile: 'sc-status-first=on' });
  });
  afterAll(async () => {
    await sim?.stop();
  });
  afterEach(async () => {
    await sim.setProfile('sc-status-first=on');
    await sim.reset();
  });

  it('transfers=off: an item returned away from home stays (101YNN, no CV), is available and lends again', async () => {
    await sim.setProfile('transfers=off');
    const c = await client(sim);
    await c.start();
    // sc-0003 belongs to BRANCH; with transfers it would go home in transit (CV 04).
    const back = await c.send(text.checkin('sc-0003', 'MAIN'));
    expect(back.fixed.slice(0, 4)).toBe('1YNN');
    expect(back.fields.has('CV')).toBe(false);
    expect((await c.send(text.itemInformation('sc-0003'))).fixed.slice(0, 2)).toBe('03');
    expect((await c.send(text.checkout('alice', 'sc-0003'))).fixed.slice(0, 1)).toBe('1');
    // A pending hold takes the item here, whatever its pickup location: sc-0002 waits for ida (pickup BRANCH).
    const held = await c.send(text.checkin('sc-0002', 'MAIN'));
    expect([held.fixed.slice(0, 4), held.fields.get('CV')?.[0]]).toEqual(['1YNY', '01']);
  });

  it('refused-checkin-alert=off: an item not on loan answers 100YNN and an unknown one 10 without alert or CV; on: alert Y', async () => {
    const c = await client(sim);
    await c.start();
    const alerted = await c.send(text.checkin('it-0030'));
    expect(alerted.fixed.slice(0, 4)).toBe('0YNY');
    await sim.setProfile('refused-checkin-alert=off');
    expect((await c.send(text.checkin('it-0030'))).fixed.slice(0, 4)).toBe('0YNN');
    const unknown = await c.send(text.checkin('no-such-item'));
    expect(unknown.fixed.slice(0, 4)).toBe('0NUN');
    expect(unknown.fields.has('CV')).toBe(false);
  });

  it('hold-available=waiting: a hold placed on an item on the shelf answers available N; copy (default): Y', async () => {
    const c = await client(sim);
    await c.start();
    expect((await c.send(text.hold('alice', 'it-0030', 'MAIN'))).fixed.slice(0, 2)).toBe('1Y');
    await sim.setProfile('hold-available=waiting');
    const placed = await c.send(text.hold('hanna', 'it-0031', 'MAIN'));
    expect(placed.fixed.slice(0, 2)).toBe('1N');
    expect([placed.fields.get('AB')?.[0], placed.fields.get('AJ')?.[0]]).toEqual(['it-0031', 'Die Verwandlung']);
  });

  it('closes a session whose first message after login is not 99, and serves one that starts with 99', async () => {
    const rude = await client(sim);
    expect((await rude.send(text.login())).text).toMatch(/^941/);
    rude.write(text.patronInformation('alice', null));
    await rude.closed;
    expect((await sim.state()).counters.executed['63'] ?? 0).toBe(0);

    const polite = await client(sim);
    await polite.start();
    expect((await polite.send(text.patronInformation('alice', null))).text).toMatch(/^64/);
  });
});

describe('the listCount fault', () => {
  let sim: SimulatorProcess;
  beforeAll(async () => {
    sim = await startSimulatorProcess({ dialect: 'folio' });
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('announces N in every count, pages synthesised entries capped by the list limit, and 17 knows none of them', async () => {
    const faults = await sim.setFaults({ listCount: 500 });
    expect(faults.listCount).toBe(500);
    const c = await client(sim);
    // folio is CRLF and UTF-8; the requests here are ASCII.
    await c.start();
    const first = await c.send(text.patronInformation('alice', 'charged', 1, 9999));
    expect(summaryCounts(first)).toEqual({
      hold: 500,
      overdue: 500,
      charged: 500,
      fine: 500,
      recall: 500,
      unavailable: 500,
    });
    const page = first.fields.get('AU')!;
    expect(page).toHaveLength(20); // folio's listLimit
    const late = (await c.send(text.patronInformation('alice', 'charged', 481, 520))).fields.get('AU')!;
    expect(late).toHaveLength(20);
    expect(late[0]).toBe('x-charged-0481');
    expect(late.at(-1)).toBe('x-charged-0500');
    expect(new Set([...page, ...late]).size).toBe(40);

    const item = await c.send(text.itemInformation('x-charged-0481'));
    expect(item.text.slice(0, 4)).toBe('1801'); // circulation status 01: other (unknown item)
    expect(item.fields.get('AF')).toEqual(['Item not found']);

    await sim.setFaults({ listCount: 0 });
    const real = await c.send(text.patronInformation('alice', 'charged', 1, 9999));
    expect(summaryCounts(real).charged).toBeLessThan(500);
    expect(real.fields.get('AU')!.every((barcode) => !barcode.startsWith('x-'))).toBe(true);
  });
});

describe("ids=folded (patron identifiers compared as Koha's database compares them)", () => {
  let sim: SimulatorProcess;
  beforeAll(async () => {
    // The koha dialect speaks UTF-8, as Koha's SIP server does; the client sends Ä as C3 84.
    sim = await startSimulatorProcess({ dialect: 'koha', profile: 'ids=folded' });
  });
  afterAll(async () => {
    await sim?.stop();
  });
  afterEach(async () => {
    await sim.setProfile('ids=folded');
    await sim.disconnectAll();
  });

  /** A 63 with AD: the text client's layout plus the patron password. */
  const patronInformation = (patron: string, pin: string) => `${text.patronInformation(patron, null)}AD${pin}|`;

  it("answers a 63 for ÄLICE with alice's password with BL Y, CQ Y and AA alice, her stored barcode", async () => {
    expect((await sim.state()).charset).toBe('utf-8');
    const c = await client(sim, 'utf8');
    await c.start();
    const reply = await c.send(patronInformation('ÄLICE', 'alice-pass'));
    expect(reply.code).toBe('64');
    expect(reply.fields.get('BL')).toEqual(['Y']);
    expect(reply.fields.get('CQ')).toEqual(['Y']);
    expect(reply.fields.get('AA')).toEqual(['alice']);
    expect(reply.fields.get('AE')).toEqual(['Alice Example']);
    expect(summaryCounts(reply).charged).toBe(3);

    const status = await c.send(text.patronStatus('Älice  ', 'alice-pass'));
    expect(status.code).toBe('24');
    expect(status.fields.get('BL')).toEqual(['Y']);
    expect(status.fields.get('CQ')).toEqual(['Y']);
    expect(status.fields.get('AA')).toEqual(['alice']);
  });

  it('checks the password exactly: ÄLICE with a wrong or case-changed password is BL Y, CQ N', async () => {
    const c = await client(sim, 'utf8');
    await c.start();
    for (const pin of ['wrong', 'ALICE-PASS']) {
      const reply = await c.send(patronInformation('ÄLICE', pin));
      expect(reply.fields.get('BL'), pin).toEqual(['Y']);
      expect(reply.fields.get('CQ'), pin).toEqual(['N']);
    }
  });

  it('ids=exact: ÄLICE is an unknown patron (BL N, CQ N, the AA sent echoed)', async () => {
    expect((await sim.setProfile('ids=exact')).ids).toBe('exact');
    const c = await client(sim, 'utf8');
    await c.start();
    const reply = await c.send(patronInformation('ÄLICE', 'alice-pass'));
    expect(reply.fields.get('BL')).toEqual(['N']);
    expect(reply.fields.get('CQ')).toEqual(['N']);
    expect(reply.fields.get('AA')).toEqual(['ÄLICE']);
    expect(reply.fixed.slice(0, 4)).toBe('YYYY');
  });

  it('the koha preset folds identifiers', async () => {
    const profile = await sim.setProfile('koha');
    expect(profile.profile).toBe('workers=1,idle-timeout=600,fines=koha,ids=folded,hold-available=waiting');
    const c = await client(sim, 'utf8');
    await c.start();
    const reply = await c.send(patronInformation('ALICE', 'alice-pass'));
    expect(reply.fields.get('BL')).toEqual(['Y']);
    expect(reply.fields.get('AA')).toEqual(['alice']);
  });
});

describe('bad profiles', () => {
  it('PUT /profile answers 400 naming what exists, and keeps the profile', async () => {
    const sim = await startSimulatorProcess({ profile: 'workers=3' });
    try {
      await expect(sim.setProfile('workers=0')).rejects.toThrow(/400 workers must be a whole number 1-1000/);
      await expect(sim.setProfile('kohha')).rejects.toThrow(
        /400 unknown profile "kohha" \(presets: koha, sipserver, evergreen, folio; knobs: workers=N/,
      );
      expect((await sim.state()).profile.workers).toBe(3);
      expect((await sim.setProfile('')).profile).toBe('');
    } finally {
      await sim.stop();
    }
  });
});
