import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { checksum } from '../../src/sip2/checksum.js';
import { decodeFrame, encodeMessage } from '../../src/sip2/codec.js';
import { sip2DateFrom } from '../../src/sip2/date.js';
import type {
  ItemInformationResponse,
  PatronInformationResponse,
  RenewResponse,
  Sip2Message,
} from '../../src/sip2/spec.js';
import { sourceEntry } from '../helpers/entry-points.js';
import { RawSip2Client, type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

/**
 * The simulator as a separate process, spoken to over real sockets with the
 * project's codec. One process per configuration, started in parallel; each
 * test resets data, counters and faults through the control endpoint.
 */

const tx = () => sip2DateFrom(new Date());
const CP850 = { charset: 'cp850' as const, errorDetection: true };

const msg = {
  scStatus: (): Sip2Message => ({ code: '99', statusCode: 0, maxPrintWidth: 80, protocolVersion: '2.00' }),
  itemInfo: (barcode: string): Sip2Message => ({
    code: '17',
    transactionDate: tx(),
    institutionId: 'DEMO',
    itemIdentifier: barcode,
  }),
  renew: (patron: string, barcode: string): Sip2Message => ({
    code: '29',
    thirdPartyAllowed: false,
    noBlock: false,
    transactionDate: tx(),
    nbDueDate: null,
    institutionId: 'DEMO',
    patronIdentifier: patron,
    itemIdentifier: barcode,
  }),
  patronInfo: (
    patron: string,
    summary: 'charged' | 'hold' | null,
    startItem?: string,
    endItem?: string,
    patronPassword?: string,
  ): Sip2Message => ({
    code: '63',
    language: '001',
    transactionDate: tx(),
    summary,
    institutionId: 'DEMO',
    patronIdentifier: patron,
    ...(startItem ? { startItem } : {}),
    ...(endItem ? { endItem } : {}),
    ...(patronPassword ? { patronPassword } : {}),
  }),
  hold: (mode: string, patron: string, barcode: string): Sip2Message => ({
    code: '15',
    holdMode: mode,
    transactionDate: tx(),
    institutionId: 'DEMO',
    patronIdentifier: patron,
    itemIdentifier: barcode,
    holdType: '3',
  }),
};

let sim: SimulatorProcess;
/** --strict-checksums: the error detection of the 3M text read strictly (every request must carry AY/AZ). */
let strict: SimulatorProcess;
let folio: SimulatorProcess;
let idle: SimulatorProcess;
let plain: SimulatorProcess;
const clients: RawSip2Client[] = [];

async function client(
  port = sim.port,
  wire: { charset?: 'cp850' | 'utf-8'; errorDetection?: boolean } = CP850,
): Promise<RawSip2Client> {
  const c = await RawSip2Client.connect(port, wire);
  clients.push(c);
  return c;
}
async function loggedIn(
  port = sim.port,
  wire: { charset?: 'cp850' | 'utf-8'; errorDetection?: boolean } = CP850,
): Promise<RawSip2Client> {
  const c = await client(port, wire);
  expect(await c.login()).toBe(true);
  return c;
}
async function dueDateOf(c: RawSip2Client, barcode: string): Promise<string | undefined> {
  const r = await c.request<ItemInformationResponse>(msg.itemInfo(barcode));
  return r.dueDate as string | undefined;
}
/** Connect and report the error code, or 'connected'. */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

beforeAll(async () => {
  [sim, strict, folio, idle, plain] = await Promise.all([
    startSimulatorProcess(),
    startSimulatorProcess({ extraArgs: ['--strict-checksums'] }),
    startSimulatorProcess({ dialect: 'folio' }),
    startSimulatorProcess({ idleTimeoutS: 0.5 }),
    startSimulatorProcess({ errorDetection: false, dialect: 'koha' }),
  ]);
});

afterAll(async () => {
  for (const c of clients) c.close();
  await Promise.all([sim, strict, folio, idle, plain].map((p) => p?.stop()));
});

beforeEach(async () => {
  while (clients.length > 0) clients.pop()!.close();
  await Promise.all([sim.reset(), strict.reset()]);
});

describe('start-up', () => {
  it('prints the banner with the real ephemeral port and reports its configuration', async () => {
    expect(sim.host).toBe('127.0.0.1');
    expect(sim.port).toBeGreaterThan(0);
    expect(sim.port).not.toBe(6001);
    expect(sim.controlPort).toBeGreaterThan(0);
    expect(await tryConnect(sim.port)).toBe('connected');
    const state = await sim.state();
    expect(state).toMatchObject({ dialect: 'generic', charset: 'cp850', errorDetection: true });
    expect((await folio.state()).charset).toBe('utf-8');
  });

  it('exits 2 with the usage on a bad flag', async () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const child = spawn(process.execPath, [...sourceEntry('sip2-simulator/src/main.ts'), '--port', 'abc'], {
      cwd: root,
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('--port must be a whole number');
    expect(stderr).toContain('usage:');
  });

  it('runs as `paia-sip2 simulator`, the gateway command line, with the same flags, help and exit codes', async () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const run = (args: string[]) => {
      const child = spawn(process.execPath, [...sourceEntry('src/cli/main.ts'), 'simulator', ...args], { cwd: root });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
        child.once('exit', (code) => resolve({ code, stdout, stderr })),
      );
    };
    const [help, bad] = await Promise.all([run(['--help']), run(['--port', 'abc'])]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: paia-sip2 simulator \[options\]/);
    expect(help.stdout).toContain('--control-port N');
    expect(help.stdout).toContain('63 Patron Information -> 64 Patron Information Response');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--port must be a whole number');

    const own = await startSimulatorProcess({ asGatewayCommand: true, profile: 'koha' });
    try {
      const c = await loggedIn(own.port);
      expect((await c.request(msg.scStatus())).code).toBe('98');
      expect((await own.state()).profile).toMatchObject({ workers: 1, fines: 'koha' });
      expect(await own.kill('SIGTERM')).toEqual({ code: 0, signal: null });
    } finally {
      await own.stop();
    }
  });

  it('stops on SIGTERM with exit code 0 and restarts on the same port', async () => {
    const own = await startSimulatorProcess();
    try {
      const port = own.port;
      expect(await own.kill('SIGTERM')).toEqual({ code: 0, signal: null });
      expect(await tryConnect(port)).toBe('ECONNREFUSED');
      await own.restart();
      expect(own.port).toBe(port);
      const c = await loggedIn(port);
      expect((await c.request(msg.scStatus())).code).toBe('98');
    } finally {
      await own.stop();
    }
  });
});

