import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

/**
 * Two groups, one after the other (sequence.groupOrder): the unit tests, CPU-bound, one fork per core;
 * then the integration and conformance files, which mostly wait on real processes over loopback, several
 * files at a time. Each file starts its own simulators and gateways on ephemeral ports with state
 * directories of their own (test/helpers/gateway.ts), so files share nothing but the CPU.
 * TEST_FILES_AT_ONCE sets how many integration files run at once: on a machine busy with other work,
 * fewer (each file starts its processes within 15 s or fails). The heaviest files (compiled.test.ts runs
 * tsc; workers.test.ts starts gateways of three processes again and again) once ran alone, after the
 * others; since the children start from one bundled file (test/setup/transpile.ts) they start well
 * within their bounds beside two other files, and running them alone left a core idle for 80 s.
 */
const INTEGRATION_FILES_AT_ONCE = Number(process.env.TEST_FILES_AT_ONCE ?? 3);
/**
 * The files that replace a module (vi.mock) for their own tests: they run each in a fresh module graph.
 * Every other file shares its worker's modules with the files run before it in that worker (isolate:
 * false): importing the source afresh for each file cost more than half of the unit tests' CPU. A file
 * that changes shared state (process.env, fake timers) puts it back in afterEach, as it must anyway.
 */
const MOCKING = ['test/unit/auth/client-stand-in.test.ts', 'test/unit/state/persistence-disk.test.ts'];

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
    sequence: { groupOrder: 2 },
  },
} as TestProjectInlineConfiguration;

export default defineConfig({
  test: {
    // Integration tests start real processes on loopback; they get room, unit tests do not need it.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The children the tests start run the source bundled into .test-build/, once per run.
    globalSetup: ['test/setup/transpile.ts'],
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          exclude: MOCKING,
          isolate: false,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'unit-mocking', include: MOCKING, maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/conformance/**/*.test.ts'],
          isolate: false,
          maxWorkers: INTEGRATION_FILES_AT_ONCE,
          sequence: { groupOrder: 1 },
        },
      },
      ...(IMAGE_SELECTED ? [IMAGE_PROJECT] : []),
    ],
  },
});
