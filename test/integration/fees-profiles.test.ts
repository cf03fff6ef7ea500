import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_DIALECTS } from '../../src/sip2/dialect.js';
import { type GatewayDialect, type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

/**
 * PAIA fees for each fine format a simulator profile models: a simulator
 * process with the profile, the real gateway process in front of it, a
 * patron login, GET /core/{patron}/fees. The patron "dora" (fixture data,
 * library currency EUR) owes 2.50 (overdue, item 30002, "Overdue fine
 * 30002"), 1.00 (no item, "Processing fee") and 12.00 (lost, item 30003,
 * "Lost item Faust"): 15.50 in all. The gateways' configured currency is CHF,
 * so a fee in CHF shows that the ILS sent no BH.
 */

const FINES_DATA = fileURLToPath(new URL('../fixtures/simulator/fines.json', import.meta.url));
const DIALECTS: readonly GatewayDialect[] = BUILTIN_DIALECTS;

interface Pair {
  sim: SimulatorProcess;
  gateway: GatewayProcess;
}
const pairs = new Map<GatewayDialect, Pair>();

beforeAll(async () => {
  await Promise.all(
    DIALECTS.map(async (dialect) => {
      const sim = await startSimulatorProcess({ dialect, dataFile: FINES_DATA, extraArgs: ['--log-level', 'warn'] });
      const gateway = await startGatewayProcess({
        sip2Port: sim.port,
        dialect,
        env: { PAIA_SIP2_CURRENCY: 'CHF', PAIA_SIP2_POOL_MIN: '0' },
      });
      pairs.set(dialect, { sim, gateway });
    }),
  );
});

afterAll(async () => {
  await Promise.all([...pairs.values()].map(({ gateway }) => gateway.stop()));
  await Promise.all([...pairs.values()].map(({ sim }) => sim.stop()));
});

interface FeeRecord {
  amount?: string;
  fee: Array<{ amount: string; about?: string; item?: string; date?: string; feetype?: string }>;
}

/** Logs in as dora with the profile set on the simulator, and asks for the fees. */
async function feesWith(
  dialect: GatewayDialect,
  profile: string,
  patronId = 'dora',
): Promise<{ fees: FeeRecord; log: string }> {
  const { sim, gateway } = pairs.get(dialect)!;
  // Sessions read the profile per message: the gateway's pooled connections see the new one at once.
  await sim.setProfile(profile);
  const logBefore = gateway.stdout().length;
  const login = await fetch(`${gateway.url}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: patronId, password: `${patronId}-pass`, grant_type: 'password' }),
  });
  expect(login.status, await login.clone().text()).toBe(200);
  const { access_token: token, patron } = (await login.json()) as { access_token: string; patron: string };
  const response = await fetch(`${gateway.url}/core/${patron}/fees`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  const fees = (await response.json()) as FeeRecord;
  // Let the gateway's log line of this call reach its stdout (pino writes asynchronously).
  await new Promise((resolve) => setTimeout(resolve, 200));
  return { fees, log: gateway.stdout().slice(logBefore) };
}

function isoDaysAgo(days: number): string {
  const d = new Date();
  d.setDate(d.getDate() - days);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

const unparsedWarnings = (log: string) => log.split('\n').filter((line) => line.includes('fine items (AV)'));

describe('GET /core/{patron}/fees per fine format', () => {
  it('koha (default av_field_template, BV "15.5", no BH): three fees read by the koha pattern, the total in the configured currency', async () => {
    const { fees, log } = await feesWith('koha', 'koha');
    expect(fees).toEqual({
      amount: '15.50 CHF',
      fee: [
        { amount: '2.50 CHF', about: 'Overdue fine 30002' },
        { amount: '1.00 CHF', about: 'Processing fee' },
        { amount: '12.00 CHF', about: 'Lost item Faust' },
      ],
    });
    expect(unparsedWarnings(log)).toEqual([]);
  });

  it('koha dialect template: item and date where the format carries them', async () => {
    const { fees } = await feesWith('koha', 'none');
    expect(fees.amount).toBe('15.50 EUR');
    expect(fees.fee[0]).toEqual({
      amount: '2.50 EUR',
      about: 'Overdue fine 30002',
      item: 'http://127.0.0.1:8080/item/30002',
      date: isoDaysAgo(3),
      feetype: 'overdue',
    });
    expect(fees.fee[1]).toEqual({
      amount: '1.00 EUR',
      about: 'Processing fee',
      date: isoDaysAgo(10),
      feetype: 'processing',
    });
  });

  it('eg-legacy: "<balance> <billing type> <title> / <author>", BV and BH', async () => {
    const { fees, log } = await feesWith('evergreen', 'evergreen');
    expect(fees).toEqual({
      amount: '15.50 EUR',
      fee: [
        { amount: '2.50 EUR', about: 'Overdue materials Overdue fine 30002' },
        { amount: '1.00 EUR', about: 'processing Processing fee' },
        { amount: '12.00 EUR', about: 'Lost Materials Lost item Faust' },
      ],
    });
    expect(unparsedWarnings(log)).toEqual([]);
  });

  it('eg-3m: the id, $balance and fee type read apart', async () => {
    const { fees } = await feesWith('evergreen', 'fines=eg-3m');
    expect(fees).toEqual({
      amount: '15.50 EUR',
      fee: [
        { amount: '2.50 EUR', about: 'Overdue fine 30002', feetype: 'FINE' },
        { amount: '1.00 EUR', about: 'Processing fee', feetype: 'FEE' },
        { amount: '12.00 EUR', about: 'Lost item Faust', feetype: 'LOST' },
      ],
    });
  });

  it('eg-swyer-b: "Charge-Number: ..., Amount-Due: ..." read by its pattern; padding skipped silently', async () => {
    const { fees, log } = await feesWith('evergreen', 'fines=eg-swyer-b,pad=on');
    expect(fees.amount).toBe('15.50 EUR');
    expect(fees.fee).toEqual([
      { amount: '2.50 EUR', about: 'Overdue fine 30002', feetype: 'FINE' },
      { amount: '1.00 EUR', about: 'Processing fee', feetype: 'FEE' },
      { amount: '12.00 EUR', about: 'Lost item Faust', feetype: 'LOST' },
    ]);
    expect(unparsedWarnings(log)).toEqual([]);
  });

  it('folio (AV = item barcodes, BV "15.5"): no fee lines can be read, the total is the ILS\'s, one warning for the call', async () => {
    const { fees, log } = await feesWith('folio', 'folio');
    expect(fees).toEqual({ amount: '15.50 EUR', fee: [] });
    const warnings = unparsedWarnings(log);
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ unparsed: 2, parsed: 0, reasons: { pattern: 2 } });
    expect(warnings[0]).not.toContain('30002');
  });

  it('sipserver (plain texts without amounts, no BV, no BH, 47 empty padding entries): no fee lines and no total, one warning', async () => {
    const { fees, log } = await feesWith('generic', 'sipserver');
    expect(fees).toEqual({ fee: [] });
    expect('amount' in fees).toBe(false);
    const warnings = unparsedWarnings(log);
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ unparsed: 3, parsed: 0 });
    expect(log).not.toContain('Faust');
  });

  it("Koha texts from a server without BV or BH, padded (the issue's case): every fee listed by its amount, the sum as total, no warning", async () => {
    const { fees, log } = await feesWith('generic', 'sipserver,fines=koha,bv=off');
    expect(fees).toEqual({
      amount: '15.50 CHF',
      fee: [
        { amount: '2.50 CHF', about: 'Overdue fine 30002 2.50' },
        { amount: '1.00 CHF', about: 'Processing fee 1.00' },
        { amount: '12.00 CHF', about: 'Lost item Faust 12.00' },
      ],
    });
    expect(unparsedWarnings(log)).toEqual([]);
  });

  it('no BV and one entry that cannot be read: the readable fee, and no total rather than a wrong one', async () => {
    // finn's texts in the sample ILS's way: "Overdue fine 30004 2.50" and "Computer Time".
    const { fees, log } = await feesWith('generic', 'sipserver', 'finn');
    expect(fees).toEqual({ fee: [{ amount: '2.50 CHF', about: 'Overdue fine 30004 2.50' }] });
    expect(JSON.parse(unparsedWarnings(log)[0]!)).toMatchObject({
      unparsed: 1,
      parsed: 1,
      examples: [{ index: 1, reason: 'pattern', shape: 'Aaaaaaaa Aaaa' }],
    });
    // The same texts with the ILS's BV: its total stands.
    expect((await feesWith('generic', 'sipserver,bv=on', 'finn')).fees.amount).toBe('3.50 CHF');
  });
});
