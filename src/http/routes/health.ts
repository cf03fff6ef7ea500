import type { Hono } from 'hono';
import type { Logger } from '../../log.js';
import { VERSION } from '../../version.js';
import { operationsReply } from './operations.js';

/**
 * Health endpoints for process managers and load balancers, outside PAIA:
 * they live at the root (`/healthz`, `/readyz`) whatever `http.basePath` is,
 * need no token, carry no patron data, and are answered before any PAIA
 * middleware (no PAIA error bodies, no WWW-Authenticate, no access-log line
 * per probe, not counted in the HTTP metrics).
 *
 * - `GET /healthz`: 200 `{"status":"alive","version":"0.1.0"}` (the running version) while the process can answer
 *   HTTP at all, also while it shuts down (a liveness probe must not kill a
 *   draining gateway).
 * - `GET /readyz`: 200 `{"status":"ready","sip2":{"connections":2,"online":true},"store":{"kind":"redis","ok":true}}`
 *   when at least one logged-in SIP2 connection is open, the last SC status
 *   (98) said on-line Y, the state store answers, no scheduled maintenance window of the
 *   ILS is on (sip2.maintenance; then `"maintenance":{"until":ISO time}` too) and the gateway is
 *   not shutting down; otherwise 503 `{"status":"not ready","reasons":[...],"sip2":{...}}`;
 *   without a SIP2 session the reason says why the last one failed to open (terminal login
 *   refused, ILS not reached).
 *
 * With several libraries (issue 29) /readyz reports each one, keyed by its id,
 * in the shape above, and is ready when every library is:
 * `{"status":"not ready","reasons":["DE-18: no logged-in SIP2 connection"],"libraries":{"DE-830":{"status":"ready",...},"DE-18":{...}}}`.
 *
 * Both answer GET and HEAD; any other method gets 405 with `Allow: GET, HEAD`.
 */

const HEALTH_PATH = '/healthz';
const READY_PATH = '/readyz';

/** What readiness is decided from; read afresh on every probe. */
export interface ReadinessState {
  /** A signal arrived: the gateway drains and must get no new traffic. */
  shuttingDown: boolean;
  /** Whether at least one SIP2 connection is open and logged in. */
  loggedIn: boolean;
  /** Why no SIP2 session opens (the last attempt's failure, in a few words); null or absent when unknown. */
  sip2Problem?: string | null;
  /** Open, logged-in SIP2 connections. */
  connections: number;
  /** On-line status of the last ACS status (98) read; null when none was read (no connection). */
  online: boolean | null;
  /**
   * The state store: which one, why it cannot be used (null: it can), and what to check though it can
   * (Redis's eviction policy cannot be read; null or absent: nothing). Absent: not reported.
   */
  store?: { kind: string; problem: string | null; warning?: string | null };
  /** A scheduled maintenance window of the ILS that is on now (sip2.maintenance); null or absent outside one. */
  maintenance?: { until: Date; description: string } | null;
}

interface LibraryReadiness {
  ready: boolean;
  body: {
    status: 'ready' | 'not ready';
    reasons?: string[];
    sip2: { connections: number; online: boolean | null };
    store?: { kind: string; ok: boolean; warning?: string };
    maintenance?: { until: string };
  };
}

/** What /readyz answers, and the fields its ready and not-ready log lines carry besides the reasons. */
interface Readiness {
  ready: boolean;
  reasons: readonly string[] | undefined;
  logged: Record<string, unknown>;
  body: object;
}

const REASONS = {
  shuttingDown: 'shutting down',
  noConnection: 'no logged-in SIP2 connection',
  offline: 'the ILS reports it is offline (SC status on-line N)',
} as const;

