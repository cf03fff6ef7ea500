import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import {
  ANOMALY_KINDS,
  type AnomalyKind,
  type CircuitState,
  type RoundTripEvent,
  type Sip2ErrorCode,
} from '../sip2/index.js';
import { VERSION } from '../version.js';
import { type CounterCell, CounterFamily, type HistogramCell, HistogramFamily } from './cells.js';
import { type Across, aggregatorOf, mergeShares, type Reach, type Share, shareOf } from './group.js';
import { ROUTE_LABELS, type RouteLabel } from './routes.js';
import { SIP2_MESSAGE_NAMES, SIP2_OUTCOMES } from './sip2.js';

/** Buckets of the HTTP latency histogram, in seconds: 1 ms to 10 s. */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
/** Buckets of the SIP2 round-trip histogram, in seconds: 0.5 ms to 10 s (a LAN ILS answers in about a millisecond). */
const SIP2_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** The methods that get a `method` label of their own; any other is `other`. */
const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'OPTIONS', 'PUT', 'DELETE', 'PATCH', 'other'] as const;

const CIRCUIT_VALUE: Readonly<Record<CircuitState, number>> = { closed: 0, 'half-open': 1, open: 2 };

/**
 * What the gauges and the stats-based counters read at scrape time. Every
 * source is optional: a missing one reports 0. Sources are called on every
 * scrape and must be cheap.
 */
export interface MetricsSources {
  pool?: () => {
    connections: number;
    busy: number;
    waiting: number;
    circuit: CircuitState;
    connectFailures: number;
    sessionLimit: number | null;
    keepaliveIntervalMs: number;
  };
  logins?: () => { failed: number; lockouts: number; refused: number; busy: number };
  /** Live sessions (access tokens); null where the store cannot count them cheaply (Redis). */
  sessions?: () => number | null;
  /** The state store: 1 while it answers, 0 while it does not. */
  stateUp?: () => boolean;
  /** The item-information cache; null when it is switched off. */
  itemCache?: () => { hits: number; misses: number; entries: number } | null;
  /** The account window (cache.accounts); null when it is switched off. */
  accountWindow?: () => { hits: number; misses: number; entries: number } | null;
  /** Whether a scheduled maintenance window of the ILS (sip2.maintenance) is on now. */
  maintenance?: () => boolean;
  /** DAIA record lookups (daia.records.http) that failed since start. */
  recordLookupFailures?: () => number;
}

export interface GatewayMetricsOptions {
  /** prom-client's default process and Node.js metrics (memory, CPU, event loop lag, GC, heap). Default true. */
  defaultMetrics?: boolean;
}

type HttpSlot = { duration: HistogramCell; statuses: Map<number, CounterCell>; method: string; route: RouteLabel };
type Sip2Slot = { duration: HistogramCell; outcomes: Map<string, CounterCell>; code: string; message: string };

const METHOD_INDEX = new Map<string, number>(HTTP_METHODS.map((method, index) => [method, index]));
const OTHER_METHOD = HTTP_METHODS.length - 1;
const ROUTE_INDEX = new Map<string, number>(ROUTE_LABELS.map((route, index) => [route, index]));
const OTHER_ROUTE = ROUTE_LABELS.length - 1;
const KNOWN_OUTCOMES: ReadonlySet<string> = new Set(SIP2_OUTCOMES);

/** Buckets of the state store latency histogram, in seconds: 0.1 ms (memory, local Redis) to 2.5 s. */
const STATE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5] as const;

/** State store operations (sessions, limits, facts): latency by operation, and failures (unreachable, timed out). */
export class StateMetrics {
  readonly #duration: HistogramFamily<'operation'>;
  readonly #errors: CounterFamily<'operation'>;
  readonly #slots = new Map<string, { duration: HistogramCell; errors: CounterCell }>();

  constructor(registry: Registry) {
    this.#duration = new HistogramFamily({
      registry,
      name: 'paia_state_operation_duration_seconds',
      help: 'Time of one state store operation (session-get, session-create, limit, ...), failed ones included',
      labelNames: ['operation'],
      buckets: STATE_BUCKETS,
    });
    this.#errors = new CounterFamily({
      registry,
      name: 'paia_state_operation_errors_total',
      help: 'State store operations that failed (store unreachable, timed out or answering with an error): each one a call answered 503, except session-touch (a use not recorded, which no call waits for) and ping (a health probe)',
      labelNames: ['operation'],
    });
  }

  /** One operation; `operation` comes from a fixed set named in the store's code. */
  operation(operation: string, seconds: number, ok: boolean): void {
    let slot = this.#slots.get(operation);
    if (slot === undefined) {
      slot = { duration: this.#duration.cell({ operation }), errors: this.#errors.cell({ operation }) };
      this.#slots.set(operation, slot);
    }
    slot.duration.observe(seconds);
    if (!ok) slot.errors.inc();
  }
}