describe('login', () => {
  it('closes a connection whose first message is not a login, executing nothing', async () => {
    const c = await client();
    c.send(msg.renew('alice', 'it-0002'));
    await c.closed;
    expect(c.pending.length).toBe(0);
    const counters = await sim.counters();
    expect(counters.received['29']).toBe(1);
    expect(counters.executed['29']).toBeUndefined();
  });

  it('answers 940 to bad credentials and closes after the third', async () => {
    const c = await client();
    expect(await c.login('paia', 'wrong')).toBe(false);
    expect(await c.login('nobody', 'paia-secret')).toBe(false);
    expect(c.isClosed).toBe(false);
    expect(await c.login('paia', 'wrong again')).toBe(false);
    await c.closed;
    // two failures then a good login is fine
    const d = await client();
    expect(await d.login('paia', 'x')).toBe(false);
    expect(await d.login('paia', 'y')).toBe(false);
    expect(await d.login()).toBe(true);
    expect((await d.request(msg.scStatus())).code).toBe('98');
  });

  it('answers 99 with the ACS status', async () => {
    const c = await loggedIn();
    const r = await c.request(msg.scStatus());
    expect(r).toMatchObject({
      code: '98',
      onlineStatus: true,
      checkinOk: true,
      checkoutOk: true,
      acsRenewalPolicy: true,
      statusUpdateOk: true,
      offlineOk: false,
      timeoutPeriod: 30,
      retriesAllowed: 3,
      protocolVersion: '2.00',
      institutionId: 'DEMO',
      libraryName: 'Demo Public Library',
      supportedMessages: 'YYYYYYYYYYYYYYYY',
    });
  });
});

