import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { TEST_BUILD_ROOT, TEST_BUILD_VARIABLE } from '../helpers/entry-points.js';

/**
 * vitest's global setup: the gateway's and the simulator's sources, each file stripped of its types
 * by esbuild (what tsx does on the fly) into .test-build/run-PID/, laid out as in the source tree, so
 * that the children the tests start run plain JavaScript (test/helpers/entry-points.ts). One folder
 * per run, removed at its end: a file run while the whole suite runs in the same checkout does not
 * pull the tree from under the other's children. Type checking stays with `tsc --noEmit`, which npm
 * test runs first. Half a second for the whole tree.
 */
export default async function transpile(): Promise<() => void> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const dir = `${TEST_BUILD_ROOT}/run-${process.pid}`;
  const teardown = () => rmSync(`${root}${dir}`, { recursive: true, force: true });
  // Each project of vitest.config.ts loads and runs the global setup afresh, all in this one process: once is enough.
  if (process.env[TEST_BUILD_VARIABLE] === dir) return teardown;
  mkdirSync(`${root}${TEST_BUILD_ROOT}`, { recursive: true });
  for (const left of readdirSync(`${root}${TEST_BUILD_ROOT}`)) {
    const pid = Number(/^run-(\d+)$/.exec(left)?.[1]);
    if (!alive(pid)) rmSync(`${root}${TEST_BUILD_ROOT}/${left}`, { recursive: true, force: true });
  }
  await build({
    absWorkingDir: root,
    entryPoints: ['src/**/*.ts', 'sip2-simulator/src/**/*.ts'],
    outdir: `${root}${dir}`,
    outbase: root,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  process.env[TEST_BUILD_VARIABLE] = dir;
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
