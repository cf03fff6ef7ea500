import { clientList, flag, milliseconds, section } from './validators.js';

/** metrics: Prometheus metrics on /metrics. */

export const metricsSection = section({
  /** Serve Prometheus metrics on /metrics (outside the PAIA base paths). */
  enabled: flag().default(true),
  /**
   * Clients that may read /metrics: IP addresses and CIDR blocks (behind
   * http.trustedProxy, the last X-Forwarded-For hop); others get 403.
   * [] = any client. In the environment: comma-separated.
   */
  allowedClients: clientList().default(['127.0.0.1', '::1']),
  /**
   * With http.workers above 1, a scrape answers for every worker: how long
   * it waits for each worker's metrics. One that answers later (slow,
   * stopped) is left out, and paia_workers_scraped says so; a working
   * worker answers within milliseconds. Keep it well below Prometheus's
   * scrape_timeout (10 s by default).
   */
  workerTimeoutMs: milliseconds(50, 30_000, 1000).default(1000),
});