describe('error detection with --strict-checksums (the default answers requests without AY/AZ: simulator-messages.test.ts)', () => {
  it('answers 96 to a bad or missing checksum and executes nothing', async () => {
    const c = await loggedIn(strict.port);
    const before = await dueDateOf(c, 'it-0002');
    const good = encodeMessage(msg.renew('alice', 'it-0002'), { ...CP850, sequence: 5 });
    const bad = Buffer.from(good);
    bad.write('0000', bad.length - 5, 'latin1'); // wrong AZ value
    c.writeRaw(bad);
    const r1 = await c.next();
    expect(r1.raw.toString('latin1')).toBe('96AZFEF6\r');
    const noTrailer = encodeMessage(msg.renew('alice', 'it-0002'), { ...CP850, errorDetection: false });
    c.writeRaw(noTrailer);
    expect((await c.next()).raw.toString('latin1')).toBe('96AZFEF6\r');
    // a trailer without AY is refused too
    const text = `${noTrailer.toString('latin1').slice(0, -1)}AZ`;
    c.writeRaw(`${text + checksum(Buffer.from(text, 'latin1'))}\r`);
    expect((await c.next()).raw.toString('latin1')).toBe('96AZFEF6\r');
    expect(await dueDateOf(c, 'it-0002')).toBe(before);
    expect((await strict.counters()).executed['29']).toBeUndefined();
  });

  it('echoes the request AY in the response and checksums it', async () => {
    const c = await loggedIn(strict.port);
    const r = await c.request(msg.scStatus(), { sequence: 7 });
    expect(r.sequence).toBe(7);
    expect(r.raw.toString('latin1')).toMatch(/AY7AZ[0-9A-F]{4}\r$/);
  });

  it('97 re-sends the last response byte for byte, and 96 when nothing was sent yet', async () => {
    const fresh = await client(strict.port);
    fresh.writeRaw('97AZFEF5\r');
    expect((await fresh.next()).raw.toString('latin1')).toBe('96AZFEF6\r');

    const c = await loggedIn(strict.port);
    const original = await c.request(msg.patronInfo('alice', 'charged'));
    c.writeRaw('97AZFEF5\r');
    const replay = await c.next();
    expect(replay.raw.equals(original.raw)).toBe(true);
    c.writeRaw('97AZFEF5\r');
    expect((await c.next()).raw.equals(original.raw)).toBe(true);
    const counters = await strict.counters();
    expect(counters.received['97']).toBe(3);
    expect(counters.executed['97']).toBeUndefined();
    expect(counters.executed['63']).toBe(1);
  });

  it('treats a message with the previous AY and AZ as a retransmission: same answer, not executed again', async () => {
    const c = await loggedIn(strict.port);
    const before = await dueDateOf(c, 'it-0002');
    const bytes = c.send(msg.renew('alice', 'it-0002'), { sequence: 3 });
    const first = await c.next();
    c.writeRaw(bytes);
    const second = await c.next();
    expect(second.raw.equals(first.raw)).toBe(true);
    expect((await strict.counters()).executed['29']).toBe(1);
    const after = await dueDateOf(c, 'it-0002');
    expect(after).not.toBe(before);
    // the same request with a new sequence number is a new request
    const third = await c.request<RenewResponse>(msg.renew('alice', 'it-0002'), { sequence: 5 });
    expect(third.ok).toBe(true);
    expect((await strict.counters()).executed['29']).toBe(2);
    expect(await dueDateOf(c, 'it-0002')).not.toBe(after);
  });

  it('accepts CRLF and stray LFs on input and answers with CR only (generic)', async () => {
    const c = await client(strict.port);
    const login = encodeMessage(
      { code: '93', uidAlgorithm: '0', pwdAlgorithm: '0', loginUserId: 'paia', loginPassword: 'paia-secret' },
      { ...CP850, sequence: 0, terminator: '\r\n' },
    );
    c.writeRaw(Buffer.concat([Buffer.from('\n\n'), login]));
    const r = await c.next();
    expect(r.kind === 'message' && r.message.code === '94' && r.message.ok).toBe(true);
    expect(r.raw.at(-1)).toBe(0x0d);
    c.writeRaw(encodeMessage(msg.scStatus(), { ...CP850, sequence: 1, terminator: '\r\n' }));
    const s = await c.next();
    expect(s.kind === 'message' && s.message.code).toBe('98');
    expect(s.raw.toString('latin1').endsWith('\r')).toBe(true);
    expect(c.pending.length).toBe(0); // no LF after the CR
  });

  it('answers 96 to a command id that is not an SC command, without closing the connection', async () => {
    const c = await loggedIn(strict.port);
    const text = '41' + '20260101    000000' + 'AODEMO|AAalice|AY4AZ';
    c.writeRaw(`${text + checksum(Buffer.from(text, 'latin1'))}\r`);
    expect((await c.next()).raw.toString('latin1')).toBe('96AZFEF6\r');
    expect((await c.request(msg.scStatus())).code).toBe('98');
    expect((await strict.counters()).received['41']).toBe(1);
  });

  it('with error detection off: no AY/AZ on responses, plain requests accepted', async () => {
    const c = await client(plain.port, { charset: 'utf-8', errorDetection: false });
    expect(await c.login()).toBe(true);
    const r = await c.request<PatronInformationResponse>(msg.patronInfo('emile', 'charged'));
    expect(r.raw.toString('utf8')).not.toMatch(/AY\dAZ/);
    expect(r.personalName).toBe('Émile Zoë Ångström');
    expect(r.chargedItemsCount).toBe(3);
  });
});

