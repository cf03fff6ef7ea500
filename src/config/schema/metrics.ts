import { clientList, flag, section } from './validators.js';

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
});
