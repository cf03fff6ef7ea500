import { type Aggregator, AggregatorRegistry, Gauge, type Registry } from 'prom-client';

/**
 * The metrics of a process group (`serve --workers N`) in one scrape: every
 * worker sends its share (its registry's getMetricsAsJSON(), the values
 * prom-client's own cluster aggregation exchanges), and the shares are merged
 * by prom-client's AggregatorRegistry.aggregate(), each metric by its
 * `aggregator`: counters and histograms summed, each gauge as its definition
 * says (GatewayMetrics). A gauge whose sum means nothing (a process's start
 * time, a pool's learned session limit) is per worker: its series carry a
 * `worker` label, so the merge keeps one series per worker.
 *
 * prom-client's AggregatorRegistry.clusterMetrics() is not used: it asks
 * node:cluster's workers itself and fails the whole scrape when one does not
 * answer within 5 s, where a slow or stopped worker must only be left out;
 * and here a worker, not the primary, answers the scrape.
 */

/** How the values of one gauge from several workers become one answer. */
export type Across =
  /** Added up: the group's total (open SIP2 sessions, requests waiting). */
  | 'sum'
  /** One series per worker, with a `worker` label (a process's own fact). */
  | 'worker'
  /** The same in every worker (the version): the first. */
  | 'first'
  /** On in any worker is on. */
  | 'max';

/** prom-client's aggregator for `across`; 'worker' sums series that the `worker` label keeps apart. */
export const aggregatorOf = (across: Across): Aggregator => (across === 'worker' ? 'sum' : across);

/** The label that tells the workers' series of a per-worker gauge apart. */
const WORKER_LABEL = 'worker';

/** One metric of a share, as getMetricsAsJSON() gives it and the IPC channel carries it (JSON). */
export interface SharedMetric {
  name: string;
  help: string;
  /** counter, gauge, histogram, summary. */
  type: string;
  aggregator: Aggregator;
  values: { value: number; labels: Record<string, string | number>; metricName?: string }[];
}

/** One worker's metrics. */
export type Share = SharedMetric[];

/** `registry`'s metrics as worker `worker` shares them: the series of the metrics named in `perWorker` labelled with it. */
export async function shareOf(registry: Registry, worker: number, perWorker: ReadonlySet<string>): Promise<Share> {
  const metrics = (await registry.getMetricsAsJSON()) as unknown as Share;
  for (const metric of metrics) {
    if (!perWorker.has(metric.name)) continue;
    // prom-client's own choice for a default metric (omit the start time, average the event loop lag) gives way.
    metric.aggregator = 'sum';
    for (const value of metric.values) value.labels = { ...value.labels, [WORKER_LABEL]: String(worker) };
  }
  return metrics;
}

/**
 * What stands in for a worker that did not answer in time, from its last
 * share: its counters and histograms, which only grow while it lives (left
 * out, the group's sums would fall and rise again, and Prometheus would take
 * each fall for a restart); never its gauges, which would be stale.
 */
export function lastingPart(share: Share): Share {
  return share.filter((metric) => metric.type === 'counter' || metric.type === 'histogram');
}

/**
 * Two lasting parts added up, series by series: the counters and histograms
 * of the workers that have exited, kept by the primary so that the group's
 * sums do not fall when one dies or is replaced (its replacement starts from
 * zero; Prometheus would take the fall for a reset and count everything
 * left as new). Synchronous, unlike a registry's getMetricsAsJSON(), since
 * the primary folds a worker in as it exits.
 */
export function addedUp(kept: Share, share: Share): Share {
  const copy = (metric: SharedMetric): SharedMetric => ({
    ...metric,
    values: metric.values.map((value) => ({ ...value })),
  });
  const byName = new Map(kept.map((metric) => [metric.name, copy(metric)]));
  for (const metric of share) {
    const into = byName.get(metric.name);
    if (into === undefined) {
      byName.set(metric.name, copy(metric));
      continue;
    }
    const series = new Map(into.values.map((value) => [seriesKey(value), value]));
    for (const value of metric.values) {
      const found = series.get(seriesKey(value));
      if (found === undefined) into.values.push({ ...value });
      else found.value += value.value;
    }
  }
  return [...byName.values()];
}

/** One series of a metric: its sample's name (a histogram's _bucket, _sum, _count) and labels, in any order. */
const seriesKey = ({ metricName, labels }: SharedMetric['values'][number]): string =>
  JSON.stringify([metricName ?? '', Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);

/** How many workers the scrape reached. */
export interface Reach {
  /** The workers there should be (http.workers). */
  expected: number;
  /** Those whose share this answer holds; the others were slow, stopped or being replaced. */
  scraped: number;
}

/** The metrics only a group's scrape has, beside its workers' own: what each says, and its value. */
const REACH_GAUGES: Readonly<Record<string, { help: string; value: (reach: Reach) => number }>> = {
  paia_workers_expected: {
    help: 'Worker processes of this gateway (http.workers); only with workers',
    value: (reach) => reach.expected,
  },
  paia_workers_scraped: {
    help: 'Workers whose metrics this scrape holds; fewer than paia_workers_expected when one was slow, stopped or being replaced (its gauges are missing; its counters and histograms are those of its last answer)',
    value: (reach) => reach.scraped,
  },
};

/** @internal The names of the metrics only a group's scrape has (the docs' drift test holds the metrics table to them). */
export const GROUP_METRIC_NAMES: readonly string[] = Object.keys(REACH_GAUGES);

/** The exposition text of the group: the shares merged, and how many workers answered. */
export function mergeShares(shares: readonly Share[], reach: Reach): Promise<string> {
  const registry = AggregatorRegistry.aggregate(shares as Share[]);
  for (const [name, { help, value }] of Object.entries(REACH_GAUGES)) {
    new Gauge({ name, help, registers: [registry] }).set(value(reach));
  }
  return registry.metrics();
}
