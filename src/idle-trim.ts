import { getHeapStatistics } from 'node:v8';
import type { Logger } from './log.js';

/**
 * Gives the memory of a burst back once the gateway has fallen quiet: after
 * a whole check interval (10 s) with at most a request a second and nothing
 * in flight at either end, when the heap has grown by an eighth since the
 * last trim, one full collection of the kind V8 runs under memory pressure.
 * A few requests are allowed in a quiet interval because load balancers and
 * orchestrators probe /healthz and /readyz every few seconds: an interval
 * without any request would never come behind one.
 *
 * Why not leave it to V8: its memory reducer does so only once it judges the
 * allocation rate low, from its last collections' figures, and after a
 * burst with little garbage for the old generation (the case since
 * SharedCalls left its Map) that took Node 22 longer than B4's 30 s of rest:
 * the gateway stayed at its peak, 146 MB against 117-119 MB with the Map
 * (bench/README.md, "CPU per request, sixth round"). Node 24's V8 does not
 * judge it low at all in a process without cppgc allocations and waits for
 * its 100 s watchdog, which any ordinary full collection postpones.
 *
 * Start-up is a burst of its own (the modules compiled, the configuration
 * read, the pools opened): a second after the start, if it brought at
 * most a request a second and nothing is in flight, the same collection
 * runs once. An idle Node 22 gateway then holds
 * 87 MB instead of 106 MB (bench/README.md, "CPU per request, seventh
 * round").
 *
 * It needs `gc()`, which node only gives with --expose-gc (node-flags.ts);
 * without it nothing is trimmed and V8 alone decides.
 */

export interface IdleTrimOptions {
  /** Requests received so far and those in flight now (the HTTP server's). */
  activity: () => { requests: number; inFlight: number };
  /** The check interval: a trim follows the end of a burst after one to two of them. */
  idleMs?: number;
  /** The collection that gives memory back; the default needs node --expose-gc (null without it: no trim). */
  collect?: (() => void) | null;
  /** The heap's committed size in bytes. */
  heapSize?: () => number;
  /** How long after the start the start-up's memory is trimmed (null: it is not). */
  afterStartMs?: number | null;
  logger?: Logger | undefined;
}

export interface IdleTrim {
  stop(): void;
}

const DEFAULT_IDLE_MS = 10_000;
const DEFAULT_AFTER_START_MS = 1000;
/** Requests per second a quiet interval may carry (probes, a patron now and then). */
const QUIET_PER_SECOND = 1;
/** The heap must have grown by this share over what the last trim left, or there is nothing worth a full collection. */
const GROWTH = 1.125;

export function startIdleTrim(options: IdleTrimOptions): IdleTrim | null {
  const collect = options.collect === undefined ? heapCollector() : options.collect;
  if (collect === null) return null;
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  const quietRequests = Math.ceil((QUIET_PER_SECOND * idleMs) / 1000);
  const heapSize = options.heapSize ?? (() => getHeapStatistics().total_heap_size);
  const requestsAtStart = options.activity().requests;
  let seen = requestsAtStart;
  // A call running at a check (a slow ILS) makes the interval after it a busy one, however few requests it brings.
  let nothingInFlight = true;
  let heapAfterTrim = heapSize();

  const trim = (after: 'start-up' | 'a burst') => {
    const before = heapSize();
    const started = performance.now();
    collect();
    heapAfterTrim = heapSize();
    options.logger?.debug(
      {
        after,
        heapBeforeMb: megabytes(before),
        heapAfterMb: megabytes(heapAfterTrim),
        ms: Math.round(performance.now() - started),
      },
      'idle: heap trimmed',
    );
  };
  const check = () => {
    const { requests, inFlight } = options.activity();
    const quiet = requests - seen <= quietRequests && inFlight === 0 && nothingInFlight;
    seen = requests;
    nothingInFlight = inFlight === 0;
    if (quiet && heapSize() >= heapAfterTrim * GROWTH) trim('a burst');
  };
  const timer = setInterval(check, idleMs);
  const afterStartMs = options.afterStartMs === undefined ? DEFAULT_AFTER_START_MS : options.afterStartMs;
  // A gateway already serving (a worker replaced behind a load balancer, a slow ILS's calls running) is
  // left to the checks: a full collection pauses it for some 10-50 ms.
  const startUpQuiet = () => {
    const { requests, inFlight } = options.activity();
    return inFlight === 0 && requests - requestsAtStart <= quietRequests;
  };
  const afterStart = afterStartMs === null ? null : setTimeout(() => startUpQuiet() && trim('start-up'), afterStartMs);
  // The process lives for its server and its connections, not for these.
  timer.unref();
  afterStart?.unref();
  return {
    stop: () => {
      clearInterval(timer);
      if (afterStart !== null) clearTimeout(afterStart);
    },
  };
}

/** V8's collection for memory pressure through gc(); null when node runs without --expose-gc. */
function heapCollector(): (() => void) | null {
  const gc = (globalThis as { gc?: (options?: { type: string; flavor?: string }) => void }).gc;
  if (typeof gc !== 'function') return null;
  // Node 22 and later (V8 12+) take the kind of collection. On Node 20, gc({ type: 'major' }) ran a scavenge
  // when tried, so there a plain gc(): a full collection that leaves the young generation's size alone.
  if (Number(process.versions.v8.split('.')[0]) >= 12) return () => gc({ type: 'major', flavor: 'last-resort' });
  return () => gc();
}

function megabytes(bytes: number): number {
  return Math.round(bytes / 104_857.6) / 10;
}
