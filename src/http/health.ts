import type { Logger } from '../log.js';

/**
 * Health endpoints for process managers and load balancers, outside PAIA:
 * they live at the root (`/healthz`, `/readyz`) whatever `http.basePath` is,
 * need no token, carry no patron data, and never go through the PAIA app
 * (no PAIA error bodies, no WWW-Authenticate, no access-log line per probe).
 *
 * - `GET /healthz`: 200 `{"status":"alive"}` while the process can answer
 *   HTTP at all, also while it shuts down (a liveness probe must not kill a
 *   draining gateway).
 * - `GET /readyz`: 200 `{"status":"ready","sip2":{"connections":2,"online":true}}`
 *   when at least one logged-in SIP2 connection is open, the last SC status
 *   (98) said on-line Y, and the gateway is not shutting down; otherwise 503
 *   `{"status":"not ready","reasons":[...],"sip2":{...}}`.
 *
 * Both answer GET and HEAD; any other method gets 405 with `Allow: GET, HEAD`.
 */

export const HEALTH_PATH = '/healthz';
export const READY_PATH = '/readyz';

/** What readiness is decided from; read afresh on every probe. */
export interface ReadinessState {
  /** A signal arrived: the gateway drains and must get no new traffic. */
  shuttingDown: boolean;
  /** Whether at least one SIP2 connection is open and logged in. */
  loggedIn: boolean;
  /** Open, logged-in SIP2 connections. */
  connections: number;
  /** On-line status of the last ACS status (98) read; null when none was read (no connection). */
  online: boolean | null;
}

export interface Readiness {
  ready: boolean;
  body: {
    status: 'ready' | 'not ready';
    reasons?: string[];
    sip2: { connections: number; online: boolean | null };
  };
}

export const REASONS = {
  shuttingDown: 'shutting down',
  noConnection: 'no logged-in SIP2 connection',
  offline: 'the ILS reports it is offline (SC status on-line N)',
} as const;

export function readinessOf(state: ReadinessState): Readiness {
  const reasons: string[] = [];
  if (state.shuttingDown) reasons.push(REASONS.shuttingDown);
  if (!state.loggedIn) reasons.push(REASONS.noConnection);
  else if (state.online === false) reasons.push(REASONS.offline);
  const sip2 = { connections: state.connections, online: state.online };
  return reasons.length === 0
    ? { ready: true, body: { status: 'ready', sip2 } }
    : { ready: false, body: { status: 'not ready', reasons, sip2 } };
}

export interface HealthOptions {
  readiness: () => ReadinessState;
  /** Readiness changes (ready -> not ready and back) are logged here, once each. */
  logger?: Logger | undefined;
}

/** A request handler for the two paths: a Response for them, undefined for every other URL. */
export type HealthHandler = (request: Request) => Response | undefined;

export function createHealthHandler(options: HealthOptions): HealthHandler {
  let lastReady: boolean | null = null;

  const reply = (request: Request, status: number, body: unknown, headers: Record<string, string> = {}): Response =>
    new Response(request.method === 'HEAD' ? null : JSON.stringify(body), {
      status,
      headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers },
    });

  return (request) => {
    const path = pathOf(request.url);
    if (path !== HEALTH_PATH && path !== READY_PATH) return undefined;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return reply(request, 405, { status: 'error', error: `${request.method} is not allowed here; use GET or HEAD` }, { Allow: 'GET, HEAD' });
    }
    if (path === HEALTH_PATH) return reply(request, 200, { status: 'alive' });

    const readiness = readinessOf(options.readiness());
    if (lastReady !== readiness.ready) {
      if (readiness.ready) options.logger?.info({ sip2: readiness.body.sip2 }, 'ready');
      else options.logger?.warn({ reasons: readiness.body.reasons, sip2: readiness.body.sip2 }, 'not ready');
      lastReady = readiness.ready;
    }
    return reply(request, readiness.ready ? 200 : 503, readiness.body);
  };
}

function pathOf(url: string): string | null {
  // Cheap before URL parsing: almost every request is a PAIA one.
  if (!url.includes('/healthz') && !url.includes('/readyz')) return null;
  try {
    return new URL(url).pathname;
  } catch {
    return null;
  }
}