/** HTTP requests: a counter by method, route and status, and a latency histogram by method and route. */
export class HttpMetrics {
  readonly #requests: CounterFamily<'method' | 'route' | 'status'>;
  readonly #duration: HistogramFamily<'method' | 'route'>;
  /** [route * methods + method]; made on first use, so unused combinations do not show up as zero series. */
  readonly #slots: Array<HttpSlot | undefined> = new Array(ROUTE_LABELS.length * HTTP_METHODS.length);

  constructor(registry: Registry) {
    this.#requests = new CounterFamily({
      registry,
      name: 'paia_http_requests_total',
      help: 'HTTP requests answered by the PAIA/DAIA app, by method, route (the PAIA method, or other) and status',
      labelNames: ['method', 'route', 'status'],
    });
    this.#duration = new HistogramFamily({
      registry,
      name: 'paia_http_request_duration_seconds',
      help: 'Time from a request reaching the PAIA/DAIA app to its response being ready, by method and route',
      labelNames: ['method', 'route'],
      buckets: HTTP_BUCKETS,
    });
  }

  /** One answered request. `method` is the HTTP method as sent (unknown ones count as other). */
  record(method: string, route: RouteLabel, status: number, seconds: number): void {
    const m = METHOD_INDEX.get(method) ?? OTHER_METHOD;
    const r = ROUTE_INDEX.get(route) ?? OTHER_ROUTE;
    const index = r * HTTP_METHODS.length + m;
    const slot = this.#slots[index] ?? this.#slot(index, HTTP_METHODS[m]!, ROUTE_LABELS[r]!);
    slot.duration.observe(seconds);
    const counter = slot.statuses.get(status) ?? this.#status(slot, status);
    counter.inc();
  }

  #slot(index: number, method: string, route: RouteLabel): HttpSlot {
    const slot: HttpSlot = { duration: this.#duration.cell({ method, route }), statuses: new Map(), method, route };
    this.#slots[index] = slot;
    return slot;
  }

  #status(slot: HttpSlot, status: number): CounterCell {
    // Hono only sends integer statuses 200-599; anything else would be a bug, kept bounded anyway.
    const label = Number.isInteger(status) && status >= 100 && status <= 599 ? String(status) : 'other';
    const counter = this.#requests.cell({ method: slot.method, route: slot.route, status: label });
    slot.statuses.set(status, counter);
    return counter;
  }
}

/** SIP2 round trips: a counter by message and outcome, and a latency histogram by message; protocol anomalies by kind. */
export class Sip2Metrics {
  readonly #roundTrips: CounterFamily<'message' | 'code' | 'outcome'>;
  readonly #duration: HistogramFamily<'message' | 'code'>;
  readonly #slots = new Map<string, Sip2Slot>();
  readonly #anomalies: Counter<'kind'>;

  constructor(registry: Registry) {
    this.#anomalies = new Counter({
      name: 'paia_sip2_anomalies_total',
      help: 'SIP2 protocol anomalies of the ILS that did not fail an exchange (stale or unsolicited frames, unreadable answers repaired by 97, 96 resend requests), by kind',
      labelNames: ['kind'],
      registers: [registry],
    });
    // Every kind is a series from the start, so a rate() shows 0 rather than nothing.
    for (const kind of ANOMALY_KINDS) this.#anomalies.inc({ kind }, 0);
    this.#roundTrips = new CounterFamily({
      registry,
      name: 'paia_sip2_round_trips_total',
      help: 'SIP2 request/response exchanges with the ILS, by request message and outcome (ok or the error code)',
      labelNames: ['message', 'code', 'outcome'],
    });
    this.#duration = new HistogramFamily({
      registry,
      name: 'paia_sip2_round_trip_duration_seconds',
      help: 'Time of one SIP2 request/response exchange with the ILS (resends included), by request message',
      labelNames: ['message', 'code'],
      buckets: SIP2_BUCKETS,
    });
  }

  /** The connection observer (ConnectionOptions.onRoundTrip); bound, so it can be passed as it is. */
  readonly roundTrip = (event: RoundTripEvent): void => {
    const slot = this.#slots.get(event.code) ?? this.#slot(event.code);
    slot.duration.observe(event.seconds);
    const counter = slot.outcomes.get(event.outcome) ?? this.#outcome(slot, event.outcome);
    counter.inc();
  };

  /** The anomaly log's observer (AnomalyLogOptions.onAnomaly); bound, so it can be passed as it is. */
  readonly anomaly = (kind: AnomalyKind): void => {
    this.#anomalies.inc({ kind });
  };

  #slot(code: string): Sip2Slot {
    const known = Object.hasOwn(SIP2_MESSAGE_NAMES, code);
    const message = known ? SIP2_MESSAGE_NAMES[code as keyof typeof SIP2_MESSAGE_NAMES] : 'other';
    const label = known ? code : 'other';
    // Cells are shared by label values, so unknown codes all feed the one `other` series.
    const slot: Sip2Slot = {
      duration: this.#duration.cell({ message, code: label }),
      outcomes: new Map(),
      code: label,
      message,
    };
    this.#slots.set(code, slot);
    return slot;
  }

  #outcome(slot: Sip2Slot, outcome: 'ok' | Sip2ErrorCode): CounterCell {
    const label = KNOWN_OUTCOMES.has(outcome) ? outcome : 'other';
    const counter = this.#roundTrips.cell({ message: slot.message, code: slot.code, outcome: label });
    slot.outcomes.set(outcome, counter);
    return counter;
  }
}

