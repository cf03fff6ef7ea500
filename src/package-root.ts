import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package's root folder: where package.json, config/ and
 * sip2-simulator/data/ are. Files read at run time are located from here,
 * never relative to the running module, because the module sits one folder
 * deeper in the build (dist/src/sip2/dialect.js) than in the source tree
 * (src/sip2/dialect.ts), while config/ stays where it is.
 */
export const PACKAGE_ROOT = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

/** The nearest folder at or above `start` that holds a package.json; throws when there is none. */
export function findPackageRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`paia-sip2: no package.json in ${start} or any folder above it`);
  }
}

/** A path inside the package, e.g. packagePath('config', 'default.yaml'). */
export function packagePath(...segments: string[]): string {
  return join(PACKAGE_ROOT, ...segments);
}
