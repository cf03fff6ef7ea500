import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { TEST_BUILD_DIR } from '../helpers/entry-points.js';

/**
 * vitest's global setup: the gateway's and the simulator's sources, each file stripped of its types
 * by esbuild (what tsx does on the fly) into .test-build/, laid out as in the source tree, so that
 * the children the tests start run plain JavaScript (test/helpers/entry-points.ts). Type checking
 * stays with `tsc --noEmit`, which npm test runs first. Half a second for the whole tree.
 */
export default async function transpile(): Promise<void> {
  // Each project of vitest.config.ts loads and runs the global setup afresh, all in this one process: once is enough.
  if (process.env.TEST_BUILD_WRITTEN === '1') return;
  process.env.TEST_BUILD_WRITTEN = '1';
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const outdir = `${root}${TEST_BUILD_DIR}`;
  rmSync(outdir, { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    entryPoints: ['src/**/*.ts', 'sip2-simulator/src/**/*.ts'],
    outdir,
    outbase: root,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
}
