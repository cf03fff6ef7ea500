import type { Config } from '../../config/index.js';
import type { Sip2Target } from '../sip2.js';

/**
 * What the primary and its workers say to each other over the node:cluster
 * IPC channel (JSON). Every message's type starts with "paia-sip2:", so that
 * nothing else on the channel is taken for one.
 */

/** Primary -> worker. */
export type ToWorker =
  /**
   * The answer to "hello": the validated configuration (the same for every
   * worker but for http.port, see primary.ts), in demo mode the primary's
   * simulator, and the worker's number (1..N, kept by its replacements) for the logs.
   */
  | { type: 'paia-sip2:start'; config: Config; sharedSimulator: Sip2Target | null; worker: number }
  /** Drain and exit, as on a first SIGTERM; a second one is no second signal. */
  | { type: 'paia-sip2:stop' }
  /** Drop everything and exit now, as on a second signal. */
  | { type: 'paia-sip2:force'; reason: string }
  /** Re-read the TLS certificate and key, as on SIGHUP. */
  | { type: 'paia-sip2:reload-tls' };

/** Worker -> primary. */
export type FromWorker =
  /** Listening for messages: send the configuration. */
  | { type: 'paia-sip2:hello' }
  /** The gateway runs and its listener takes connections. */
  | { type: 'paia-sip2:listening'; url: string; baseUrl: string }
  /** The gateway could not start (the worker exits 1 next). */
  | { type: 'paia-sip2:failed'; reason: string };

/** What a worker is asked to do once its gateway runs: ToWorker without the start. */
export type WorkerCommand = Exclude<ToWorker, { type: 'paia-sip2:start' }>;

function typeOf(message: unknown): string | null {
  if (typeof message !== 'object' || message === null) return null;
  const type = (message as { type?: unknown }).type;
  return typeof type === 'string' && type.startsWith('paia-sip2:') ? type : null;
}

const TO_WORKER: ReadonlySet<string> = new Set(['start', 'stop', 'force', 'reload-tls'].map((t) => `paia-sip2:${t}`));
const FROM_WORKER: ReadonlySet<string> = new Set(['hello', 'listening', 'failed'].map((t) => `paia-sip2:${t}`));

export function isToWorker(message: unknown): message is ToWorker {
  return TO_WORKER.has(typeOf(message) ?? '');
}

export function isFromWorker(message: unknown): message is FromWorker {
  return FROM_WORKER.has(typeOf(message) ?? '');
}
