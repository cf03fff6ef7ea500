import { inject } from 'vitest';

/**
 * The image project's setup file, run in each test file's process before the file: points testcontainers
 * (test/helpers/redis.ts) at the engine of the global setup and at the Redis image built there, so the
 * container kind of test/integration/redis-store.test.ts runs. Ryuk, testcontainers' reaper, is itself an
 * image from Docker Hub, which this machine cannot pull, and the private engine is removed with all its
 * containers at the end of the run anyway: it is turned off.
 */
const docker = inject('docker');
if ('host' in docker) {
  process.env.DOCKER_HOST = docker.host;
  process.env.PAIA_TEST_REDIS_IMAGE = docker.redisImage;
  process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
  if (docker.hostNetwork) {
    process.env.PAIA_TEST_DOCKER_NETWORK = 'host';
    // testcontainers otherwise looks for the address of the engine's bridge network, which has none.
    process.env.TESTCONTAINERS_HOST_OVERRIDE = '127.0.0.1';
  }
}
