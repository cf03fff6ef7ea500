import type { Context } from 'hono';
import { describe, expect, it } from 'vitest';
import { addressKey } from '../../../src/auth/address-key.js';
import type { DaiaService } from '../../../src/backend/daia/service.js';
import { DaiaAddressLimit } from '../../../src/http/daia-limit.js';
import { MemoryStore } from '../../../src/state/memory/index.js';
import { json, makeApp } from './helpers.js';

const store = () => new MemoryStore({ maxSessions: 10, maxSessionsPerPatron: 10 });

describe('addressKey', () => {
  it('counts IPv4 addresses as they are, an IPv4-mapped IPv6 address as its IPv4 address', () => {
    expect(addressKey('192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('::FFFF:192.0.2.7')).toBe('192.0.2.7');
  });

  it('counts IPv6 addresses by their /64, however they are written', () => {
    const key = addressKey('2001:db8:1:2::1');
    expect(key).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0DB8:0001:0002:ffff:eeee:dddd:cccc')).toBe(key);
    expect(addressKey('2001:db8:1:3::1')).not.toBe(key);
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('2001:db8::')).toBe('2001:db8:0:0::/64');
    expect(addressKey('64:ff9b::192.0.2.7')).toBe('64:ff9b:0:0::/64');
  });

  it('puts requests without an address under one key, and keeps text that is no address as it is', () => {
    expect(addressKey(undefined)).toBe('unknown');
    expect(addressKey('  ')).toBe('unknown');
    expect(addressKey('proxy.example.org')).toBe('proxy.example.org');
    expect(addressKey('x'.repeat(5000))).toBe('x'.repeat(100));
  });
});

describe('DaiaAddressLimit', () => {
  it('counts the ids of each request for its address and refuses past the minute, with the wait to the window end', async () => {
    const limit = new DaiaAddressLimit(store(), { idsPerMinute: 60 });
    expect(await limit.take('192.0.2.1', 50)).toEqual({ allowed: true });
    expect(await limit.take('192.0.2.1', 10)).toEqual({ allowed: true });
    const refused = await limit.take('192.0.2.1', 1);
    expect(refused.allowed).toBe(false);
    const seconds = refused.allowed ? 0 : refused.retryAfterSeconds;
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(60);
    expect(await limit.take('192.0.2.2', 60)).toEqual({ allowed: true });
    // Another address of the same IPv6 /64 shares the count.
    expect(await limit.take('2001:db8::1', 60)).toEqual({ allowed: true });
    expect((await limit.take('2001:db8::2', 1)).allowed).toBe(false);
  });

  it('never refuses an exempt client, and counts everyone else as before', async () => {
    const limit = new DaiaAddressLimit(store(), { idsPerMinute: 5, exempt: ['10.0.0.0/8'] });
    for (let i = 0; i < 10; i += 1) expect(await limit.take('10.1.2.3', 5)).toEqual({ allowed: true });
    expect(await limit.take('192.0.2.1', 5)).toEqual({ allowed: true });
    expect((await limit.take('192.0.2.1', 1)).allowed).toBe(false);
    expect((await limit.take(undefined, 6)).allowed).toBe(false);
  });

  it('tells the log once, naming the settings, when an address is refused again and again; never an exempt one', async () => {
    const lines: Array<[Record<string, unknown>, string]> = [];
    const logger = { warn: (fields: Record<string, unknown>, message: string) => lines.push([fields, message]) };
    const limit = new DaiaAddressLimit(store(), { idsPerMinute: 5, exempt: ['10.0.0.0/8'], logger });
    await limit.take('192.0.2.1', 5);
    for (let i = 0; i < 2; i += 1) expect((await limit.take('192.0.2.1', 1)).allowed).toBe(false);
    expect(lines).toEqual([]);
    for (let i = 0; i < 20; i += 1) await limit.take('192.0.2.1', 1);
    for (let i = 0; i < 20; i += 1) await limit.take('10.1.2.3', 50);
    expect(lines).toHaveLength(1);
    const [fields, message] = lines[0]!;
    expect(fields).toEqual({ address: '192.0.2.1', refusals: 3, idsPerMinutePerAddress: 5 });
    expect(message).toContain('client address 192.0.2.1 was refused 3 times (429) for asking more than 5 ids a minute');
    expect(message).toContain('daia.exemptClients (PAIA_DAIA_EXEMPT_CLIENTS)');
    expect(message).toContain('daia.idsPerMinutePerAddress (PAIA_DAIA_IDS_PER_MINUTE_PER_ADDRESS)');
    // Another address is noticed on its own.
    for (let i = 0; i < 4; i += 1) await limit.take('192.0.2.2', 6);
    expect(lines.map(([line]) => line.address)).toEqual(['192.0.2.1', '192.0.2.2']);
  });

  it('refuses a limit that is no positive whole number', () => {
    expect(() => new DaiaAddressLimit(store(), { idsPerMinute: 0 })).toThrow(/positive integer/);
    expect(() => new DaiaAddressLimit(store(), { idsPerMinute: 1.5 })).toThrow(/positive integer/);
  });
});

describe('GET /daia with daia.idsPerMinutePerAddress', () => {
  /** The app with a DAIA service that records what it was asked, and addresses taken from X-Client (a stand-in for the trusted proxy hop). */
  function daiaApp(idsPerMinute: number, maxIds = 5) {
    const asked: string[][] = [];
    const service = {
      availability: (ids: string[]) => {
        asked.push(ids);
        return Promise.resolve({ document: ids.map((id) => ({ id })) });
      },
    } as unknown as DaiaService;
    const { app } = makeApp({
      daia: { service, maxIds, limit: new DaiaAddressLimit(store(), { idsPerMinute }) },
      clientAddress: (c: Context) => c.req.header('x-client'),
    });
    const get = (ids: string[], client: string, extra = '', format = 'json') =>
      app.request(`/daia?format=${format}&id=${ids.join('|')}${extra}`, { headers: { 'X-Client': client } });
    return { get, asked };
  }

  it('answers 429 service_unavailable with Retry-After, in the DAIA error format, once an address used up its ids; others are still answered', async () => {
    const { get, asked } = daiaApp(8);
    expect((await get(['a', 'b', 'c', 'd', 'e'], '192.0.2.1')).status).toBe(200);
    expect((await get(['f', 'g', 'h'], '192.0.2.1')).status).toBe(200);
    const limited = await get(['i'], '192.0.2.1');
    expect(limited.status).toBe(429);
    const seconds = Number(limited.headers.get('retry-after'));
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(60);
    expect(limited.headers.get('x-daia-version')).toBe('1.0.0');
    const body = await json(limited);
    expect(body).toMatchObject({ error: 'service_unavailable', code: 429 });
    expect(body.error_description).toMatch(/at most 8 per minute/);
    expect(asked).toEqual([
      ['a', 'b', 'c', 'd', 'e'],
      ['f', 'g', 'h'],
    ]);
    expect((await get(['i'], '192.0.2.2')).status).toBe(200);
  });

  it('suppress_response_codes: 200 with code 429 in the body', async () => {
    const { get } = daiaApp(1);
    await get(['a'], '192.0.2.1');
    const limited = await get(['b'], '192.0.2.1', '&suppress_response_codes=1');
    expect(limited.status).toBe(200);
    expect(await json(limited)).toMatchObject({ error: 'service_unavailable', code: 429 });
  });

  it('counts only the ids a request is answered for: the rest goes into Link rel="next", repeated ids count once', async () => {
    const { get, asked } = daiaApp(10, 5);
    const first = await get(['a', 'b', 'a', 'c', 'd', 'e', 'f', 'g'], '192.0.2.1');
    expect(first.status).toBe(200);
    expect(first.headers.get('link')).toMatch(/rel="next"/);
    expect(asked).toEqual([['a', 'b', 'c', 'd', 'e']]);
    expect((await get(['v', 'w', 'x', 'y', 'z'], '192.0.2.1')).status).toBe(200);
    expect((await get(['q'], '192.0.2.1')).status).toBe(429);
  });

  it('never answers more ids per request than a minute allows, so a request always fits a fresh window', async () => {
    const { get, asked } = daiaApp(3, 5);
    const response = await get(['a', 'b', 'c', 'd'], '192.0.2.1');
    expect(response.status).toBe(200);
    expect(asked).toEqual([['a', 'b', 'c']]);
    expect(new URL(/^<([^>]+)>/.exec(response.headers.get('link') ?? '')![1]!).searchParams.get('id')).toBe('d');
  });

  it('does not count requests refused before the lookup (no format, an access token)', async () => {
    const { get } = daiaApp(1);
    const noFormat = await get(['a'], '192.0.2.1', '', 'xml');
    expect(noFormat.status).toBe(422);
    const withToken = await get(['a'], '192.0.2.1', '&access_token=x');
    expect(withToken.status).toBe(501);
    expect((await get(['a'], '192.0.2.1')).status).toBe(200);
  });
});
