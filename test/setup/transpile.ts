import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ENTRY_POINTS, TEST_BUILD_ROOT, TEST_BUILD_VARIABLE } from '../helpers/entry-points.js';

/**
 * vitest's global setup: the gateway's and the simulator's command lines, each bundled by esbuild
 * into one plain JavaScript file with the packages they import (the types stripped, as tsx does on
 * the fly), at .test-build/run-PID/<entry>.js, so that the children the tests start load one file
 * instead of some hundreds of modules: a gateway start costs 0.5 s of CPU instead of 1.0 s, a
 * simulator's 0.35 s instead of 0.55 s, and the suite starts about 320 of them. Nothing the code
 * reads at run time is located from the running module (src/package-root.ts searches upwards for
 * package.json; swagger-ui-dist is resolved through node_modules), so the bundle behaves as the
 * source does. One folder per run, removed at its end: a file run while the whole suite runs in
 * the same checkout does not pull the bundle from under the other's children. Type checking stays
 * with `tsc --noEmit`, which npm test runs first; compiled.test.ts runs tsc's own build.
 */
export default async function transpile(): Promise<() => void> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const dir = `${TEST_BUILD_ROOT}/run-${process.pid}`;
  // A child still exiting may write to the compile cache meanwhile: retried, and a folder left behind is removed by the next run.
  const teardown = () => {
    try {
      rmSync(`${root}${dir}`, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    } catch {}
  };
  // Each project of vitest.config.ts loads and runs the global setup afresh, all in this one process: once is enough.
  if (process.env[TEST_BUILD_VARIABLE] === dir) return teardown;
  mkdirSync(`${root}${TEST_BUILD_ROOT}`, { recursive: true });
  for (const left of readdirSync(`${root}${TEST_BUILD_ROOT}`)) {
    const pid = Number(/^run-(\d+)$/.exec(left)?.[1]);
    if (!alive(pid)) rmSync(`${root}${TEST_BUILD_ROOT}/${left}`, { recursive: true, force: true });
  }
  await build({
    absWorkingDir: root,
    entryPoints: [...ENTRY_POINTS],
    outdir: `${root}${dir}`,
    outbase: root,
    bundle: true,
    // The packages written in CommonJS call require(), which an ES module has not got.
    banner: {
      js: "import { createRequire as createRequireForBundle } from 'node:module'; const require = createRequireForBundle(import.meta.url);",
    },
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  process.env[TEST_BUILD_VARIABLE] = dir;
  // Node 22 and later keep V8's compiled code of the bundle here, so only the first child compiles it (Node 20 ignores it).
  process.env.NODE_COMPILE_CACHE = `${root}${dir}/compile-cache`;
  return teardown;
}

/** Whether a process with this pid runs (the folder of a run that crashed is left behind). */
function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
