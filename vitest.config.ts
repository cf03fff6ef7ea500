import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

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

/**
 * The image project (test/image/, `npm run test:image`): builds the Dockerfile in a Docker engine of its own
 * and runs the image, minutes of work, so it is part of a run only when named (`vitest run --project image`);
 * `npm test` stays as it is. It runs the testcontainers kind of the store tests as well, against a Redis
 * image it builds (test/image/env.ts).
 */
const IMAGE_SELECTED = process.argv.some(
  (arg, index) => arg === '--project=image' || (arg === '--project' && process.argv[index + 1] === 'image'),
);
const IMAGE_PROJECT = {
  extends: true,
  test: {
    name: 'image',
    include: ['test/image/**/*.test.ts', 'test/integration/redis-store.test.ts'],
    globalSetup: ['test/image/setup.ts'],
    setupFiles: ['test/image/env.ts'],
    // Of the store tests only the container kind: the main run has the redis-server kind. (vitest 4.1 applies
    // a project's testNamePattern, though ProjectConfig does not list it: hence the `as` below.)
    testNamePattern: /^(RedisStore against container|the container image)/,
    maxWorkers: 1,
    sequence: { groupOrder: 3 },
  },
} as TestProjectInlineConfiguration;

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
      ...(IMAGE_SELECTED ? [IMAGE_PROJECT] : []),
    ],
  },
});
