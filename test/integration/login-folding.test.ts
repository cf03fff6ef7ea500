/**
 * Issue 24, item 7: a lockout holds for every spelling the ILS takes for the
 * account, the collation's expansions and digits included. The real gateway
 * in front of the simulator with Koha's preset (ids=folded: identifiers
 * compared as utf8mb4_unicode_ci compares them), on a data file with the
 * patrons "zoe" and "23456789".
 *
 * That each spelling reaches its account is shown at the simulator itself,
 * over a SIP2 connection of the test's own: a login through the gateway would
 * teach the gateway which patron the spelling names (it remembers that per
 * username), and the red team's bypass was a spelling never tried before.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';
import { TextSip2Client, text } from '../helpers/sip2-text-client.js';

const FOLDING_DATA = fileURLToPath(new URL('../fixtures/simulator/folding.json', import.meta.url));

const ACCOUNTS = [
  {
    account: 'zoe',
    password: 'zoe-pass',
    // Œ is O then E in UCA 4.0.0; COMBINING LATIN SMALL LETTER E is the letter e, not an accent.
    spellings: ['zŒ', 'ZŒ', 'zo\u0364'],
  },
  {
    account: '23456789',
    password: 'card-pass',
    // Arabic-Indic, Devanagari, and a barcode mixing Thai and ASCII digits.
    spellings: ['٢٣٤٥٦٧٨٩', '२३४५६७८९', '๒๓456789'],
  },
];

interface Answer {
  status: number;
  retryAfter: string | null;
}

let sim: SimulatorProcess;
let gateway: GatewayProcess;
/** What the simulator answered to a 63 with each spelling and the account's password: BL, CQ and AA. */
const atSimulator = new Map<string, string[]>();

beforeAll(async () => {
  // The koha dialect speaks UTF-8, as Koha's SIP server does: Œ and Arabic-Indic digits travel as they are.
  sim = await startSimulatorProcess({
    dialect: 'koha',
    profile: 'koha',
    dataFile: FOLDING_DATA,
    extraArgs: ['--log-level', 'warn'],
  });
  // Koha's preset has one SIP server worker: this connection ends before the gateway opens its own.
  const sip2 = await TextSip2Client.connect(sim.port, { charset: 'utf8' });
  try {
    await sip2.start();
    for (const { password, spellings } of ACCOUNTS) {
      for (const spelling of spellings) {
        const reply = await sip2.send(`${text.patronInformation(spelling, null)}AD${password}|`);
        atSimulator.set(
          spelling,
          [reply.fields.get('BL')?.[0], reply.fields.get('CQ')?.[0], reply.fields.get('AA')?.[0]].map(String),
        );
      }
    }
  } finally {
    sip2.close();
  }
  await sim.disconnectAll();
  gateway = await startGatewayProcess({
    sip2Port: sim.port,
    dialect: 'koha',
    env: {
      PAIA_HTTP_TRUSTED_PROXY: 'true',
      PAIA_AUTH_BRUTE_FORCE_LOCKOUT_BASE_MS: '60000',
      // One connection, as the one worker of the preset (Koha's shipped SIPconfig.xml) serves.
      PAIA_SIP2_POOL_MIN: '0',
      PAIA_SIP2_POOL_MAX: '1',
    },
  });
});

afterAll(async () => {
  await gateway?.stop();
  await sim?.stop();
});

async function login(username: string, password: string, address: string): Promise<Answer> {
  const response = await fetch(`${gateway.url}/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': address, 'X-Forwarded-Proto': 'https' },
    body: JSON.stringify({ username, password, grant_type: 'password' }),
    signal: AbortSignal.timeout(20_000),
  });
  await response.arrayBuffer();
  return { status: response.status, retryAfter: response.headers.get('retry-after') };
}

const reachedIls = async () => (await sim.counters()).executed['63'] ?? 0;

/** Wrong passwords through `username` until the gateway answers with a lockout (Retry-After). */
async function lockOut(username: string, address: string): Promise<void> {
  for (let i = 0; i < 10; i++) {
    const answer = await login(username, `wrong-guess-${i}`, address);
    expect(answer.status).toBe(403);
    if (answer.retryAfter !== null) return;
  }
  throw new Error(`${username} was never locked`);
}

describe.each(ACCOUNTS)('a lockout of $account holds for its other spellings', ({ account, password, spellings }) => {
  it('each spelling names the account at the simulator, the right password accepted (BL Y, CQ Y, AA the stored barcode)', () => {
    for (const spelling of spellings) expect(atSimulator.get(spelling), spelling).toEqual(['Y', 'Y', account]);
  });

  it('locked through the plain spelling, every other spelling with the right password is refused before the ILS', async () => {
    await lockOut(account, '203.0.113.20');
    const before = await reachedIls();
    for (const spelling of spellings) {
      const answer = await login(spelling, password, '192.0.2.11');
      expect(answer.status, spelling).toBe(403);
      expect(Number(answer.retryAfter), spelling).toBeGreaterThanOrEqual(1);
    }
    expect(await login(account, password, '192.0.2.11')).toMatchObject({ status: 403 });
    expect((await reachedIls()) - before).toBe(0);
  });
});
