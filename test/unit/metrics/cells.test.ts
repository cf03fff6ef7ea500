/** Counter and histogram cells: each cell feeds exactly its own series of the registry it was made for. */
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CounterFamily, HistogramFamily } from '../../../src/metrics/cells.js';
import { parseExposition, single } from './exposition.js';

const BUCKETS = [0.001, 0.01, 0.1, 1, 10];

describe('HistogramFamily', () => {
  it('counts each cell into its own buckets, sum and count', async () => {
    const registry = new Registry();
    const family = new HistogramFamily({
      registry,
      name: 'x_seconds',
      help: 'x',
      labelNames: ['route'],
      buckets: BUCKETS,
    });
    const a = family.cell({ route: 'a' });
    for (const value of [0, 0.001, 0.0011, 0.5, 10, 11]) a.observe(value);
    family.cell({ route: 'b' }).observe(0.02);
    const text = parseExposition(await registry.metrics());
    expect(text.types.get('x_seconds')).toBe('histogram');
    expect(single(text, 'x_seconds_bucket', { route: 'a', le: '0.001' })).toBe(2);
    expect(single(text, 'x_seconds_bucket', { route: 'a', le: '1' })).toBe(4);
    expect(single(text, 'x_seconds_bucket', { route: 'a', le: '+Inf' })).toBe(6);
    expect(single(text, 'x_seconds_sum', { route: 'a' })).toBeCloseTo(21.5021, 10);
    expect(single(text, 'x_seconds_count', { route: 'b' })).toBe(1);
  });

  it("renders /metrics exactly as prom-client's own Histogram does for the same observations", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const family = new HistogramFamily({
      registry: ours,
      name: 'h_seconds',
      help: 'h',
      labelNames: ['m', 'r'],
      buckets: BUCKETS,
    });
    const reference = new Histogram({
      name: 'h_seconds',
      help: 'h',
      labelNames: ['m', 'r'],
      buckets: BUCKETS,
      registers: [theirs],
    });
    const observations: Array<[{ m: string; r: string }, number]> = [
      [{ m: 'GET', r: 'patron' }, 0.0004],
      [{ m: 'GET', r: 'patron' }, 0.01],
      [{ m: 'POST', r: 'login' }, 2],
      [{ m: 'GET', r: 'patron' }, 99],
      [{ m: 'POST', r: 'login' }, 0.1],
    ];
    const cells = new Map<string, ReturnType<typeof family.cell>>();
    for (const [labels, value] of observations) {
      const key = `${labels.m} ${labels.r}`;
      if (!cells.has(key)) cells.set(key, family.cell(labels));
      cells.get(key)!.observe(value);
      reference.observe(labels, value);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    const samples = async (registry: Registry) =>
      (await registry.getMetricsAsJSON()).flatMap((metric) =>
        metric.values.map((sample) => ({
          labels: sample.labels,
          value: sample.value,
          metricName: (sample as { metricName?: string }).metricName,
        })),
      );
    expect(await samples(ours)).toEqual(await samples(theirs));
  });

  it('hands out one series per set of label values: two cells of the same values feed one series', async () => {
    const registry = new Registry();
    const family = new HistogramFamily({
      registry,
      name: 'y_seconds',
      help: 'y',
      labelNames: ['message', 'code'],
      buckets: BUCKETS,
    });
    family.cell({ message: 'other', code: 'other' }).observe(0.5);
    family.cell({ code: 'other', message: 'other' }).observe(0.5);
    const text = parseExposition(await registry.metrics());
    expect(single(text, 'y_seconds_count', { message: 'other', code: 'other' })).toBe(2);
  });

  it('refuses a value that is not a finite number, as prom-client does', () => {
    const family = new HistogramFamily({
      registry: new Registry(),
      name: 'n_seconds',
      help: 'n',
      labelNames: ['a'],
      buckets: BUCKETS,
    });
    expect(() => family.cell({ a: '1' }).observe(Number.NaN)).toThrow(TypeError);
  });

  it('shows no series before the first observation', async () => {
    const registry = new Registry();
    new HistogramFamily({ registry, name: 'z_seconds', help: 'z', labelNames: ['a'], buckets: BUCKETS }).cell({
      a: '1',
    });
    expect(parseExposition(await registry.metrics()).samples).toEqual([]);
  });
});

describe('CounterFamily', () => {
  it('adds up per cell, across scrapes', async () => {
    const registry = new Registry();
    const family = new CounterFamily({ registry, name: 'c_total', help: 'c', labelNames: ['status'] });
    const ok = family.cell({ status: '200' });
    ok.inc();
    ok.inc(2);
    family.cell({ status: '404' }).inc();
    let text = parseExposition(await registry.metrics());
    expect(text.types.get('c_total')).toBe('counter');
    expect(single(text, 'c_total', { status: '200' })).toBe(3);
    expect(single(text, 'c_total', { status: '404' })).toBe(1);
    ok.inc();
    text = parseExposition(await registry.metrics());
    expect(single(text, 'c_total', { status: '200' })).toBe(4);
  });

  it("renders /metrics exactly as prom-client's own Counter does, a series from its first increment on", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const family = new CounterFamily({ registry: ours, name: 'r_total', help: 'r', labelNames: ['m', 'r', 's'] });
    const reference = new Counter({ name: 'r_total', help: 'r', labelNames: ['m', 'r', 's'], registers: [theirs] });
    // A cell made but never incremented (a state store operation without errors) shows no series, as with prom-client.
    family.cell({ m: 'GET', r: 'never', s: '500' });
    const increments: Array<[{ m: string; r: string; s: string }, number]> = [
      [{ m: 'POST', r: 'login', s: '200' }, 1],
      [{ m: 'GET', r: 'patron', s: '200' }, 1],
      [{ m: 'POST', r: 'login', s: '200' }, 2],
      [{ m: 'GET', r: 'patron', s: '404' }, 1],
    ];
    for (const [labels, by] of increments) {
      family.cell(labels).inc(by);
      reference.labels(labels).inc(by);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
  });
});
