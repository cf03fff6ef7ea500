import { defineConfig } from 'vitest/config';

/**
 * Three groups, one after the other (sequence.groupOrder): the unit tests, CPU-bound, one fork per core;
 * the integration and conformance files, which mostly wait on real processes over loopback, several
 * files at a time; then the few files that need the CPU to themselves, alone. Each file starts its own
 * simulators and gateways on ephemeral ports with state directories of their own
 * (test/helpers/gateway.ts), so files share nothing but the CPU. TEST_FILES_AT_ONCE sets how many
 * integration files run at once: on a machine busy with other work, fewer (each file starts its
 * processes within 15 s or fails).
 */
const INTEGRATION_FILES_AT_ONCE = Number(process.env.TEST_FILES_AT_ONCE ?? 3);
/**
 * Alone: compiled.test.ts runs `npm run build` (tsc, both cores for half a minute) and writes dist/;
 * workers.test.ts starts gateways of three processes each, again and again, within the 15 s start bound;
 * workers-metrics.test.ts starts one such gateway.
 */
const ALONE = [
  'test/integration/compiled.test.ts',
  'test/integration/workers.test.ts',
  'test/integration/workers-metrics.test.ts',
];

export default defineConfig({
  test: {
    // Integration tests start real processes on loopback; they get room, unit tests do not need it.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The children the tests start run the source from .test-build/, written once per run.
    globalSetup: ['test/setup/transpile.ts'],
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/conformance/**/*.test.ts'],
          exclude: ALONE,
          maxWorkers: INTEGRATION_FILES_AT_ONCE,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: { name: 'alone', include: ALONE, maxWorkers: 1, sequence: { groupOrder: 2 } },
      },
    ],
  },
});
