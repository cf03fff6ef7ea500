/** Durations and sizes of one run: the full run, or --quick for iterating on the bench itself. */
export interface Settings {
  quick: boolean;
  warmupMs: number;
  durationMs: number;
  /** B1: connections (= workers) of the closed loop. */
  b1Connections: number;
  /** B2: sequential measured calls (after 2 warm-ups) and naive baseline runs. */
  b2Calls: number;
  b2NaiveRuns: number;
  /** B3: batches of 100 samples per side. */
  b3Batches: number;
  /** B4: patrons, loans per patron, logins per patron. */
  b4Patrons: number;
  b4Loans: number;
  b4LoginsPerPatron: number;
  /** B5: virtual patrons. */
  b5Virtual: number;
  /** B7: sequential measured calls (after 2 warm-ups). */
  b7Calls: number;
}

export const FULL: Settings = {
  quick: false,
  warmupMs: 2000,
  durationMs: 10_000,
  b1Connections: 32,
  b2Calls: 12,
  b2NaiveRuns: 3,
  b3Batches: 10,
  b4Patrons: 100,
  b4Loans: 100,
  b4LoginsPerPatron: 100,
  b5Virtual: 16,
  b7Calls: 40,
};

export const QUICK: Settings = {
  ...FULL,
  quick: true,
  warmupMs: 1000,
  durationMs: 3000,
  b2Calls: 6,
  b2NaiveRuns: 1,
  b3Batches: 3,
  b4LoginsPerPatron: 20,
  b7Calls: 10,
};
