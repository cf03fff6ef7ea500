/** Counter and histogram cells: each cell feeds exactly its own series of the registry it was made for. */
import { Registry } from 'prom-client';
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
});
