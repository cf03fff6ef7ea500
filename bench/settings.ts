/** Durations and sizes of one run: the full run, or --quick for iterating on the bench itself. */
export interface Settings {
  quick: boolean;
  warmupMs: number;
  durationMs: number;
  /** B1: connections (= workers) of the closed loop. */
  b1Connections: number;
  /** B1: fresh gateway processes and as many fresh hello-world processes, alternating; the median of each is taken. */
  b1Rounds: number;
  /** B1: warm-up of a fresh gateway (JIT tiering takes it about 5 s to settle under load) and of a hello-world (about 1 s). */
  b1GatewayWarmupMs: number;
  b1HelloWarmupMs: number;
  /** B1: the measured window of each process. */
  b1WindowMs: number;
  /** B2: sequential measured calls (after 2 warm-ups) and naive baseline runs. */
  b2Calls: number;
  b2NaiveRuns: number;
  /** B3: batches of 100 samples per side. */
  b3Batches: number;
  /**
   * B3: sequential warm-up calls per side. A fresh gateway on Node 22 answers one call at a time about
   * 1.4 ms at first and settles near 0.55 ms only after 6,000-7,000 calls, while V8 tiers its code up.
   */
  b3Warmup: number;
  /** B4: patrons (each read once: core, items, fees), loans per patron, logins per patron. */
  b4Patrons: number;
  b4Loans: number;
  b4LoginsPerPatron: number;
  /** B5: virtual patrons. */
  b5Virtual: number;
  /** B7: sequential measured calls (after 2 warm-ups). */
  b7Calls: number;
  /** B8: measured visits per patron (after one unmeasured), each on a cold window. */
  b8Visits: number;
  /** B9: libraries in the one gateway (each with its own simulator process). */
  b9Libraries: number;
  /** B9: rounds, each a fresh gateway with every library, then a fresh single-library gateway; medians taken. */
  b9Rounds: number;
  /** B9: how long the gateway rests after every library is ready before its memory is read. */
  b9RestMs: number;
}

export const FULL: Settings = {
  quick: false,
  warmupMs: 2000,
  durationMs: 10_000,
  b1Connections: 32,
  b1Rounds: 3,
  b1GatewayWarmupMs: 6000,
  b1HelloWarmupMs: 2000,
  b1WindowMs: 4000,
  b2Calls: 12,
  b2NaiveRuns: 3,
  b3Batches: 10,
  b3Warmup: 10_000,
  b4Patrons: 10_000,
  b4Loans: 1,
  b4LoginsPerPatron: 1,
  b5Virtual: 16,
  b7Calls: 40,
  b8Visits: 6,
  b9Libraries: 50,
  b9Rounds: 2,
  b9RestMs: 5000,
};

export const QUICK: Settings = {
  ...FULL,
  quick: true,
  warmupMs: 1000,
  durationMs: 3000,
  b1Rounds: 2,
  b1GatewayWarmupMs: 4000,
  b1HelloWarmupMs: 1000,
  b1WindowMs: 2000,
  b2Calls: 6,
  b2NaiveRuns: 1,
  b3Batches: 3,
  b3Warmup: 3000,
  b4Patrons: 2000,
  b7Calls: 10,
  b8Visits: 2,
  b9Rounds: 1,
};
