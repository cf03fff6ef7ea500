import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * prom-client's Counter and Histogram, handed out per combination of label
 * values ("cells"), so the hot paths (HttpMetrics, Sip2Metrics) look a cell
 * up by index instead of building label objects per observation. A series
 * appears on the first observation of its label values, not before.
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

export class CounterFamily<L extends string> {
  readonly #counter: Counter<L>;

  constructor(options: FamilyOptions<L>) {
    this.#counter = new Counter({
      name: options.name,
      help: options.help,
      labelNames: options.labelNames,
      registers: [options.registry],
    });
  }

  cell(labels: LabelValues<L>): CounterCell {
    return this.#counter.labels({ ...labels });
  }
}

export interface HistogramFamilyOptions<L extends string> extends FamilyOptions<L> {
  /** Upper bounds of the buckets, ascending; +Inf is added. */
  buckets: readonly number[];
}

export class HistogramFamily<L extends string> {
  readonly #histogram: Histogram<L>;

  constructor(options: HistogramFamilyOptions<L>) {
    this.#histogram = new Histogram({
      name: options.name,
      help: options.help,
      labelNames: options.labelNames,
      buckets: [...options.buckets],
      registers: [options.registry],
    });
  }

  cell(labels: LabelValues<L>): HistogramCell {
    return this.#histogram.labels({ ...labels });
  }
}
