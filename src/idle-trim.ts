import { getHeapStatistics } from 'node:v8';
import type { Logger } from './log.js';

/**
 * Gives the memory of a burst back once the gateway has fallen idle: when a
 * whole check interval (10 s) went by without a request and none is in
 * flight, after requests that left the heap larger than the last trim did,
 * one full collection that also shrinks the young generation and returns
 * free pages to the system.
 *
 * Why not leave it to V8: its memory reducer does so only once it judges the
 * allocation rate low, from its last ten collections' figures, and after a
 * burst with little garbage for the old generation (the case since
 * SharedCalls left its Map) that took Node 22 longer than B4's 30 s of rest:
 * the gateway stayed at its peak, 146 MB against 117-119 MB with the Map
 * (bench/README.md, "CPU per request, sixth round"). Node 24's V8 does not
 * judge it low at all in a process without cppgc allocations and waits for
 * its 100 s watchdog, which any ordinary full collection postpones.
 *
 * It needs `gc()`, which node only gives with --expose-gc (node-flags.ts);
 * without it nothing is trimmed and V8 alone decides.
 */

export interface IdleTrimOptions {
  /** Requests received so far and those in flight now (the HTTP server's). */
  activity: () => { requests: number; inFlight: number };
  /** The check interval: a trim follows the last request after one to two of them. */
  idleMs?: number;
  /** The collection that gives memory back; the default needs node --expose-gc (null without it: no trim). */
  collect?: (() => void) | null;
  /** The heap's committed size in bytes. */
  heapSize?: () => number;
  logger?: Logger | undefined;
}

export interface IdleTrim {
  stop(): void;
}

const DEFAULT_IDLE_MS = 10_000;
/** The heap must have grown by this share over what the last trim left, or there is nothing worth a full collection. */
const GROWTH = 1.125;

export function startIdleTrim(options: IdleTrimOptions): IdleTrim | null {
  const collect = options.collect === undefined ? heapCollector() : options.collect;
  if (collect === null) return null;
  const heapSize = options.heapSize ?? (() => getHeapStatistics().total_heap_size);
  let seen = options.activity().requests;
  let trimmedAt = seen;
  let heapAfterTrim = heapSize();

  const check = () => {
    const { requests, inFlight } = options.activity();
    if (requests !== seen) {
      seen = requests;
      return;
    }
    if (inFlight > 0 || requests === trimmedAt) return;
    trimmedAt = requests;
    const before = heapSize();
    if (before < heapAfterTrim * GROWTH) return;
    const started = performance.now();
    collect();
    heapAfterTrim = heapSize();
    options.logger?.debug(
      {
        heapBeforeMb: megabytes(before),
        heapAfterMb: megabytes(heapAfterTrim),
        ms: Math.round(performance.now() - started),
      },
      'idle: heap trimmed',
    );
  };
  const timer = setInterval(check, options.idleMs ?? DEFAULT_IDLE_MS);
  // The process lives for its server and its connections, not for this.
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** V8's collection for memory pressure through gc(); null when node runs without --expose-gc. */
function heapCollector(): (() => void) | null {
  const gc = (globalThis as { gc?: (options?: { type: string; flavor?: string }) => void }).gc;
  if (typeof gc !== 'function') return null;
  // Node 22 and later (V8 12+) take the kind of collection; Node 20's V8 reads an options object as a minor
  // collection, so there a plain gc(): a full collection that leaves the young generation's size alone.
  if (Number(process.versions.v8.split('.')[0]) >= 12) return () => gc({ type: 'major', flavor: 'last-resort' });
  return () => gc();
}

function megabytes(bytes: number): number {
  return Math.round(bytes / 104_857.6) / 10;
}
