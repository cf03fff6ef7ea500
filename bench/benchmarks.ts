/**
 * The benchmarks by id, with the title run.ts prints: the one list that
 * bench/README.md, docs/benchmarks.md and the table of RESULTS.md follow
 * (test/unit/docs/drift.test.ts checks the docs against it).
 */
export const BENCHMARKS = {
  B1: 'CPU per request vs the raw relay',
  B2: 'items fan-out at 20 ms SIP2 latency',
  B3: 'one call vs one SIP2 round trip at low load',
  B4: 'memory with 10,000 sessions and cached items',
  B5: 'login-to-logout flow',
  B6: 'two gateways on one Redis',
  B7: 'a 10-loan patron at the floor, 20 ms SIP2 latency, pool 4',
  B8: "a discovery system's account visit, 20 ms SIP2 latency, account window on",
} as const;

export type BenchmarkId = keyof typeof BENCHMARKS;
