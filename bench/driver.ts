import { performance } from 'node:perf_hooks';
import { Client, Pool } from 'undici';

/**
 * The load driver: a closed loop of N workers, each starting its next task as
 * soon as the previous one answered, for a warm-up and then a fixed measured
 * window. A task counts when it completes inside the window; its latency is
 * recorded then. Throughput = tasks completed in the window / window length.
 * Plus percentiles and a sequential sampler.
 */

export interface TaskOutcome {
  /** false: the task failed (wrong status, bad body, exception). */
  ok: boolean;
  /** What to count it under (HTTP status, "error: ..."). */
  label: string;
  /** HTTP requests the task made (a flow makes several); default 1. */
  requests?: number;
}

export interface LoopOptions {
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  /** One unit of work for worker `worker`. Must not throw (return ok: false). */
  task: (worker: number) => Promise<TaskOutcome>;
  /** Called when the measured window opens and when it closes (e.g. to read CPU counters). */
  onWindowStart?: () => void;
  onWindowEnd?: () => void;
}

export interface LoopResult {
  /** Tasks completed in the measured window. */
  completed: number;
  /** HTTP requests completed in the measured window. */
  requests: number;
  durationS: number;
  /** Tasks per second in the window. */
  tasksPerSecond: number;
  requestsPerSecond: number;
  /** Task latencies in the window, ms, sorted. */
  latencies: Float64Array;
  p50: number;
  p99: number;
  /** Outcomes over the whole run (warm-up included), by label. */
  outcomes: Record<string, number>;
  /** Failed tasks over the whole run (warm-up included). */
  failures: number;
}

export async function closedLoop(options: LoopOptions): Promise<LoopResult> {
  const start = performance.now();
  const windowStart = start + options.warmupMs;
  const end = windowStart + options.durationMs;
  const latencies: number[] = [];
  const outcomes: Record<string, number> = {};
  let completed = 0;
  let requests = 0;
  let failures = 0;

  const worker = async (id: number) => {
    while (performance.now() < end) {
      const t0 = performance.now();
      let outcome: TaskOutcome;
      try {
        outcome = await options.task(id);
      } catch (error) {
        outcome = { ok: false, label: `error: ${(error as Error).message}` };
      }
      const t1 = performance.now();
      outcomes[outcome.label] = (outcomes[outcome.label] ?? 0) + 1;
      if (!outcome.ok) failures++;
      if (t1 >= windowStart && t1 <= end) {
        completed++;
        requests += outcome.requests ?? 1;
        latencies.push(t1 - t0);
      }
    }
  };
  // Each hook runs exactly once, in order: on its timer, or at the latest when the workers are done.
  let opened = false;
  let closed = false;
  const open = () => {
    if (opened) return;
    opened = true;
    options.onWindowStart?.();
  };
  const close = () => {
    open();
    if (closed) return;
    closed = true;
    options.onWindowEnd?.();
  };
  const opening = setTimeout(open, options.warmupMs);
  const closing = setTimeout(close, options.warmupMs + options.durationMs);
  try {
    await Promise.all(Array.from({ length: options.concurrency }, (_, i) => worker(i)));
  } finally {
    clearTimeout(opening);
    clearTimeout(closing);
    close();
  }

  const sorted = Float64Array.from(latencies).sort();
  const durationS = options.durationMs / 1000;
  return {
    completed,
    requests,
    durationS,
    tasksPerSecond: completed / durationS,
    requestsPerSecond: requests / durationS,
    latencies: sorted,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    outcomes,
    failures,
  };
}

/** Nearest-rank percentile of sorted values (NaN when empty). */
export function percentile(sorted: Float64Array | readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function sortedOf(values: readonly number[]): Float64Array {
  return Float64Array.from(values).sort();
}

/** Runs `fn` n times one after another; returns the latencies in ms (unsorted, in order). */
export async function sequential(n: number, fn: (i: number) => Promise<void>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}

/** Every HTTP wait is bounded: no answer headers or body within 30 s fails the request. */
const CLIENT_OPTIONS = {
  pipelining: 1,
  keepAliveTimeout: 60_000,
  keepAliveMaxTimeout: 600_000,
  headersTimeout: 30_000,
  bodyTimeout: 30_000,
} as const;

/** One keep-alive HTTP/1.1 connection (sequential measurements). */
export function httpClient(origin: string): Client {
  return new Client(origin, CLIENT_OPTIONS);
}

/** An undici pool of keep-alive HTTP/1.1 connections to one origin, no pipelining. */
export function httpPool(origin: string, connections: number): Pool {
  return new Pool(origin, { connections, ...CLIENT_OPTIONS });
}

export interface HttpLoopOptions {
  origin: string;
  path: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  connections: number;
  warmupMs: number;
  durationMs: number;
  /** The status every answer must have; default 200. */
  expectStatus?: number;
  /** Path and headers of worker `worker` instead of `path` and `headers` (e.g. one patron per connection). */
  requestFor?: (worker: number) => { path: string; headers?: Record<string, string> };
  onWindowStart?: () => void;
  onWindowEnd?: () => void;
}

/** Closed loop of one fixed HTTP request over `connections` keep-alive connections (one worker per connection). */
export async function httpLoop(options: HttpLoopOptions): Promise<LoopResult> {
  const pool = httpPool(options.origin, options.connections);
  const expected = options.expectStatus ?? 200;
  try {
    return await closedLoop({
      concurrency: options.connections,
      warmupMs: options.warmupMs,
      durationMs: options.durationMs,
      onWindowStart: options.onWindowStart,
      onWindowEnd: options.onWindowEnd,
      task: async (worker) => {
        const target = options.requestFor?.(worker) ?? options;
        const response = await pool.request({
          path: target.path,
          method: options.method ?? 'GET',
          headers: target.headers,
        });
        await response.body.arrayBuffer();
        return { ok: response.statusCode === expected, label: String(response.statusCode) };
      },
    });
  } finally {
    await pool.close();
  }
}

/** Runs fn over every input with at most `concurrency` at a time; results in input order (errors as Error values). */
export async function mapConcurrent<I, O>(
  inputs: readonly I[],
  concurrency: number,
  fn: (input: I, index: number) => Promise<O>,
): Promise<Array<O | Error>> {
  const out: Array<O | Error> = new Array<O | Error>(inputs.length);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const index = next++;
      if (index >= inputs.length) return;
      try {
        out[index] = await fn(inputs[index]!, index);
      } catch (error) {
        out[index] = error instanceof Error ? error : new Error(String(error));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, inputs.length) }, worker));
  return out;
}
