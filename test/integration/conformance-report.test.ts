import { describe, expect, it } from 'vitest';
import { useFixture } from '../conformance/support.js';
import { RawSip2Client } from '../helpers/simulator.js';
import { sign, sip2Date } from '../helpers/sip2-text-client.js';

/**
 * The simulator's conformance report (GET /conformance) against real
 * processes: the gateway's own SIP2 client leaves it empty; a raw client's
 * bad messages are listed with their rules, passwords masked; strict mode
 * answers them 96. One simulator and one gateway for the whole file.
 */

interface Report {
  strict: boolean;
  totals: Record<string, number>;
  connections: Array<{
    connection: number;
    counts: Record<string, number>;
    messages: Array<{ text: string; deviations: Array<{ rule: string; section: string; detail: string }> }>;
  }>;
}

const fx = useFixture('generic');

async function control(method: string, path: string, body?: unknown): Promise<Report> {
  const response = await fetch(`http://127.0.0.1:${fx().sim.controlPort}${path}`, {
    method,
    signal: AbortSignal.timeout(10_000),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(response.status, `${method} ${path}`).toBe(200);
  return (await response.json()) as Report;
}

describe('GET /conformance', () => {
  it("stays empty for the gateway's own traffic: login, patron read, renew (and its pool's login and 99s)", async () => {
    const { client } = fx();
    const renewsBefore = await fx().executed('29');
    const alice = await client.login('alice');
    expect((await client.get('/core/alice', { token: alice.token })).status).toBe(200);
    expect((await client.get('/core/alice/items', { token: alice.token })).status).toBe(200);
    const renew = await client.post(
      '/core/alice/renew',
      { doc: [{ item: 'https://lib.example.org/item/it-0002' }] },
      { token: alice.token },
    );
    expect(renew.status).toBe(200);
    expect(await fx().executed('29')).toBe(renewsBefore + 1);
    expect(await control('GET', '/conformance')).toEqual({ strict: false, totals: {}, connections: [] });
  });

  it("lists a raw client's deviations per connection and rule, passwords masked, each rule logged once", async () => {
    await control('POST', '/conformance/reset');
    const raw = await RawSip2Client.connect(fx().sim.port);
    try {
      // A login whose two fixed characters are missing: the password must not show, wherever it lands.
      raw.writeRaw('93CNpaia|COpaia-secret|\r');
      expect((await raw.nextFrame()).frame.toString('latin1')).toMatch(/^940/);
      expect(await raw.login()).toBe(true); // AY0 with AZ: this connection uses error detection now
      raw.writeRaw(`17${sip2Date()}AODEMO|ABit-0001|\r`); // AZ left out
      expect((await raw.nextFrame()).frame.toString('latin1')).toMatch(/^18/);
      raw.writeRaw(`${sign(`63000${sip2Date()}YY        AODEMO|AAalice|ADalice-pass|`, 5)}\r`); // AY 5 after 0; two lists
      expect((await raw.nextFrame()).frame.toString('latin1')).toMatch(/^64/);
    } finally {
      raw.close();
    }
    const report = await control('GET', '/conformance');
    expect(report.totals).toEqual({ 'fixed-length': 1, checksum: 1, sequence: 1, 'fixed-value': 1 });
    expect(report.connections).toHaveLength(1);
    const [connection] = report.connections;
    expect(connection!.counts).toEqual(report.totals);
    expect(connection!.messages.map((m) => m.deviations.map((d) => d.rule))).toEqual([
      ['fixed-length'],
      ['checksum'],
      ['sequence', 'fixed-value'],
    ]);
    expect(connection!.messages[0]!.text).toBe('93CNpaia|CO***|\r');
    expect(connection!.messages[2]!.text).toMatch(/\|AD\*\*\*\|AY5AZ\*\*\*\*\r$/);
    expect(JSON.stringify(report)).not.toMatch(/paia-secret|alice-pass/);
    const warnings = fx()
      .sim.stderr.split('\n')
      .filter((line) => line.includes('breaks the SIP2 rules'));
    expect(warnings.map((line) => (JSON.parse(line) as { rule: string }).rule).sort()).toEqual(
      ['checksum', 'fixed-length', 'fixed-value', 'sequence'].sort(),
    );
    expect(warnings.join('\n')).not.toMatch(/paia-secret|alice-pass/);
    expect(await control('DELETE', '/conformance')).toEqual({ strict: false, totals: {}, connections: [] });
  });

  it('in strict mode answers a non-conforming message 96 without executing it, and a conforming one as always', async () => {
    expect((await control('PUT', '/conformance', { strict: true })).strict).toBe(true);
    const raw = await RawSip2Client.connect(fx().sim.port);
    try {
      expect(await raw.login()).toBe(true);
      const executed = (await fx().sim.counters()).executed['17'] ?? 0;
      raw.writeRaw(`${sign(`17${sip2Date()}AODEMO|ABit-0001`, 1)}\r`); // the last field without |
      expect((await raw.nextFrame()).frame.toString('latin1')).toMatch(/^96/);
      raw.writeRaw(`${sign(`17${sip2Date()}AODEMO|ABit-0001|`, 2)}\n`); // LF for CR: the framer would wait for ever
      expect((await raw.nextFrame()).frame.toString('latin1')).toMatch(/^96/);
      expect((await fx().sim.counters()).executed['17'] ?? 0).toBe(executed);
      raw.writeRaw(`${sign(`17${sip2Date()}AODEMO|ABit-0001|`, 3)}\r`);
      expect((await raw.nextFrame()).frame.toString('latin1')).toMatch(/^18/);
    } finally {
      raw.close();
      await control('PUT', '/conformance', { strict: false });
    }
    const report = await control('GET', '/conformance');
    expect(report.totals).toEqual({ 'field-terminator': 1, terminator: 1 });
  });
});
