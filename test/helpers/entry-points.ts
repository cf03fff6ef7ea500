import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * How a test starts the gateway's or the simulator's command line as a child process: from the
 * bundle test/setup/transpile.ts wrote for this run (`node .test-build/<run>/src/cli/main.js`), the
 * source and its packages in one file, without tsx's loader and its esbuild service in every child:
 * a start then costs a third of the CPU, and the suite starts some hundreds of gateways and
 * simulators. Without that bundle (a file run outside `vitest run`), through tsx.
 */

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where test/setup/transpile.ts writes, one folder per run; listed in .gitignore. */
export const TEST_BUILD_ROOT = '.test-build';
/** The variable through which the global setup tells the test processes its run's folder (relative to the root). */
export const TEST_BUILD_VARIABLE = 'TEST_BUILD_DIR';

/** The command lines a test starts, each bundled for the run. */
export const ENTRY_POINTS = ['src/cli/main.ts', 'sip2-simulator/src/main.ts'] as const;
export type EntryPoint = (typeof ENTRY_POINTS)[number];

/**
 * The node arguments (before the command's own) that run `entry`, relative to the repository root;
 * `throughTsx`: as a developer runs it, whatever was built.
 */
export function sourceEntry(entry: EntryPoint, throughTsx = false): string[] {
  const dir = process.env[TEST_BUILD_VARIABLE];
  const built = dir === undefined ? undefined : `${dir}/${entry.replace(/\.ts$/, '.js')}`;
  return !throughTsx && built !== undefined && existsSync(`${REPO_ROOT}${built}`)
    ? [built]
    : ['--import', 'tsx', entry];
}