describe('dialects and time-outs', () => {
  it('folio answers CRLF in UTF-8', async () => {
    const c = await loggedIn(folio.port, { charset: 'utf-8', errorDetection: true });
    const r = await c.request<PatronInformationResponse>(msg.patronInfo('emile', 'charged'));
    expect(r.raw.subarray(-2).toString('latin1')).toBe('\r\n');
    expect(r.personalName).toBe('Émile Zoë Ångström');
    const item = await c.request<ItemInformationResponse>(msg.itemInfo('em-0003'));
    expect(item.titleIdentifier).toBe('ノルウェイの森');
    expect(item.dueDate).toMatch(/^\d{8} {3}Z\d{6}$/);
  });

  it('closes a connection idle for --idle-timeout-s', async () => {
    const c = await loggedIn(idle.port);
    const start = Date.now();
    await c.closed;
    expect(Date.now() - start).toBeGreaterThanOrEqual(300);
    // activity keeps a connection open past the timeout
    const d = await loggedIn(idle.port);
    for (let i = 0; i < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await d.request(msg.scStatus())).code).toBe('98');
    }
  });
});

describe('circulation', () => {
  it("pages through dave's 120 loans, never more than listLimit (50) per response", async () => {
    const c = await loggedIn();
    const seen: string[] = [];
    for (const [start, end] of [
      ['1', '50'],
      ['51', '100'],
      ['101', '150'],
    ] as const) {
      const r = await c.request<PatronInformationResponse>(msg.patronInfo('dave', 'charged', start, end));
      expect(r.chargedItemsCount).toBe(120);
      expect(r.overdueItemsCount).toBe(5);
      seen.push(...(r.chargedItems ?? []));
    }
    expect(seen).toEqual(Array.from({ length: 120 }, (_, i) => `dv-${String(i + 1).padStart(4, '0')}`));
    const greedy = await c.request<PatronInformationResponse>(msg.patronInfo('dave', 'charged', '1', '120'));
    expect(greedy.chargedItems).toHaveLength(50);
  });

  it('a renew changes the due date that the next 17 and 63 show', async () => {
    const c = await loggedIn();
    const before = await dueDateOf(c, 'it-0002');
    const renew = await c.request<RenewResponse>(msg.renew('alice', 'it-0002'));
    expect(renew).toMatchObject({ ok: true, renewalOk: true });
    expect(renew.dueDate).not.toBe(before);
    expect(await dueDateOf(c, 'it-0002')).toBe(renew.dueDate);
    const refused = await c.request<RenewResponse>(msg.renew('frank', 'it-0020'));
    expect(refused).toMatchObject({ ok: false, renewalOk: false, screenMessage: ['Item has holds queued'] });
  });

  it('places and cancels a hold', async () => {
    const c = await loggedIn();
    expect(await c.request(msg.hold('+', 'alice', 'it-0030'))).toMatchObject({
      code: '16',
      ok: true,
      queuePosition: '1',
      pickupLocation: 'MAIN',
    });
    const holds = await c.request<PatronInformationResponse>(msg.patronInfo('alice', 'hold'));
    expect(holds.holdItems).toEqual(['it-0010', 'it-0020', 'it-0030']);
    expect(await c.request(msg.hold('-', 'alice', 'it-0030'))).toMatchObject({ ok: true });
    expect(await c.request(msg.hold('-', 'alice', 'it-0030'))).toMatchObject({ ok: false });
  });
});