function libraryReadiness(state: ReadinessState): LibraryReadiness {
  const reasons: string[] = [];
  if (state.shuttingDown) reasons.push(REASONS.shuttingDown);
  // In a maintenance window no connection is expected: that is the one reason, not the missing connection.
  if (state.maintenance) reasons.push(`scheduled maintenance of the ILS ${state.maintenance.description}`);
  else if (!state.loggedIn)
    reasons.push(state.sip2Problem ? `${REASONS.noConnection}: ${state.sip2Problem}` : REASONS.noConnection);
  else if (state.online === false) reasons.push(REASONS.offline);
  if (state.store?.problem) reasons.push(state.store.problem);
  const sip2 = { connections: state.connections, online: state.online };
  const warning = state.store?.warning ? { warning: state.store.warning } : {};
  const store = state.store ? { store: { kind: state.store.kind, ok: state.store.problem === null, ...warning } } : {};
  const maintenance = state.maintenance ? { maintenance: { until: state.maintenance.until.toISOString() } } : {};
  return reasons.length === 0
    ? { ready: true, body: { status: 'ready', sip2, ...store } }
    : { ready: false, body: { status: 'not ready', reasons, sip2, ...store, ...maintenance } };
}

function readinessOf(state: ReadinessState): Readiness {
  const { ready, body } = libraryReadiness(state);
  return { ready, reasons: body.reasons, logged: { sip2: body.sip2 }, body };
}

/**
 * Several libraries: each one's readiness by id; ready when all are (or, `anyLibrary`, when one is), every
 * reason named by its library.
 */
function librariesReadinessOf(
  states: readonly { id: string; state: ReadinessState }[],
  anyLibrary: boolean,
): Readiness {
  const libraries: Record<string, LibraryReadiness['body']> = {};
  const reasons: string[] = [];
  for (const { id, state } of states) {
    const { body } = libraryReadiness(state);
    libraries[id] = body;
    for (const reason of body.reasons ?? []) reasons.push(`${id}: ${reason}`);
  }
  const bodies = Object.values(libraries);
  const ready = anyLibrary ? bodies.some((body) => body.status === 'ready') : reasons.length === 0;
  const status = ready ? 'ready' : 'not ready';
  const logged = { libraries: Object.fromEntries(Object.entries(libraries).map(([id, body]) => [id, body.status])) };
  return {
    ready,
    reasons,
    logged,
    body: reasons.length === 0 ? { status, libraries } : { status, reasons, libraries },
  };
}

export interface HealthRouteOptions {
  /** One library's readiness, or (several libraries) each library's by id, in their order. */
  readiness: () => ReadinessState | readonly { id: string; state: ReadinessState }[];
  /** Several libraries: ready when at least one is (http.readyWhen any-library); default: when every one is. */
  anyLibrary?: boolean | undefined;
  /** Readiness changes (ready -> not ready and back) are logged here, once each. */
  logger?: Logger | undefined;
}

/** Mounts /healthz and /readyz; register before any middleware, so that probes pass none of it. */
export function mountHealth(app: Hono, options: HealthRouteOptions): void {
  // What was last logged: ready or not, and with several libraries each library's status (each change is logged).
  let lastLogged: string | null = null;
  app.get(HEALTH_PATH, (c) => operationsReply(c, 200, { status: 'alive', version: VERSION }));
  app.get(READY_PATH, (c) => {
    const state = options.readiness();
    const readiness = Array.isArray(state)
      ? librariesReadinessOf(state, options.anyLibrary ?? false)
      : readinessOf(state as ReadinessState);
    const logged = Array.isArray(state) ? JSON.stringify(readiness.logged) : String(readiness.ready);
    if (lastLogged !== logged) {
      if (readiness.reasons === undefined || readiness.reasons.length === 0)
        options.logger?.info(readiness.logged, 'ready');
      else
        options.logger?.warn(
          { reasons: readiness.reasons, ...readiness.logged },
          readiness.ready ? 'ready, but not every library' : 'not ready',
        );
      lastLogged = logged;
    }
    return operationsReply(c, readiness.ready ? 200 : 503, readiness.body);
  });
  for (const path of [HEALTH_PATH, READY_PATH]) {
    app.all(path, (c) =>
      operationsReply(
        c,
        405,
        { status: 'error', error: `${c.req.method} is not allowed here; use GET or HEAD` },
        { Allow: 'GET, HEAD' },
      ),
    );
  }
}
