/**
 * The gateway against the behaviour of the SIP2 servers libraries really run,
 * as the simulator's profiles and faults model it: a pre-forking server with
 * one worker, sessions the server closes when idle, an ILS that announces
 * 9,999 entries per list. Real gateway and simulator processes on loopback.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, item, useFixture } from '../conformance/support.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { RawSip2Client } from '../helpers/simulator.js';

const MANY_SESSIONS = { PAIA_AUTH_MAX_SESSIONS_PER_PATRON: '100' };

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function metric(gateway: GatewayProcess, name: string): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (line === undefined) throw new Error(`no metric ${name}`);
  return Number(line.split(' ')[1]);
}

const logLines = (gateway: GatewayProcess) =>
  gateway
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: string; msg: string; [key: string]: unknown });

describe('a SIP server with one worker (Koha and SIPServer on Net::Server::PreFork, no spare worker)', () => {
  const fx = useFixture('generic', { ...MANY_SESSIONS, PAIA_SIP2_POOL_MAX: '4', PAIA_SIP2_POOL_MIN: '1' }, [], {
    profile: 'workers=1',
  });

  it('answers dave’s 120 loans and a DAIA call for 40 ids in full, while the logins of extra connections go unanswered', async () => {
    const { client, sim } = fx();
    const dave = await client.login('dave');
    const items = await client.get('/core/dave/items', { token: dave.token });
    expect(items.status, items.text.slice(0, 300)).toBe(200);
    expect(items.body.doc as unknown[]).toHaveLength(120);
    const ids = Array.from({ length: 40 }, (_, i) => item(`dv-${String(i + 1).padStart(4, '0')}`)).join('|');
    const daia = await client.get('/daia', { query: { id: ids, format: 'json' } });
    expect(daia.status, daia.text.slice(0, 300)).toBe(200);
    expect((daia.body.document as Array<{ item?: unknown[] }>).filter((doc) => doc.item?.length === 1)).toHaveLength(
      40,
    );
    expect((await sim.state()).waiting).toBeGreaterThan(0);
  });

  it('learns that the ILS serves one session, says so once with advice, and counts no failure', async () => {
    const { client, gateway } = fx();
    // The extra logins time out after sip2.timeouts.responseMs (5 s).
    await sleep(5500);
    expect(await metric(gateway, 'paia_sip2_session_limit')).toBe(1);
    expect(await metric(gateway, 'paia_sip2_circuit_state')).toBe(0);
    const advice = logLines(gateway).filter((line) => /serves only 1 SIP2 session/.test(line.msg));
    expect(advice).toHaveLength(1);
    expect(advice[0]!.msg).toMatch(/sip2\.pool\.max to 1/);
    expect(logLines(gateway).filter((line) => /circuit open|cannot open a SIP2 connection/.test(line.msg))).toEqual([]);
    const again = await client.get('/core/dave/items', { token: (await client.login('dave')).token });
    expect(again.status).toBe(200);
  });
});

describe('a write whose connection never got its login answered was not sent', () => {
  const fx = useFixture('generic', { PAIA_SIP2_POOL_MIN: '0', PAIA_SIP2_TIMEOUTS_RESPONSE_MS: '1000' }, [], {
    profile: 'workers=1',
  });

  it('answers 504 (nothing happened) rather than "outcome unknown", and the ILS never saw the renew', async () => {
    const { client, sim } = fx();
    const alice = await client.login('alice');
    // Another SIP2 client (a self-check machine) takes the one worker once the gateway's session is gone.
    await sim.disconnectAll();
    const kiosk = await RawSip2Client.connect(sim.port);
    try {
      expect(await kiosk.login()).toBe(true);
      const reply = await client.post(
        '/core/alice/renew',
        { doc: [{ item: item('it-0002') }] },
        { token: alice.token },
      );
      expect(reply.status, reply.text).toBe(504);
      expect(reply.body.error).toBe('gateway_timeout');
      expect((await sim.counters()).received['29']).toBeUndefined();
    } finally {
      kiosk.close();
    }
  });
});

describe('a SIP server that closes idle sessions sooner than the keepalive (its own timeout)', () => {
  const fx = useFixture(
    'generic',
    { PAIA_SIP2_POOL_KEEPALIVE_MS: '2000', PAIA_SIP2_POOL_MIN: '1', PAIA_LOG_LEVEL: 'info' },
    [],
    { profile: 'idle-timeout=1' },
  );

  // The ILS closes the idle session every second: 15 s idle is some fifteen closes and refills, as many as 30 s
  // against a 2 s timeout, in half the wait.
  it('after 15 s idle (some fifteen sessions closed by the ILS) the next call is 200, the circuit never opened, and no close was a warning', async () => {
    const { client, gateway } = fx();
    const alice = await client.login('alice');
    await sleep(15_000);
    const reply = await client.get('/core/alice/items', { token: alice.token });
    expect(reply.status, reply.text.slice(0, 300)).toBe(200);
    expect(await metric(gateway, 'paia_sip2_circuit_state')).toBe(0);
    const lines = logLines(gateway);
    expect(lines.filter((line) => /circuit/.test(line.msg))).toEqual([]);
    expect(lines.filter((line) => ['warn', 'error', 'fatal'].includes(line.level))).toEqual([]);
    // The advice to lower the keepalive, once.
    expect(lines.filter((line) => /closes idle SIP2 sessions/.test(line.msg))).toHaveLength(1);
  }, 60_000);
});

describe('a SIP server that closes idle sessions after 2 s, keepalive 20 s (profile idle-timeout=2)', () => {
  const fx = useFixture(
    'generic',
    { PAIA_SIP2_POOL_KEEPALIVE_MS: '20000', PAIA_SIP2_POOL_MIN: '1', PAIA_LOG_LEVEL: 'info' },
    [],
    { profile: 'idle-timeout=2' },
  );

  it('learns the timeout, keeps its idle sessions open with a keepalive of 1 s (metric), says so once, and logs in no more while idle', async () => {
    const { sim, gateway } = fx();
    // Two closes that measured the same idle time (2 s after the start, 2 s after its replacement), and the session replaced.
    await vi.waitFor(
      async () => {
        expect(await metric(gateway, 'paia_sip2_keepalive_interval_seconds')).toBe(1);
        expect(await metric(gateway, 'paia_sip2_connections')).toBe(1);
      },
      { timeout: 8000, interval: 200 },
    );
    const before = await sim.counters();
    // Longer than the ILS's idle timeout: without keepalives it would close the session and the pool log in again.
    await sleep(2600);
    const after = await sim.counters();
    expect((after.received['93'] ?? 0) - (before.received['93'] ?? 0), 'logins while idle').toBe(0);
    expect((after.received['99'] ?? 0) - (before.received['99'] ?? 0), 'keepalives').toBeGreaterThanOrEqual(2);
    expect(await metric(gateway, 'paia_sip2_connections')).toBe(1);
    const lines = logLines(gateway);
    const learned = lines.filter((line) => /keepalives now go every/.test(line.msg));
    expect(learned, gateway.stdout()).toHaveLength(1);
    expect(learned[0]!.msg).toMatch(
      /^the ILS closes idle SIP2 sessions after about 2 s, sooner than sip2\.pool\.keepaliveMs \(20000\): keepalives now go every 1 s/,
    );
    expect(lines.filter((line) => /closes idle SIP2 sessions/.test(line.msg))).toHaveLength(1);
    expect(lines.filter((line) => ['warn', 'error', 'fatal'].includes(line.level))).toEqual([]);
  });
});

describe('an ILS announcing 9,999 entries per list, 10 per page', () => {
  const fx = useFixture('evergreen', { PAIA_SIP2_MAX_LIST_ENTRIES: '30', PAIA_CACHE_ITEMS_ENABLED: 'false' });

  it('reads at most sip2.maxListEntries of each list: the pages that calls for and no more', async () => {
    const { client, sim } = fx();
    const alice = await client.login('alice');
    await sim.setFaults({ listCount: 9999 });
    try {
      const before = await sim.counters();
      const items = await client.get('/core/alice/items', { token: alice.token });
      expect(items.status, items.text.slice(0, 300)).toBe(200);
      const afterItems = await sim.counters();
      // Five lists, 30 entries each at 10 a page: three 63s per list.
      expect((afterItems.received['63'] ?? 0) - (before.received['63'] ?? 0)).toBe(15);
      expect((afterItems.received['17'] ?? 0) - (before.received['17'] ?? 0)).toBeLessThanOrEqual(150);
      const fees = await client.get('/core/alice/fees', { token: alice.token });
      expect(fees.status).toBe(200);
      expect(((await sim.counters()).received['63'] ?? 0) - (afterItems.received['63'] ?? 0)).toBe(3);
    } finally {
      await sim.clearFaults();
    }
  });
});

describe('log.level debug', () => {
  const fx = useFixture('generic', { PAIA_LOG_LEVEL: 'debug' });

  it('shows the SIP2 traffic, with the terminal and patron passwords masked', async () => {
    const { client, gateway } = fx();
    await client.login('alice');
    // The log goes out asynchronously (pino's non-blocking stdout): the lines of the login may follow its answer.
    const trafficOf = () => logLines(gateway).filter((line) => line.msg === 'sip2 >>' || line.msg === 'sip2 <<');
    await vi.waitFor(() => expect(trafficOf().some((line) => String(line.in).startsWith('64'))).toBe(true), {
      timeout: 5000,
    });
    const traffic = trafficOf();
    const sent = traffic.filter((line) => line.msg === 'sip2 >>').map((line) => String(line.out));
    expect(sent.some((text) => text.startsWith('93') && text.includes('CO***'))).toBe(true);
    expect(sent.some((text) => text.startsWith('63') && text.includes('AD***'))).toBe(true);
    expect(traffic.some((line) => line.msg === 'sip2 <<' && String(line.in).startsWith('64'))).toBe(true);
    expect(gateway.stdout()).not.toContain('alice-pass');
    expect(gateway.stdout()).not.toContain('paia-secret');
  });
});

describe('the demo (npm start: the simulator embedded)', () => {
  let gateway: GatewayProcess;
  beforeAll(async () => {
    gateway = await startGatewayProcess({ sip2Port: null, dialect: 'generic' });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('shows emile’s non-ASCII name and titles intact', async () => {
    const client = new Client(gateway.url);
    const emile = await client.login('emile');
    const patron = await client.get('/core/emile', { token: emile.token });
    expect(patron.body.name).toBe('Émile Zoë Ångström');
    const items = await client.get('/core/emile/items', { token: emile.token });
    const titles = (items.body.doc as Array<{ about?: string }>).map((doc) => doc.about);
    expect(titles).toEqual(
      expect.arrayContaining(['Der Zauberberg – Roman', 'Harry Potter y el cáliz de fuego', 'ノルウェイの森']),
    );
  });
});
