import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_DIALECTS, type DialectName, loadDialect } from '../../src/sip2/dialect.js';
import { IlsProtocolError, IlsTimeout, IlsUnavailable, PoolRefused } from '../../src/sip2/errors.js';
import { type PoolOptions, Sip2Pool } from '../../src/sip2/index.js';
import { Sip2Messages } from '../../src/sip2/messages.js';
import { fetchPatronList } from '../../src/sip2/paging.js';
import { testPoolOptions } from '../helpers/pool.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

const requests = new Sip2Messages({ institutionId: 'DEMO' });
const RESPONSE_TIMEOUT_MS = 800;

function poolFor(
  sim: SimulatorProcess,
  dialectName: DialectName = 'generic',
  overrides: Partial<PoolOptions> = {},
): Sip2Pool {
  return new Sip2Pool(testPoolOptions(sim.port, dialectName, { responseTimeoutMs: RESPONSE_TIMEOUT_MS, ...overrides }));
}

const pools: Sip2Pool[] = [];
function track(pool: Sip2Pool): Sip2Pool {
  pools.push(pool);
  return pool;
}
afterEach(() => {
  for (const pool of pools.splice(0)) pool.destroy();
});

async function eventually<T>(fn: () => Promise<T>, timeoutMs = 8000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describe('SIP2 pool against the simulator (generic dialect)', () => {
  let sim: SimulatorProcess;
  beforeAll(async () => {
    sim = await startSimulatorProcess({ dialect: 'generic' });
  });
  afterAll(async () => {
    await sim.stop();
  });
  afterEach(async () => {
    await sim.reset();
  });

  it('speaks every message type: 93/94 and 99/98 on connect, then 23, 63, 17, 29, 65, 15, 35, 37', async () => {
    const pool = track(poolFor(sim));
    await pool.start();
    expect(pool.acsStatus?.onlineStatus).toBe(true);
    expect(pool.acsStatus?.institutionId).toBe('DEMO');

    const status = await pool.send(requests.patronStatus('alice', 'alice-pass'));
    expect(status).toMatchObject({
      code: '24',
      personalName: 'Alice Example',
      validPatron: true,
      validPatronPassword: true,
    });

    const info = await pool.send(requests.patronInformation('alice', { password: 'alice-pass', list: 'charged' }));
    expect(info.code).toBe('64');
    expect(info.chargedItems).toEqual(['it-0001', 'it-0002', 'it-0003']);
    expect(info.chargedItemsCount).toBe(3);
    expect(info.overdueItemsCount).toBe(1);
    expect(info.fineItemsCount).toBe(2);
    expect(info.feeAmount).toBe('3.50');
    expect(info.currencyType).toBe('EUR');
    expect(info.emailAddress).toBe('alice@example.org');

    const item = await pool.send(requests.itemInformation('it-0010'));
    expect(item).toMatchObject({ code: '18', circulationStatus: 8, titleIdentifier: 'Der Steppenwolf' });

    const renewed = await pool.send(requests.renew('alice', 'it-0002'));
    expect(renewed).toMatchObject({ code: '30', ok: true, itemIdentifier: 'it-0002' });
    const renewAll = await pool.send(requests.renewAll('dave'));
    expect(renewAll.code).toBe('66');
    expect((renewAll.renewedCount ?? 0) + (renewAll.unrenewedCount ?? 0)).toBe(120);

    const placed = await pool.send(requests.hold('+', 'alice', { item: 'it-0030' }));
    expect(placed).toMatchObject({ code: '16', ok: true });
    const cancelled = await pool.send(requests.hold('-', 'alice', { item: 'it-0030' }));
    expect(cancelled).toMatchObject({ code: '16', ok: true });
    const cancelledAgain = await pool.send(requests.hold('-', 'alice', { item: 'it-0030' }));
    expect(cancelledAgain.ok).toBe(false);

    const ended = await pool.send(requests.endSession('alice'));
    expect(ended).toMatchObject({ code: '36', endSession: true });
    const paid = await pool.send(requests.feePaid('alice', { amount: '1.00', currency: 'EUR', feeId: 'f-0002' }));
    expect(paid).toMatchObject({ code: '38', paymentAccepted: true });

    const counters = await sim.counters();
    for (const code of ['93', '99', '23', '63', '17', '29', '65', '15', '35', '37'])
      expect(counters.executed[code]).toBeGreaterThan(0);
    expect(counters.executed['29']).toBe(1);
  });

  it('shows the new due date of a renewed loan on the next 17', async () => {
    const pool = track(poolFor(sim));
    const before = await pool.send(requests.itemInformation('it-0002'));
    const renewed = await pool.send(requests.renew('alice', 'it-0002'));
    expect(renewed.ok).toBe(true);
    const after = await pool.send(requests.itemInformation('it-0002'));
    expect(after.dueDate).toBe(renewed.dueDate);
    expect(after.dueDate).not.toBe(before.dueDate);
  });

  it('keeps non-ASCII names and titles intact through cp850 where the charset can carry them', async () => {
    const pool = track(poolFor(sim));
    const info = await pool.send(requests.patronInformation('emile', { list: 'charged' }));
    expect(info.personalName).toBe('Émile Zoë Ångström');
    const item = await pool.send(requests.itemInformation('em-0002'));
    expect(item.titleIdentifier).toBe('Harry Potter y el cáliz de fuego');
  });

  it('runs requests on up to max connections at once and no more', async () => {
    const pool = track(poolFor(sim, 'generic', { min: 0, max: 3 }));
    await sim.setFaults({ latencyMs: 150 });
    await Promise.all(Array.from({ length: 9 }, () => pool.send(requests.itemInformation('it-0010'))));
    expect(pool.stats().connections).toBe(3);
    expect(pool.stats().created).toBe(3);
  });

  it('fails fast with PoolRefused when the waiting queue is full', async () => {
    const pool = track(poolFor(sim, 'generic', { min: 1, max: 1, maxWaiting: 2 }));
    await pool.start();
    await sim.setFaults({ latencyMs: 300 });
    const started = Date.now();
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => pool.send(requests.itemInformation('it-0010'))),
    );
    const rejected = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(rejected).toHaveLength(2);
    for (const error of rejected) expect(error).toBeInstanceOf(PoolRefused);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('with maxWaiting 0 runs what finds a free connection and refuses only what would have to wait', async () => {
    const pool = track(poolFor(sim, 'generic', { min: 1, max: 1, maxWaiting: 0 }));
    await pool.start();
    await expect(pool.send(requests.itemInformation('it-0010'))).resolves.toMatchObject({ code: '18' });
    await sim.setFaults({ latencyMs: 200 });
    const results = await Promise.allSettled([0, 1].map(() => pool.send(requests.itemInformation('it-0010'))));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(PoolRefused);
  });

  it('gives PoolRefused after the acquire timeout when no connection frees up', async () => {
    const pool = track(poolFor(sim, 'generic', { min: 1, max: 1, acquireTimeoutMs: 200 }));
    await pool.start();
    await sim.setFaults({ latencyMs: 600 });
    const slow = pool.send(requests.itemInformation('it-0010'));
    const started = Date.now();
    await expect(pool.send(requests.itemInformation('it-0010'))).rejects.toBeInstanceOf(PoolRefused);
    expect(Date.now() - started).toBeLessThan(550);
    await expect(slow).resolves.toMatchObject({ code: '18' });
  });

  it('turns a hang into IlsTimeout within the configured bound, then works again', async () => {
    const pool = track(poolFor(sim));
    await pool.start();
    await sim.setFaults({ hang: 1 });
    const started = Date.now();
    const error = await pool.send(requests.renew('alice', 'it-0002')).catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(IlsTimeout);
    expect((error as IlsTimeout).requestSent).toBe(true);
    expect(elapsed).toBeGreaterThanOrEqual(RESPONSE_TIMEOUT_MS - 50);
    expect(elapsed).toBeLessThan(RESPONSE_TIMEOUT_MS + 700);
    // The renew ran in the ILS; the gateway must not have sent it again.
    expect((await sim.counters()).executed['29']).toBe(1);
    expect((await sim.counters()).received['29']).toBe(1);
    await expect(pool.send(requests.itemInformation('it-0010'))).resolves.toMatchObject({ code: '18' });
  });

  it('recovers from one corrupted checksum through 97, and from a burst once it stops', async () => {
    const pool = track(poolFor(sim));
    await pool.start();
    await sim.setFaults({ corruptChecksums: 1 });
    await expect(pool.send(requests.itemInformation('it-0010'))).resolves.toMatchObject({
      titleIdentifier: 'Der Steppenwolf',
    });
    expect((await sim.counters()).received['97']).toBe(1);

    await sim.setFaults({ corruptChecksums: true });
    const error = await pool.send(requests.renew('alice', 'it-0002')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IlsProtocolError);
    expect((await sim.counters()).executed['29']).toBe(1);
    expect((await sim.counters()).received['29']).toBe(1);

    await sim.clearFaults();
    await expect(pool.send(requests.itemInformation('it-0010'))).resolves.toMatchObject({
      titleIdentifier: 'Der Steppenwolf',
    });
  });

  it('retries a read, but never a renew, when the connection drops mid-reply', async () => {
    const pool = track(poolFor(sim));
    await pool.start();
    await sim.setFaults({ dropMidReply: 1 });
    await expect(pool.send(requests.itemInformation('it-0010'))).resolves.toMatchObject({ code: '18' });
    expect((await sim.counters()).received['17']).toBe(2);

    await sim.setFaults({ dropMidReply: 1 });
    const error = await pool.send(requests.renew('alice', 'it-0002')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IlsUnavailable);
    expect((error as IlsUnavailable).requestSent).toBe(true);
    expect((await sim.counters()).received['29']).toBe(1);
  });

  it('survives the ILS dropping every connection (a restart of its SIP service)', async () => {
    const pool = track(poolFor(sim, 'generic', { min: 2, max: 2 }));
    await pool.start();
    await eventually(async () => expect(pool.stats().connections).toBe(2));
    expect(await sim.disconnectAll()).toBeGreaterThanOrEqual(2);
    await expect(pool.send(requests.itemInformation('it-0010'))).resolves.toMatchObject({ code: '18' });
    await eventually(async () => expect(pool.stats().connections).toBe(2));
    expect(pool.stats().created).toBeGreaterThanOrEqual(4);
  });

  it('reports refused connections as IlsUnavailable until the circuit opens, then fails fast without connecting until a probe succeeds', async () => {
    await sim.setFaults({ refuseConnections: true });
    const pool = track(
      poolFor(sim, 'generic', { min: 0, circuit: { failureThreshold: 3, coolDownMs: { initial: 1500, max: 3000 } } }),
    );
    expect(pool.circuitState).toBe('closed');
    for (let i = 1; i <= 3; i++) {
      const error = await pool.send(requests.itemInformation('it-0010')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(IlsUnavailable);
      expect(pool.stats().connectFailures).toBe(i);
    }
    expect(pool.circuitState).toBe('open');
    expect(pool.circuitOpen).toBe(true);

    const started = Date.now();
    const fast = await pool.send(requests.itemInformation('it-0010')).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(100);
    expect(fast).toBeInstanceOf(PoolRefused);
    // The first cool-down is 750..1500 ms: Retry-After says when the probe runs.
    expect((fast as PoolRefused).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((fast as PoolRefused).retryAfterSeconds).toBeLessThanOrEqual(2);
    expect(pool.stats().connectFailures).toBe(3);

    await sim.clearFaults();
    // Nobody calls the pool: the probe's own timer finds the ILS back and closes the circuit.
    await eventually(async () => expect(pool.circuitState).toBe('closed'), 5000);
    expect((await sim.counters()).executed['93']).toBe(1);
    await expect(pool.send(requests.itemInformation('it-0010'))).resolves.toMatchObject({ code: '18' });
    expect(pool.circuitOpen).toBe(false);
  });

  it('opens the circuit after consecutive timeouts: queued work fails at once, nothing reaches the ILS while open, one probe closes it', async () => {
    const pool = track(
      poolFor(sim, 'generic', {
        min: 1,
        max: 1,
        acquireTimeoutMs: 10_000,
        circuit: { failureThreshold: 2, coolDownMs: { initial: 2000, max: 4000 } },
      }),
    );
    await pool.start();
    await sim.setFaults({ hang: true });
    const results = await Promise.allSettled([0, 1, 2, 3].map(() => pool.send(requests.itemInformation('it-0010'))));
    const reasons = results.map((r) => (r.status === 'rejected' ? (r.reason as Error).constructor.name : 'fulfilled'));
    // The first times out on its request. The three waiting fail together, at once, when the login of the
    // replacement connection times out (nothing else could free up), not after their acquire timeout; that
    // second failure opens the circuit.
    expect(reasons).toEqual(['IlsTimeout', 'IlsTimeout', 'IlsTimeout', 'IlsTimeout']);
    expect(results.slice(1).map((r) => ((r as PromiseRejectedResult).reason as IlsTimeout).reason)).toEqual(
      Array(3).fill('login-timeout'),
    );
    expect(pool.circuitState).toBe('open');
    expect(pool.stats().waiting).toBe(0);

    const before = await sim.counters();
    const started = Date.now();
    const refused = await Promise.allSettled(
      Array.from({ length: 20 }, () => pool.send(requests.itemInformation('it-0010'))),
    );
    expect(Date.now() - started).toBeLessThan(200);
    for (const r of refused) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(PoolRefused);
    expect((await sim.counters()).received).toEqual(before.received);

    await sim.clearFaults();
    await eventually(async () => expect(pool.circuitState).toBe('closed'), 6000);
    const after = await sim.counters();
    // One probe: a new connection, so one login and one 99.
    expect((after.received['93'] ?? 0) - (before.received['93'] ?? 0)).toBe(1);
    expect((after.received['99'] ?? 0) - (before.received['99'] ?? 0)).toBe(1);
    await expect(pool.send(requests.itemInformation('it-0010'))).resolves.toMatchObject({ code: '18' });
  });

  it('keeps the circuit open while the probe fails, probing less often, and closes it once the ILS answers (transitions logged)', async () => {
    const logged: Array<Record<string, unknown>> = [];
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) },
    );
    const pool = track(
      poolFor(sim, 'generic', {
        min: 0,
        max: 2,
        logger,
        circuit: { failureThreshold: 1, coolDownMs: { initial: 200, max: 400 } },
      }),
    );
    await sim.setFaults({ refuseConnections: true });
    await expect(pool.send(requests.itemInformation('it-0010'))).rejects.toBeInstanceOf(IlsUnavailable);
    expect(pool.circuitState).toBe('open');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // Probes ran and failed; no request got through meanwhile, and each failed probe opened the circuit for longer (capped).
    expect(pool.circuitState).not.toBe('closed');
    const failedProbes = pool.stats().connectFailures - 1;
    expect(failedProbes).toBeGreaterThanOrEqual(2);
    expect(failedProbes).toBeLessThan(10);
    await sim.clearFaults();
    await eventually(async () => expect(pool.circuitState).toBe('closed'), 3000);
    await expect(pool.send(requests.itemInformation('it-0010'))).resolves.toMatchObject({ code: '18' });

    const transitions = logged.filter((record) => typeof record.to === 'string');
    const path = transitions.map((record) => `${String(record.from)}>${String(record.to)}`);
    expect(path[0]).toBe('closed>open');
    expect(path.at(-1)).toBe('half-open>closed');
    for (const [i, step] of path.entries()) {
      if (i === 0 || i === path.length - 1) continue;
      expect(step).toBe(i % 2 === 1 ? 'open>half-open' : 'half-open>open');
    }
    const coolDowns = transitions.filter((record) => record.to === 'open').map((record) => Number(record.probeInMs));
    expect(coolDowns[0]).toBeLessThanOrEqual(200);
    for (const ms of coolDowns) expect(ms).toBeLessThanOrEqual(400);
    expect(Math.max(...coolDowns)).toBeGreaterThan(200);
    expect(logged.find((record) => record.to === 'open')?.level).toBe(40); // warn
  });

  it('does not storm an ILS that drops every connection right after the login', async () => {
    const pool = track(poolFor(sim, 'generic', { min: 2, max: 2, backoff: { initialMs: 200, maxMs: 400 } }));
    await pool.start();
    const before = (await sim.counters()).executed['93'] ?? 0;
    const deadline = Date.now() + 1500;
    while (Date.now() < deadline) {
      await sim.disconnectAll();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const logins = ((await sim.counters()).executed['93'] ?? 0) - before;
    // Without backoff this loop sees a fresh login every few milliseconds; with it, a handful.
    expect(logins).toBeLessThan(25);
    await sim.clearFaults();
  });

  it('close() lets a running request finish, then refuses new work', async () => {
    const pool = track(poolFor(sim, 'generic', { min: 1, max: 1 }));
    await pool.start();
    await sim.setFaults({ latencyMs: 200 });
    const running = pool.send(requests.itemInformation('it-0010'));
    const queued = pool.send(requests.itemInformation('it-0020'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    await pool.close(5000);
    await expect(running).resolves.toMatchObject({ itemIdentifier: 'it-0010' });
    await expect(queued).resolves.toMatchObject({ itemIdentifier: 'it-0020' });
    await expect(pool.send(requests.itemInformation('it-0010'))).rejects.toBeInstanceOf(PoolRefused);
    expect(pool.stats().connections).toBe(0);
  });

  it('destroy() fails queued work at once', async () => {
    const pool = track(poolFor(sim, 'generic', { min: 1, max: 1 }));
    await pool.start();
    await sim.setFaults({ latencyMs: 300 });
    const running = pool.send(requests.itemInformation('it-0010')).catch((e: unknown) => e);
    const queued = pool.send(requests.itemInformation('it-0020')).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 20));
    pool.destroy();
    expect(await queued).toBeInstanceOf(PoolRefused);
    expect(await running).toBeInstanceOf(IlsUnavailable);
  });
});

describe('SIP2 pool: idle connections and ILS restarts', () => {
  it('replaces a connection the ILS closed for idleness, and keepalive prevents that', async () => {
    const sim = await startSimulatorProcess({ idleTimeoutS: 1 });
    try {
      const lazy = track(poolFor(sim, 'generic', { min: 1, max: 1 }));
      await lazy.start();
      await new Promise((resolve) => setTimeout(resolve, 1600));
      await expect(lazy.send(requests.itemInformation('it-0010'))).resolves.toMatchObject({ code: '18' });
      expect(lazy.stats().created).toBeGreaterThanOrEqual(2);

      const kept = track(poolFor(sim, 'generic', { min: 1, max: 1, keepaliveIntervalMs: 300 }));
      await kept.start();
      await new Promise((resolve) => setTimeout(resolve, 1600));
      await expect(kept.send(requests.itemInformation('it-0010'))).resolves.toMatchObject({ code: '18' });
      expect(kept.stats().created).toBe(1);
    } finally {
      await sim.stop();
    }
  });

  it('heals after the simulator process is killed and restarted, without restarting the pool', async () => {
    const sim = await startSimulatorProcess();
    try {
      const pool = track(poolFor(sim, 'generic', { min: 2, max: 2 }));
      await pool.start();
      await expect(pool.send(requests.itemInformation('it-0010'))).resolves.toMatchObject({ code: '18' });

      await sim.kill('SIGKILL');
      const down = await pool.send(requests.itemInformation('it-0010')).catch((e: unknown) => e);
      expect(down).toBeInstanceOf(IlsUnavailable);

      await sim.restart();
      const item = await eventually(() => pool.send(requests.itemInformation('it-0010')));
      expect(item.titleIdentifier).toBe('Der Steppenwolf');
      await eventually(async () => expect(pool.stats().connections).toBe(2));
    } finally {
      await sim.stop();
    }
  });
});

// biome-ignore format: the layout of the list of dialects it replaced (a smaller diff)
describe.each(BUILTIN_DIALECTS)(
  'paging through dave’s 120 loans (%s)',
  (dialectName) => {
    let sim: SimulatorProcess;
    beforeAll(async () => {
      sim = await startSimulatorProcess({ dialect: dialectName });
    });
    afterAll(async () => {
      await sim.stop();
    });

    it('reads all 120 charged items with BP/BQ pages in parallel', async () => {
      const dialect = loadDialect(dialectName);
      const pool = track(poolFor(sim, dialectName, { min: 1, max: 4 }));
      const list = await fetchPatronList(
        (request) => pool.send(request),
        (start, end) => requests.patronInformation('dave', { list: 'charged', start, end }),
        'charged',
        { pageSize: dialect.pageSize },
      );
      expect(list.first.chargedItemsCount).toBe(120);
      expect(list.entries).toHaveLength(120);
      expect(new Set(list.entries).size).toBe(120);
      expect(list.entries[0]).toBe('dv-0001');
      expect(list.entries[119]).toBe('dv-0120');
      expect(list.requests).toBe(Math.ceil(120 / Math.min(dialect.pageSize, dialect.listLimit)));
    });
  },
);
