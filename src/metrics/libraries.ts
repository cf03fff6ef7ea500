import { AggregatorRegistry, collectDefaultMetrics, Registry } from 'prom-client';
import { type GatewayMetrics, HttpMetrics } from './gateway.js';
import type { Share } from './group.js';

/**
 * The metrics of several libraries behind one gateway (issue 29) in one
 * scrape: each library has its own GatewayMetrics (built without the
 * process's metrics), and every series of it gets a `library` label with the
 * library's id, bounded by the configured libraries; the process's own
 * metrics (memory, CPU, event loop) are here, once, without one. A gauge the
 * same in every library (aggregator "first": paia_build_info) stays one
 * series without the label. The shares are merged by prom-client's
 * AggregatorRegistry.aggregate(), which keeps series with different labels
 * apart, as group.ts does for workers.
 */

/** The label that tells the libraries' series apart. */
const LIBRARY_LABEL = 'library';

export class LibrariesMetrics {
  readonly #process = new Registry();
  /** The requests no library took (an unknown library): counted without a library label. */
  readonly #root = new Registry();
  readonly http = new HttpMetrics(this.#root);

  /** `libraries`: those served now (a reload adds and removes some), asked on every scrape. */
  constructor(private readonly libraries: () => readonly { id: string; metrics: GatewayMetrics }[]) {
    collectDefaultMetrics({ register: this.#process });
  }

  /** The exposition text of every library and the process; rejects when a collector throws. */
  async scrape(): Promise<string> {
    const process = (await this.#process.getMetricsAsJSON()) as unknown as Share;
    // One share of the process: its value as it is (prom-client's own choice, such as omitting the start time, is for several).
    for (const metric of process) metric.aggregator = 'first';
    const shares = await Promise.all(
      this.libraries().map(async ({ id, metrics }) =>
        labelled((await metrics.registry.getMetricsAsJSON()) as unknown as Share, id),
      ),
    );
    const root = (await this.#root.getMetricsAsJSON()) as unknown as Share;
    return AggregatorRegistry.aggregate([process, root, ...shares]).metrics();
  }

  /** The Content-Type of scrape()'s text. */
  get contentType(): string {
    return this.#process.contentType;
  }
}

/**
 * A library's share with its id on every series, but those of the metrics the same in every library. The
 * values are copied: prom-client may hand out its own live entries, which must not keep the label.
 */
function labelled(share: Share, id: string): Share {
  return share.map((metric) =>
    metric.aggregator === 'first'
      ? metric
      : {
          ...metric,
          values: metric.values.map((value) => ({ ...value, labels: { ...value.labels, [LIBRARY_LABEL]: id } })),
        },
  );
}
