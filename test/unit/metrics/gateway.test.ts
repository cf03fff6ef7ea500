/**
 * GatewayMetrics: the registry's output given fake sources, the HTTP and
 * SIP2 recorders, and that each gateway has a registry of its own.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GatewayMetrics, type MetricsSources } from '../../../src/metrics/gateway.js';
import { ROUTE_LABELS } from '../../../src/metrics/routes.js';
import { parseExposition, samplesOf, single } from './exposition.js';

const SOURCES: Required<MetricsSources> = {
  pool: () => ({
    connections: 3,
    busy: 2,
    waiting: 7,
    circuit: 'closed',
    connectFailures: 4,
    sessionLimit: 2,
    keepaliveIntervalMs: 2500,
  }),
  logins: () => ({ failed: 5, lockouts: 2, refused: 9, busy: 1 }),
  sessions: () => 42,
  stateUp: () => true,
  itemCache: () => ({ hits: 11, misses: 6, entries: 4 }),
  accountWindow: () => ({ hits: 13, misses: 8, entries: 5 }),
  maintenance: () => true,
  recordLookupFailures: () => 3,
};

async function scrape(metrics: GatewayMetrics) {
  return parseExposition(await metrics.scrape());
}

describe('GatewayMetrics', () => {
  it('reads pool, logins, sessions and item cache from their sources at scrape time, with the declared types', async () => {
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    metrics.watch(SOURCES);
    const text = await scrape(metrics);
    const expected: Array<[string, Record<string, string>, number, string]> = [
      ['paia_sip2_connections', {}, 3, 'gauge'],
      ['paia_sip2_connections_busy', {}, 2, 'gauge'],
      ['paia_sip2_requests_waiting', {}, 7, 'gauge'],
      ['paia_sip2_circuit_state', {}, 0, 'gauge'],
      ['paia_sip2_session_limit', {}, 2, 'gauge'],
      ['paia_sip2_keepalive_interval_seconds', {}, 2.5, 'gauge'],
      ['paia_sip2_connect_failures_total', {}, 4, 'counter'],
      ['paia_auth_logins_failed_total', {}, 5, 'counter'],
      ['paia_auth_lockouts_total', {}, 2, 'counter'],
      ['paia_auth_logins_refused_total', { reason: 'locked' }, 9, 'counter'],
      ['paia_auth_logins_refused_total', { reason: 'busy' }, 1, 'counter'],
      ['paia_auth_sessions', {}, 42, 'gauge'],
      ['paia_item_cache_hits_total', {}, 11, 'counter'],
      ['paia_item_cache_misses_total', {}, 6, 'counter'],
      ['paia_item_cache_entries', {}, 4, 'gauge'],
      ['paia_account_window_hits_total', {}, 13, 'counter'],
      ['paia_account_window_misses_total', {}, 8, 'counter'],
      ['paia_account_window_entries', {}, 5, 'gauge'],
      ['paia_sip2_maintenance', {}, 1, 'gauge'],
      ['paia_daia_record_lookup_failures_total', {}, 3, 'counter'],
    ];
    for (const [name, labels, value, type] of expected) {
      expect(single(text, name, labels), name).toBe(value);
      expect(text.types.get(name), name).toBe(type);
    }
    expect(text.types.get('paia_http_requests_total')).toBe('counter');
    expect(text.types.get('paia_http_request_duration_seconds')).toBe('histogram');
    expect(text.types.get('paia_sip2_round_trips_total')).toBe('counter');
    expect(text.types.get('paia_sip2_round_trip_duration_seconds')).toBe('histogram');
    // Every metric of ours is prefixed and documented.
    for (const [name, help] of text.help) {
      expect(name).toMatch(/^paia_/);
      expect(help.length).toBeGreaterThan(10);
    }
  });

  it('says which version runs on which Node.js in paia_build_info (always 1), and 0 for maintenance without a source', async () => {
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    const text = await scrape(metrics);
    const version = (
      JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
        version: string;
      }
    ).version;
    expect(single(text, 'paia_build_info', { version, node: process.versions.node })).toBe(1);
    expect(text.types.get('paia_build_info')).toBe('gauge');
    expect(single(text, 'paia_sip2_maintenance')).toBe(0);
  });

  it('reads the sources afresh on every scrape (a gauge follows, a counter reports the current total)', async () => {
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    let sessions = 1;
    let failed = 1;
    metrics.watch({ sessions: () => sessions, logins: () => ({ failed, lockouts: 0, refused: 0, busy: 0 }) });
    expect(single(await scrape(metrics), 'paia_auth_sessions')).toBe(1);
    sessions = 0;
    failed = 3;
    const text = await scrape(metrics);
    expect(single(text, 'paia_auth_sessions')).toBe(0);
    expect(single(text, 'paia_auth_logins_failed_total')).toBe(3);
  });

  it('maps the circuit state to 0 closed, 1 half-open, 2 open', async () => {
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    for (const [circuit, value] of [
      ['closed', 0],
      ['half-open', 1],
      ['open', 2],
    ] as const) {
      metrics.watch({
        pool: () => ({
          connections: 0,
          busy: 0,
          waiting: 0,
          circuit,
          connectFailures: 0,
          sessionLimit: null,
          keepaliveIntervalMs: 0,
        }),
      });
      expect(single(await scrape(metrics), 'paia_sip2_circuit_state'), circuit).toBe(value);
    }
  });

  it('reports 0 without sources and for a switched-off item cache and account window', async () => {
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    metrics.watch({ itemCache: () => null, accountWindow: () => null });
    const text = await scrape(metrics);
    for (const name of [
      'paia_sip2_connections',
      'paia_sip2_circuit_state',
      'paia_auth_sessions',
      'paia_auth_logins_failed_total',
      'paia_item_cache_hits_total',
      'paia_item_cache_misses_total',
      'paia_item_cache_entries',
      'paia_account_window_hits_total',
      'paia_account_window_misses_total',
      'paia_account_window_entries',
    ]) {
      expect(single(text, name), name).toBe(0);
    }
  });

  it('rejects the scrape when a source throws (the handler turns that into 503)', async () => {
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    metrics.watch({
      sessions: () => {
        throw new Error('store gone');
      },
    });
    await expect(metrics.scrape()).rejects.toThrow(/store gone/);
  });

  it('counts HTTP requests by method, route and status, and times them by method and route', async () => {
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    metrics.http.record('GET', 'patron', 200, 0.004);
    metrics.http.record('GET', 'patron', 200, 0.02);
    metrics.http.record('GET', 'patron', 401, 0.0005);
    metrics.http.record('POST', 'login', 403, 3);
    const text = await scrape(metrics);
    expect(single(text, 'paia_http_requests_total', { method: 'GET', route: 'patron', status: '200' })).toBe(2);
    expect(single(text, 'paia_http_requests_total', { method: 'GET', route: 'patron', status: '401' })).toBe(1);
    expect(single(text, 'paia_http_requests_total', { method: 'POST', route: 'login', status: '403' })).toBe(1);
    expect(samplesOf(text, 'paia_http_requests_total')).toHaveLength(3);
    expect(single(text, 'paia_http_request_duration_seconds_count', { method: 'GET', route: 'patron' })).toBe(3);
    expect(single(text, 'paia_http_request_duration_seconds_sum', { method: 'GET', route: 'patron' })).toBeCloseTo(
      0.0245,
      10,
    );
    expect(
      single(text, 'paia_http_request_duration_seconds_bucket', { method: 'GET', route: 'patron', le: '0.001' }),
    ).toBe(1);
    expect(
      single(text, 'paia_http_request_duration_seconds_bucket', { method: 'GET', route: 'patron', le: '0.005' }),
    ).toBe(2);
    expect(
      single(text, 'paia_http_request_duration_seconds_bucket', { method: 'POST', route: 'login', le: '2.5' }),
    ).toBe(0);
    expect(single(text, 'paia_http_request_duration_seconds_bucket', { method: 'POST', route: 'login', le: '5' })).toBe(
      1,
    );
    // Buckets from 1 ms to 10 s.
    const bounds = samplesOf(text, 'paia_http_request_duration_seconds_bucket', { method: 'POST', route: 'login' }).map(
      (s) => s.labels.le,
    );
    expect(bounds[0]).toBe('0.001');
    expect(bounds.at(-2)).toBe('10');
    expect(bounds.at(-1)).toBe('+Inf');
  });

  it('keeps every HTTP label bounded: unknown methods, routes and odd statuses become other', async () => {
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    metrics.http.record('BREW', 'patron', 405, 0.001);
    metrics.http.record('get', 'patron', 405, 0.001);
    metrics.http.record('GET', '/core/alice' as never, 200, 0.001);
    metrics.http.record('GET', 'other', 1000, 0.001);
    const text = await scrape(metrics);
    expect(single(text, 'paia_http_requests_total', { method: 'other', route: 'patron', status: '405' })).toBe(2);
    expect(single(text, 'paia_http_requests_total', { method: 'GET', route: 'other', status: '200' })).toBe(1);
    expect(single(text, 'paia_http_requests_total', { method: 'GET', route: 'other', status: 'other' })).toBe(1);
    for (const sample of samplesOf(text, 'paia_http_requests_total'))
      expect(ROUTE_LABELS).toContain(sample.labels.route);
    expect(await metrics.scrape()).not.toContain('alice');
  });

  it('counts SIP2 round trips by message, code and outcome, and times them by message', async () => {
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    const observe = metrics.sip2.roundTrip;
    observe({ code: '63', seconds: 0.002, outcome: 'ok' });
    observe({ code: '63', seconds: 0.003, outcome: 'ok' });
    observe({ code: '63', seconds: 5, outcome: 'ILS_TIMEOUT' });
    observe({ code: '93', seconds: 0.001, outcome: 'ok' });
    observe({ code: '35', seconds: 0.001, outcome: 'ILS_UNAVAILABLE' });
    observe({ code: 'XX' as never, seconds: 0.001, outcome: 'WEIRD' as never });
    const text = await scrape(metrics);
    const trips = (labels: Record<string, string>) => single(text, 'paia_sip2_round_trips_total', labels);
    expect(trips({ message: 'patron_information', code: '63', outcome: 'ok' })).toBe(2);
    expect(trips({ message: 'patron_information', code: '63', outcome: 'ILS_TIMEOUT' })).toBe(1);
    expect(trips({ message: 'login', code: '93', outcome: 'ok' })).toBe(1);
    expect(trips({ message: 'end_patron_session', code: '35', outcome: 'ILS_UNAVAILABLE' })).toBe(1);
    expect(trips({ message: 'other', code: 'other', outcome: 'other' })).toBe(1);
    expect(single(text, 'paia_sip2_round_trip_duration_seconds_count', { code: '63' })).toBe(3);
    expect(single(text, 'paia_sip2_round_trip_duration_seconds_bucket', { code: '63', le: '0.0025' })).toBe(1);
    expect(single(text, 'paia_sip2_round_trip_duration_seconds_bucket', { code: '63', le: '0.005' })).toBe(2);
    expect(single(text, 'paia_sip2_round_trip_duration_seconds_bucket', { code: '63', le: '5' })).toBe(3);
  });

  it('gives each instance a registry of its own, so two gateways in one process do not collide', async () => {
    const a = new GatewayMetrics();
    const b = new GatewayMetrics();
    expect(a.registry).not.toBe(b.registry);
    a.http.record('GET', 'patron', 200, 0.001);
    a.watch({ sessions: () => 5 });
    const textB = await scrape(b);
    expect(samplesOf(textB, 'paia_http_requests_total')).toHaveLength(0);
    expect(single(textB, 'paia_auth_sessions')).toBe(0);
    expect(single(await scrape(a), 'paia_auth_sessions')).toBe(5);
  });

  it("includes prom-client's default process metrics unless switched off, and names its content type", async () => {
    const withDefaults = await scrape(new GatewayMetrics());
    for (const name of [
      'process_resident_memory_bytes',
      'process_cpu_seconds_total',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(withDefaults.types.has(name), name).toBe(true);
    }
    expect(single(withDefaults, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    const without = new GatewayMetrics({ defaultMetrics: false });
    expect([...(await scrape(without)).types.keys()].every((name) => name.startsWith('paia_'))).toBe(true);
    expect(without.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
  });
});