/**
 * Everything one gateway exposes on /metrics, in a Registry of its own (never
 * prom-client's global one), so several gateways in one process do not
 * collide. Names start with `paia_`; durations are in seconds; counters end
 * in `_total`. No label carries a patron id, a password, a token or the
 * ILS's address.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly http: HttpMetrics;
  readonly sip2: Sip2Metrics;
  readonly state: StateMetrics;
  #sources: MetricsSources = {};
  /** The gauges that are per worker in a process group (group.ts): a `worker` label each, never summed. */
  readonly #perWorker = new Set<string>();
  /** In a worker of `serve --workers N`: its number and how a scrape reaches the whole group. */
  #group: { worker: number; gather: () => Promise<{ shares: Share[]; reach: Reach }> } | null = null;

  constructor(options: GatewayMetricsOptions = {}) {
    if (options.defaultMetrics ?? true) {
      collectDefaultMetrics({ register: this.registry });
      // With workers, prom-client's default gauges are per worker: heap, memory, file descriptors, event loop lag
      // and start time are each process's own. Except the Node.js version, the same in all: prom-client takes the first.
      for (const metric of this.registry.getMetricsAsArray()) {
        if (metric instanceof Gauge && metric.aggregator !== 'first') this.#perWorker.add(metric.name);
      }
    }
    this.http = new HttpMetrics(this.registry);
    this.sip2 = new Sip2Metrics(this.registry);
    this.state = new StateMetrics(this.registry);
    this.#registerSourced();
    new Gauge({
      name: 'paia_build_info',
      help: 'Always 1; its labels say which paia-sip2 version runs on which Node.js',
      labelNames: ['version', 'node'],
      registers: [this.registry],
      // With workers: every worker runs the primary's code, so the first tells for all.
      aggregator: aggregatorOf('first'),
    }).set({ version: VERSION, node: process.versions.node }, 1);
  }

  /** Adds (or replaces) the sources the scrape-time metrics read. */
  watch(sources: MetricsSources): void {
    this.#sources = { ...this.#sources, ...sources };
  }

  /**
   * From now on a scrape answers for the process group this worker (1..N)
   * belongs to: `gather` brings every worker's share() (this one's too) and
   * how many answered. Called once, by a worker, before it takes connections.
   */
  joinGroup(worker: number, gather: () => Promise<{ shares: Share[]; reach: Reach }>): void {
    this.#group = { worker, gather };
  }

  /** This worker's metrics as the group merges them; only in a group. */
  share(): Promise<Share> {
    if (this.#group === null) return Promise.reject(new Error('share() outside a process group'));
    return shareOf(this.registry, this.#group.worker, this.#perWorker);
  }

  /** The exposition text (the group's, in a worker); rejects when a source or collector throws, or the group does not answer. */
  async scrape(): Promise<string> {
    if (this.#group === null) return this.registry.metrics();
    const { shares, reach } = await this.#group.gather();
    return mergeShares(shares, reach);
  }

  /** The Content-Type of scrape()'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }

  #registerSourced(): void {
    const registers = [this.registry];
    const sources = () => this.#sources;
    // `across`: how the workers' values of this gauge combine in one scrape (group.ts); decided per gauge below.
    const gauge = (name: string, help: string, across: Across, read: () => number) => {
      if (across === 'worker') this.#perWorker.add(name);
      return new Gauge({
        name,
        help,
        registers,
        aggregator: aggregatorOf(across),
        collect() {
          this.set(read());
        },
      });
    };
    // A counter whose total lives elsewhere (a stats() object): each scrape reports that total.
    const total = (name: string, help: string, read: () => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read());
        },
      });

    gauge(
      'paia_sip2_connections',
      'Open SIP2 connections to the ILS that are logged in (busy or idle)',
      // With workers: summed, the sessions the ILS sees from this gateway.
      'sum',
      () => sources().pool?.().connections ?? 0,
    );
    gauge(
      'paia_sip2_connections_busy',
      'SIP2 connections currently serving a request (or a keepalive)',
      // With workers: summed.
      'sum',
      () => sources().pool?.().busy ?? 0,
    );
    gauge(
      'paia_sip2_requests_waiting',
      'Requests queued for a free SIP2 connection',
      // With workers: summed, requests waiting in all pools.
      'sum',
      () => sources().pool?.().waiting ?? 0,
    );
    gauge(
      'paia_sip2_circuit_state',
      'Circuit breaker towards the ILS: 0 closed (requests flow), 1 half-open (probing), 2 open (requests fail at once)',
      // With workers: per worker, each pool has its own circuit (a sum of states means nothing).
      'worker',
      () => {
        const circuit = sources().pool?.().circuit;
        return circuit === undefined ? 0 : CIRCUIT_VALUE[circuit];
      },
    );
    total(
      'paia_sip2_connect_failures_total',
      'Failed attempts to open a SIP2 connection (connect, TLS or terminal login)',
      () => sources().pool?.().connectFailures ?? 0,
    );
    gauge(
      'paia_sip2_session_limit',
      'SIP2 sessions the ILS was found to serve this gateway at once (a login got no answer while others worked); 0 while none is known',
      // With workers: per worker, each pool learns its own limit.
      'worker',
      () => sources().pool?.().sessionLimit ?? 0,
    );
    gauge(
      'paia_sip2_keepalive_interval_seconds',
      'Keepalive interval of idle SIP2 sessions in effect: sip2.pool.keepaliveMs, or lower once the ILS was found to close idle sessions sooner; 0 when keepalives are off',
      // With workers: per worker, each pool learns its own.
      'worker',
      () => (sources().pool?.().keepaliveIntervalMs ?? 0) / 1000,
    );

    total(
      'paia_auth_logins_failed_total',
      'Logins whose credentials the ILS rejected',
      () => sources().logins?.().failed ?? 0,
    );
    total(
      'paia_auth_lockouts_total',
      'Brute-force lockouts begun (a username or address locked, or its delay grown)',
      () => sources().logins?.().lockouts ?? 0,
    );
    new Counter({
      name: 'paia_auth_logins_refused_total',
      help: 'Logins refused before reaching the ILS: locked (brute-force lockout) or busy (global login ceiling)',
      labelNames: ['reason'],
      registers,
      collect() {
        const logins = sources().logins?.();
        this.reset();
        this.inc({ reason: 'locked' }, logins?.refused ?? 0);
        this.inc({ reason: 'busy' }, logins?.busy ?? 0);
      },
    });
    gauge(
      'paia_auth_sessions',
      'Live sessions (valid access tokens) in this process; 0 with the redis store, which holds them for all instances',
      // With workers: summed (0 with the redis store, which workers need).
      'sum',
      () => sources().sessions?.() ?? 0,
    );
    gauge(
      'paia_state_store_up',
      'Whether the state store answers (1) or not (0)',
      // With workers: per worker, each has its own connection to the store.
      'worker',
      () => ((sources().stateUp?.() ?? true) ? 1 : 0),
    );

    total(
      'paia_item_cache_hits_total',
      'Item information answered from the cache (0 when cache.items is off)',
      () => sources().itemCache?.()?.hits ?? 0,
    );
    total(
      'paia_item_cache_misses_total',
      'Item information lookups that went to the ILS through the cache (0 when cache.items is off)',
      () => sources().itemCache?.()?.misses ?? 0,
    );
    gauge(
      'paia_item_cache_entries',
      'Items held in the item-information cache',
      // With workers: summed, each worker has its own cache.
      'sum',
      () => sources().itemCache?.()?.entries ?? 0,
    );

    total(
      'paia_account_window_hits_total',
      'Patron reads (core, items, fees) answered from the account window, without the ILS (0 when cache.accounts is off)',
      () => sources().accountWindow?.()?.hits ?? 0,
    );
    total(
      'paia_account_window_misses_total',
      'Patron reads (core, items, fees) that went to the ILS through the account window (0 when cache.accounts is off)',
      () => sources().accountWindow?.()?.misses ?? 0,
    );
    gauge(
      'paia_account_window_entries',
      'Patron reads held in the account window (core, items and fees count one each)',
      // With workers: summed, each worker has its own window.
      'sum',
      () => sources().accountWindow?.()?.entries ?? 0,
    );

    total(
      'paia_daia_record_lookup_failures_total',
      'DAIA record lookups (daia.records.http) that failed (timed out, unreachable, an HTTP error, not JSON, another shape, too large): each record answered without items',
      () => sources().recordLookupFailures?.() ?? 0,
    );

    gauge(
      'paia_sip2_maintenance',
      'Whether a scheduled maintenance window of the ILS (sip2.maintenance) is on now (1) or not (0)',
      // With workers: every worker reads the same schedule; on in any is on.
      'max',
      () => (sources().maintenance?.() ? 1 : 0),
    );
  }
}
