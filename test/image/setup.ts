import type { TestProject } from 'vitest/node';
import { baseImages, MissingTool, REDIS_IMAGE } from './base-images.js';
import { type EngineAddress, startEngine } from './engine.js';

/**
 * The image project's global setup (vitest.config.ts, `--project image`): a Docker engine
 * (test/image/engine.ts) and the base images (test/image/base-images.ts), once for the whole run; the
 * engine is stopped and its directory removed at the end, whatever happened. What the test files get
 * (inject('docker')): where the engine is, or why there is none, which makes them skip with that reason.
 */
export type DockerContext = (EngineAddress & { redisImage: string }) | { unavailable: string };

declare module 'vitest' {
  export interface ProvidedContext {
    docker: DockerContext;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const started = await startEngine();
  if ('unavailable' in started) {
    project.provide('docker', { unavailable: started.unavailable });
    return undefined;
  }
  const { engine } = started;
  const began = Date.now();
  try {
    await baseImages(engine);
  } catch (error) {
    await engine.close();
    // No debootstrap is the machine's lack; a build that fails is a failure.
    if (!(error instanceof MissingTool)) throw error;
    project.provide('docker', { unavailable: error.message });
    return undefined;
  }
  console.log(
    `image tests: Docker engine at ${engine.host}, base images ready in ${Math.round((Date.now() - began) / 1000)} s`,
  );
  project.provide('docker', {
    host: engine.host,
    hostNetwork: engine.hostNetwork,
    private: engine.private,
    redisImage: REDIS_IMAGE,
  });
  return () => engine.close();
}