describe('fault injection', () => {
  it('latency delays every response', async () => {
    const c = await loggedIn();
    await sim.setFaults({ latencyMs: 300 });
    const start = Date.now();
    expect((await c.request(msg.scStatus())).code).toBe('98');
    expect(Date.now() - start).toBeGreaterThanOrEqual(280);
    expect((await sim.setFaults({ jitterMs: 50 })).jitterMs).toBe(50);
  });

  it('dropMidReply sends half a response, closes, and the operation did happen', async () => {
    const c = await loggedIn();
    const before = await dueDateOf(c, 'it-0002');
    await sim.setFaults({ dropMidReply: 1 });
    c.send(msg.renew('alice', 'it-0002'));
    await c.closed;
    expect(c.pending.length).toBeGreaterThan(0);
    expect(c.pending.includes(0x0d)).toBe(false);
    expect(c.pending.toString('latin1').startsWith('30')).toBe(true);
    expect((await sim.counters()).executed['29']).toBe(1);
    expect((await sim.state()).faults.dropMidReply).toBe(false);
    const d = await loggedIn();
    expect(await dueDateOf(d, 'it-0002')).not.toBe(before);
  });

  it('hang withholds the response but keeps the socket open', async () => {
    const c = await loggedIn();
    await sim.setFaults({ hang: 1 });
    c.send(msg.renew('alice', 'it-0002'));
    expect(await c.somethingWithin(500)).toBe(false);
    expect(c.isClosed).toBe(false);
    expect((await sim.counters()).executed['29']).toBe(1);
    expect((await c.request(msg.scStatus())).code).toBe('98');
  });

  it('corruptChecksums breaks AZ, a 97 replay too while it lasts, then the replay is intact', async () => {
    const c = await loggedIn();
    await sim.setFaults({ corruptChecksums: 2 });
    c.send(msg.patronInfo('alice', null));
    const first = await c.nextFrame();
    expect(() => decodeFrame(first.frame, CP850)).toThrow(expect.objectContaining({ reason: 'bad-checksum' }));
    c.writeRaw('97AZFEF5\r');
    const second = await c.nextFrame();
    expect(second.raw.equals(first.raw)).toBe(true);
    c.writeRaw('97AZFEF5\r');
    const third = await c.next();
    expect(third.kind === 'message' && third.message.code).toBe('64');
    expect(third.raw.length).toBe(first.raw.length);
    expect(third.raw.subarray(0, -5).equals(first.raw.subarray(0, -5))).toBe(true);
    expect((await sim.counters()).executed['63']).toBe(1);
  });

  it('garbage answers non-SIP2 bytes ended by CR until cleared', async () => {
    const c = await loggedIn();
    await sim.setFaults({ garbage: true });
    for (let i = 0; i < 2; i++) {
      c.send(msg.scStatus());
      const junk = await c.nextFrame();
      expect(junk.raw.at(-1)).toBe(0x0d);
      expect(() => decodeFrame(junk.frame, CP850)).toThrow();
    }
    const cleared = await sim.clearFaults();
    expect(cleared.garbage).toBe(false);
    expect((await c.request(msg.scStatus())).code).toBe('98');
    expect((await sim.counters()).executed['99']).toBe(3);
  });

  it('rejectMessage refuses that message type without executing it', async () => {
    const c = await loggedIn();
    const before = await dueDateOf(c, 'it-0002');
    await sim.setFaults({ rejectMessage: '29' });
    const r = await c.request<RenewResponse>(msg.renew('alice', 'it-0002'));
    expect(r).toMatchObject({ ok: false, renewalOk: false, screenMessage: ['rejected by fault injection'] });
    expect(await dueDateOf(c, 'it-0002')).toBe(before);
    const counters = await sim.counters();
    expect(counters.received['29']).toBe(1);
    expect(counters.executed['29']).toBeUndefined();
    await sim.setFaults({ rejectMessage: '63' });
    expect(await c.request(msg.patronInfo('alice', null))).toMatchObject({
      code: '64',
      validPatron: false,
      personalName: '',
    });
  });

  it('refuseConnections really stops listening, keeps open connections, and recovers on the same port', async () => {
    const c = await loggedIn();
    await sim.setFaults({ refuseConnections: true });
    expect(await tryConnect(sim.port)).toBe('ECONNREFUSED');
    expect((await c.request(msg.scStatus())).code).toBe('98');
    await sim.setFaults({ refuseConnections: false });
    const d = await loggedIn();
    expect((await d.request(msg.scStatus())).code).toBe('98');
  });

  it('POST /disconnect drops every client connection', async () => {
    const a = await loggedIn();
    const b = await loggedIn();
    expect(await sim.disconnectAll()).toBe(2);
    await Promise.all([a.closed, b.closed]);
    expect((await sim.state()).connections).toBe(0);
  });

  it('PUT /faults validates its input; DELETE /faults and POST /reset clear', async () => {
    const put = (body: string) =>
      fetch(`http://127.0.0.1:${sim.controlPort}/faults`, {
        method: 'PUT',
        body,
        headers: { 'content-type': 'application/json' },
      });
    for (const [body, reason] of [
      ['{"hang":"yes"}', /hang/],
      ['{"latencyMs":-5}', /latencyMs/],
      ['{"nope":true}', /unknown fault "nope"/],
      ['{"rejectMessage":"42"}', /rejectMessage/],
      ['not json', /JSON/],
      ['[1]', /JSON object/],
    ] as const) {
      const response = await put(body);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toMatch(reason);
    }
    const merged = await sim.setFaults({ latencyMs: 10 });
    expect((await sim.setFaults({ hang: 2 })).latencyMs).toBe(10);
    expect(merged.hang).toBe(false);
    expect(await sim.clearFaults()).toMatchObject({ latencyMs: 0, hang: false });
    await sim.setFaults({ garbage: true });
    await sim.reset();
    const state = await sim.state();
    expect(state.faults.garbage).toBe(false);
    expect(state.counters).toEqual({ received: {}, executed: {} });
    expect((await fetch(`http://127.0.0.1:${sim.controlPort}/nowhere`)).status).toBe(404);
  });

  it('POST /reset reloads the data', async () => {
    const c = await loggedIn();
    const before = await dueDateOf(c, 'it-0002');
    expect((await c.request<RenewResponse>(msg.renew('alice', 'it-0002'))).ok).toBe(true);
    await sim.reset();
    expect(await dueDateOf(c, 'it-0002')).toBe(before);
    expect((await sim.counters()).executed['17']).toBe(1);
  });
});

