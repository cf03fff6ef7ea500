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
  B9: '50 libraries behind one gateway, each with its own simulator',
} as const;

export type BenchmarkId = keyof typeof BENCHMARKS;

/** A program a benchmark starts besides node and the gateway, and how a sysadmin gets it. */
export interface Program {
  command: string;
  install: string;
}

/** What each benchmark needs on the machine: run.ts skips one whose program is missing, and says which and why. */
export const NEEDS: Partial<Record<BenchmarkId, readonly Program[]>> = {
  B6: [{ command: 'redis-server', install: 'on Debian or Ubuntu: apt-get install redis-server' }],
};
