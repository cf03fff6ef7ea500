import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The version of paia-sip2, read once from its package.json: for
 * `--version`, `/healthz` and the paia_build_info metric. The file is looked
 * for upwards from this module, so that it is found both from src/ (tsx) and
 * from a compiled dist/ tree, however deep the build puts this file.
 */

const PACKAGE_NAME = 'paia-sip2';

function readVersion(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (manifest.name === PACKAGE_NAME && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // no package.json here (or not ours): look one directory up
    }
    const parent = dirname(directory);
    if (parent === directory) throw new Error(`the package.json of ${PACKAGE_NAME} was not found above ${directory}`);
    directory = parent;
  }
}

/** e.g. "0.1.0". */
export const VERSION: string = readVersion();