describe('in-process startSimulator (as the gateway embeds it)', () => {
  it('serves SIP2, exposes library and faults, masks passwords in the trace, and stops cleanly', async () => {
    const { startSimulator } = await import('../../sip2-simulator/src/server.js');
    const { default: pino } = await import('pino');
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
    const inproc = await startSimulator({ port: 0, dialect: 'koha', logger });
    try {
      expect(inproc.controlPort).toBeUndefined();
      const c = await RawSip2Client.connect(inproc.port, { charset: 'utf-8' });
      clients.push(c);
      expect(await c.login()).toBe(true);
      const r = await c.request<PatronInformationResponse>(
        msg.patronInfo('alice', 'hold', undefined, undefined, 'alice-pass'),
      );
      expect(r.holdItems).toEqual(['it-0010']); // koha: ready holds only
      expect(inproc.library.summary('alice')!.holds).toHaveLength(2);
      await inproc.setFaults({ rejectMessage: '17' });
      expect(inproc.faults.rejects('17')).toBe(true);
      const trace = lines.join('');
      expect(trace).toContain('CO***');
      expect(trace).toContain('AD***');
      expect(trace).not.toContain('paia-secret');
      expect(trace).not.toContain('alice-pass');
    } finally {
      await inproc.stop();
    }
    expect(await tryConnect(inproc.port)).toBe('ECONNREFUSED');
  });

  it('refuses to bind the control endpoint to anything but 127.0.0.1', async () => {
    const { startSimulator } = await import('../../sip2-simulator/src/server.js');
    await expect(
      startSimulator({ port: 0, controlPort: 0, controlHost: '0.0.0.0', logLevel: 'silent' }),
    ).rejects.toThrow(/127\.0\.0\.1 only/);
  });
});
