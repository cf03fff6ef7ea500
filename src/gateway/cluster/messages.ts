import type { Config } from '../../config/index.js';
import type { Share } from '../../metrics/group.js';
import type { Sip2Target } from '../parts/sip2-options.js';

/**
 * What the primary and its workers say to each other over the node:cluster
 * IPC channel (JSON). Every message's type starts with "paia-sip2:", so that
 * nothing else on the channel is taken for one.
 */

/** Primary -> worker. */
export type ToWorker =
  /**
   * The answer to "hello": the validated configuration (the same for every
   * worker), where the primary listens (the gateway's own URL, which links
   * start with), in demo mode the primary's simulator, and the worker's
   * number (1..N, kept by its replacements) for the logs.
   */
  | { type: 'paia-sip2:start'; config: Config; url: string; sharedSimulator: Sip2Target | null; worker: number }
  /**
   * A client's connection, sent with its socket as the message's handle: the
   * primary accepted it and read nothing from it. The worker answers "took"
   * with the same id and serves it.
   */
  | { type: 'paia-sip2:connection'; id: number }
  /** The heartbeat: answer "pong" with the same beat (heartbeat.ts). */
  | { type: 'paia-sip2:ping'; beat: number }
  /** Drain and exit, as on a first SIGTERM; a second one is no second signal. */
  | { type: 'paia-sip2:stop' }
  /** Drop everything and exit now, as on a second signal. */
  | { type: 'paia-sip2:force'; reason: string }
  /** Re-read the TLS certificate and key, as on SIGHUP. */
  | { type: 'paia-sip2:reload-tls' }
  /** Another worker's scrape: answer "metrics-share" with the same gather number (group-metrics.ts). */
  | { type: 'paia-sip2:share-metrics'; gather: number }
  /** The answer to this worker's "scrape": the shares of the workers that answered in time, the last counters and histograms of those that did not, and those of the workers that exited. */
  | { type: 'paia-sip2:group-metrics'; scrape: number; shares: Share[]; expected: number; scraped: number };

/** Worker -> primary. */
export type FromWorker =
  /** Listening for messages: send the configuration. */
  | { type: 'paia-sip2:hello' }
  /** The gateway is built and serves: hand it connections. */
  | { type: 'paia-sip2:ready' }
  /** The gateway could not start (the worker exits 1 next). */
  | { type: 'paia-sip2:failed'; reason: string }
  /** The connection with this id arrived: the primary closes its copy of the socket. */
  | { type: 'paia-sip2:took'; id: number }
  /** The answer to a ping. */
  | { type: 'paia-sip2:pong'; beat: number }
  /** The worker drains (a signal of its own, or the primary's stop): no new connections for it. */
  | { type: 'paia-sip2:draining' }
  /** A scrape of /metrics arrived: gather every worker's share and answer "group-metrics" with the same number. */
  | { type: 'paia-sip2:scrape'; scrape: number }
  /** This worker's share for gather `gather`; null when its collection failed. */
  | { type: 'paia-sip2:metrics-share'; gather: number; share: Share | null };

/** What a worker is asked to do once its gateway runs: the primary's commands to the gateway itself. */
export type WorkerCommand = Extract<
  ToWorker,
  { type: 'paia-sip2:stop' } | { type: 'paia-sip2:force' } | { type: 'paia-sip2:reload-tls' }
>;

function typeOf(message: unknown): string | null {
  if (typeof message !== 'object' || message === null) return null;
  const type = (message as { type?: unknown }).type;
  return typeof type === 'string' && type.startsWith('paia-sip2:') ? type : null;
}

const TO_WORKER: ReadonlySet<string> = new Set(
  ['start', 'connection', 'ping', 'stop', 'force', 'reload-tls', 'share-metrics', 'group-metrics'].map(
    (t) => `paia-sip2:${t}`,
  ),
);
const FROM_WORKER: ReadonlySet<string> = new Set(
  ['hello', 'ready', 'failed', 'took', 'pong', 'draining', 'scrape', 'metrics-share'].map((t) => `paia-sip2:${t}`),
);

export function isToWorker(message: unknown): message is ToWorker {
  return TO_WORKER.has(typeOf(message) ?? '');
}

export function isFromWorker(message: unknown): message is FromWorker {
  return FROM_WORKER.has(typeOf(message) ?? '');
}
