import type { Registry } from 'prom-client';

/**
 * Counters and histograms registered in a prom-client Registry and rendered
 * exactly as its own Counter and Histogram, handed out per combination of
 * label values ("cells"), so the hot paths (HttpMetrics, Sip2Metrics) look a
 * cell up by index and add to it, instead of building label objects and
 * hashing them per observation. A series appears on the first observation of
 * its label values, not before.
 */

type LabelValues<L extends string> = Readonly<Record<L, string>>;

/** A counter for one combination of label values. */
export interface CounterCell {
  inc(by?: number): void;
}

/** A histogram for one combination of label values. */
export interface HistogramCell {
  observe(value: number): void;
}

export interface FamilyOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registry: Registry;
}

/**
 * The series of `labels` in `series` (keyed by the values in label order), made by `make` from a copy of the
 * labels on first use: the same one for the same values, as prom-client's labels() gives. Throws on a label the
 * family does not have.
 */
function seriesOf<L extends string, S>(
  series: Map<string, S>,
  family: string,
  labelNames: readonly L[],
  labels: LabelValues<L>,
  make: (labels: LabelValues<string>) => S,
): S {
  for (const name of Object.keys(labels))
    if (!labelNames.includes(name as L)) throw new Error(`${family} has no label ${name}`);
  const key = JSON.stringify(labelNames.map((name) => labels[name] ?? null));
  let found = series.get(key);
  if (found === undefined) {
    found = make({ ...labels });
    series.set(key, found);
  }
  return found;
}

/** One series of a CounterFamily; shown from its first increment on, as prom-client's Counter shows a series. */
class CounterSeries implements CounterCell {
  value = 0;
  #shown = false;
  constructor(
    readonly labels: LabelValues<string>,
    private readonly show: (series: CounterSeries) => void,
  ) {}
  inc(by = 1): void {
    if (!Number.isFinite(by)) throw new TypeError(`Value is not a valid number: ${by}`);
    if (by < 0) throw new Error('It is not possible to decrease a counter');
    if (!this.#shown) {
      this.#shown = true;
      this.show(this);
    }
    this.value += by;
  }
}

/**
 * A counter registered in a prom-client Registry, rendered exactly as
 * prom-client's Counter renders (one sample per series, in the order of their
 * first increments). A cell adds to its own series directly: prom-client's
 * Counter hashes and validates the label values on every increment, a cost
 * the CPU profile of B1 showed on every request (one HTTP request counted,
 * one per SIP2 message).
 */
export class CounterFamily<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'counter';
  readonly aggregator = 'sum';
  readonly #labelNames: readonly L[];
  /** Cells by their label values: the same one for the same values (as prom-client's labels() gives). */
  readonly #cells = new Map<string, CounterSeries>();
  /** The series incremented at least once, in the order of their first increment. */
  readonly #shown: CounterSeries[] = [];

  constructor(options: FamilyOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    this.#labelNames = options.labelNames;
    options.registry.registerMetric(this as never);
  }

  cell(labels: LabelValues<L>): CounterCell {
    return seriesOf(
      this.#cells,
      this.name,
      this.#labelNames,
      labels,
      (copy) => new CounterSeries(copy, (shown) => this.#shown.push(shown)),
    );
  }

  /** What prom-client's Registry asks each registered metric for when it renders /metrics (the shape of Counter.get()). */
  async get(): Promise<{
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: Array<{ value: number; labels: LabelValues<string> }>;
  }> {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: this.#shown.map((series) => ({ value: series.value, labels: series.labels })),
    };
  }
}

export interface HistogramFamilyOptions<L extends string> extends FamilyOptions<L> {
  /** Upper bounds of the buckets, ascending; +Inf is added. */
  buckets: readonly number[];
}

/** One series of a HistogramFamily: per-bucket counts (not cumulative), sum and count. */
class HistogramSeries implements HistogramCell {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(
    readonly labels: LabelValues<string>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }
  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.counts[i]! += 1;
        break;
      }
    }
    this.sum += value;
    this.count += 1;
  }
}

/** A sample as prom-client's Registry renders it (the shape its own Histogram hands over). */
interface Sample {
  value: number;
  metricName: string;
  labels: Record<string, string | number>;
  sharedLabels: LabelValues<string>;
}

/**
 * A histogram registered in a prom-client Registry, rendered exactly as
 * prom-client's Histogram renders (cumulative `_bucket` with `le`, `+Inf`,
 * `_sum`, `_count` per series). A cell adds to its own bucket directly:
 * prom-client's Histogram validates and hashes the label values on every
 * observation, a cost the CPU profile of B1 showed on every request
 * (bench/README.md, CPU profile).
 */
export class HistogramFamily<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #labelNames: readonly L[];
  readonly #bounds: readonly number[];
  /** By their label values, in creation order; a series is shown from its first observation on. */
  readonly #series = new Map<string, HistogramSeries>();

  constructor(options: HistogramFamilyOptions<L>) {
    const bounds = [...options.buckets];
    if (bounds.some((bound, i) => !Number.isFinite(bound) || (i > 0 && bound <= bounds[i - 1]!)))
      throw new Error(`buckets of ${options.name} must be finite and ascending`);
    this.name = options.name;
    this.help = options.help;
    this.#labelNames = options.labelNames;
    this.#bounds = bounds;
    options.registry.registerMetric(this as never);
  }

  /** The series of these label values, the same one for the same values (as prom-client's labels() gives). */
  cell(labels: LabelValues<L>): HistogramCell {
    return seriesOf(
      this.#series,
      this.name,
      this.#labelNames,
      labels,
      (copy) => new HistogramSeries(copy, this.#bounds),
    );
  }

  /** What prom-client's Registry asks each registered metric for when it renders /metrics. */
  async getForPromString(): Promise<{
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: Sample[];
  }> {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const series of this.#series.values()) {
      if (series.count === 0) continue;
      const shared = series.labels;
      let cumulative = 0;
      this.#bounds.forEach((bound, i) => {
        cumulative += series.counts[i]!;
        values.push({ value: cumulative, metricName: bucket, labels: { le: bound }, sharedLabels: shared });
      });
      values.push(
        { value: series.count, metricName: bucket, labels: { le: '+Inf' }, sharedLabels: shared },
        { value: series.sum, metricName: `${this.name}_sum`, labels: {}, sharedLabels: shared },
        { value: series.count, metricName: `${this.name}_count`, labels: {}, sharedLabels: shared },
      );
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** The same samples with the series' labels merged in (prom-client's Metric.get(), used by registry.getMetricsAsJSON()). */
  async get(): Promise<{
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: Array<Omit<Sample, 'sharedLabels'>>;
  }> {
    const data = await this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ sharedLabels, labels, ...sample }) => ({
        ...sample,
        labels: { ...labels, ...sharedLabels },
      })),
    };
  }
}
