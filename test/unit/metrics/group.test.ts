/**
 * The metrics of `serve --workers N` in one scrape (src/metrics/group.ts):
 * two GatewayMetrics stand for two workers; their shares are merged as a
 * worker merges what the primary gathered. The IPC round trips themselves
 * are in test/unit/gateway/group-metrics.test.ts and, with real processes,
 * test/integration/workers-metrics.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { GatewayMetrics, type MetricsSources } from '../../../src/metrics/gateway.js';
import { addedUp, lastingPart, mergeShares, type Share } from '../../../src/metrics/group.js';
import { parseExposition, samplesOf, single, sumOf } from './exposition.js';

const pool = (connections: number, circuit: 'closed' | 'open', sessionLimit: number | null): MetricsSources => ({
  pool: () => ({
    connections,
    busy: 1,
    waiting: 2,
    circuit,
    connectFailures: 3,
    sessionLimit,
    keepaliveIntervalMs: 30_000,
  }),
  maintenance: () => circuit === 'open',
});

/** Two workers' metrics, each having answered some requests, and their shares as the group gathers them. */
async function twoWorkers(): Promise<Share[]> {
  const workers = [new GatewayMetrics(), new GatewayMetrics()];
  workers[0]!.watch(pool(2, 'closed', null));
  workers[1]!.watch(pool(3, 'open', 4));
  for (let i = 0; i < 3; i += 1) workers[0]!.http.record('GET', 'patron', 200, 0.01);
  for (let i = 0; i < 2; i += 1) workers[1]!.http.record('GET', 'patron', 200, 0.02);
  workers[1]!.http.record('POST', 'login', 403, 0.5);
  return Promise.all(
    workers.map((metrics, index) => {
      metrics.joinGroup(index + 1, () => Promise.reject(new Error('not asked here')));
      return metrics.share();
    }),
  );
}

const counterOf = (share: Share) => share.find((metric) => metric.name === 'paia_sip2_connect_failures_total')!;

describe('the metrics of a process group', () => {
  it('sums counters, histograms and the gauges whose sum is the gateway’s', async () => {
    const merged = parseExposition(await mergeShares(await twoWorkers(), { expected: 2, scraped: 2 }));
    expect(single(merged, 'paia_http_requests_total', { method: 'GET', route: 'patron', status: '200' })).toBe(5);
    expect(single(merged, 'paia_http_requests_total', { method: 'POST', route: 'login', status: '403' })).toBe(1);
    expect(single(merged, 'paia_http_request_duration_seconds_count', { method: 'GET', route: 'patron' })).toBe(5);
    expect(single(merged, 'paia_http_request_duration_seconds_bucket', { route: 'patron', le: '0.01' })).toBe(3);
    expect(single(merged, 'paia_sip2_connect_failures_total')).toBe(6);
    expect(samplesOf(merged, 'paia_sip2_connections')).toEqual([
      { name: 'paia_sip2_connections', labels: {}, value: 5 },
    ]);
    expect(single(merged, 'paia_sip2_requests_waiting')).toBe(4);
    // On in any worker is on.
    expect(single(merged, 'paia_sip2_maintenance')).toBe(1);
    expect(samplesOf(merged, 'paia_build_info')).toHaveLength(1);
    expect(samplesOf(merged, 'nodejs_version_info')).toHaveLength(1);
    expect(single(merged, 'paia_workers_expected')).toBe(2);
    expect(single(merged, 'paia_workers_scraped')).toBe(2);
  });

  it("keeps each worker's own facts apart with a worker label: circuit, learned session limit, store, process gauges", async () => {
    const merged = parseExposition(await mergeShares(await twoWorkers(), { expected: 2, scraped: 2 }));
    expect(single(merged, 'paia_sip2_circuit_state', { worker: '1' })).toBe(0);
    expect(single(merged, 'paia_sip2_circuit_state', { worker: '2' })).toBe(2);
    expect(single(merged, 'paia_sip2_session_limit', { worker: '2' })).toBe(4);
    expect(samplesOf(merged, 'paia_state_store_up')).toHaveLength(2);
    // prom-client would omit the start time and average the lag; per worker they say which worker is which.
    for (const name of ['process_start_time_seconds', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      expect(samplesOf(merged, name).map((sample) => sample.labels.worker)).toEqual(['1', '2']);
    }
  });

  it("a silent worker's last share stands in with its counters and histograms only", async () => {
    const [first, second] = await twoWorkers();
    const merged = parseExposition(await mergeShares([first!, lastingPart(second!)], { expected: 2, scraped: 1 }));
    expect(sumOf(merged, 'paia_http_requests_total', { route: 'patron' })).toBe(5);
    expect(single(merged, 'paia_sip2_connections')).toBe(2);
    expect(samplesOf(merged, 'paia_sip2_circuit_state').map((sample) => sample.labels.worker)).toEqual(['1']);
    expect(single(merged, 'paia_workers_scraped')).toBe(1);
  });

  it('the workers that exited add up, series by series, into one share of counters and histograms', async () => {
    const [first, second] = await twoWorkers();
    const part = lastingPart(second!);
    const unchanged = JSON.stringify(part);
    // The same worker retired twice: two lives of it, each having counted as much.
    const retired = addedUp(addedUp([], part), part);
    expect(JSON.stringify(part)).toBe(unchanged);
    expect(retired.map((metric) => metric.type)).not.toContain('gauge');
    const merged = parseExposition(await mergeShares([first!, retired], { expected: 2, scraped: 1 }));
    expect(single(merged, 'paia_http_requests_total', { method: 'GET', route: 'patron', status: '200' })).toBe(7);
    expect(single(merged, 'paia_http_requests_total', { method: 'POST', route: 'login', status: '403' })).toBe(2);
    expect(single(merged, 'paia_http_request_duration_seconds_count', { method: 'GET', route: 'patron' })).toBe(7);
    expect(single(merged, 'paia_http_request_duration_seconds_bucket', { route: 'patron', le: '0.01' })).toBe(3);
    expect(single(merged, 'paia_http_request_duration_seconds_bucket', { route: 'patron', le: '+Inf' })).toBe(7);
    expect(single(merged, 'paia_sip2_connect_failures_total')).toBe(9);
    // A series only one side has is taken as it is.
    expect(addedUp([], [counterOf(first!)])).toEqual([counterOf(first!)]);
  });

  it('a scrape in a group answers for the group; outside one it is the registry’s own text, without worker labels', async () => {
    const alone = new GatewayMetrics({ defaultMetrics: false });
    alone.watch(pool(2, 'closed', null));
    const own = await alone.scrape();
    expect(own).toBe(await alone.registry.metrics());
    expect(own).not.toContain('worker=');
    expect(own).not.toContain('paia_workers_');
    await expect(alone.share()).rejects.toThrow('outside a process group');

    const shares = await twoWorkers();
    const member = new GatewayMetrics({ defaultMetrics: false });
    member.joinGroup(1, async () => ({ shares, reach: { expected: 3, scraped: 2 } }));
    const group = parseExposition(await member.scrape());
    expect(single(group, 'paia_sip2_connections')).toBe(5);
    expect(single(group, 'paia_workers_expected')).toBe(3);
  });
});
