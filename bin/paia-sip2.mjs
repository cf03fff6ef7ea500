#!/usr/bin/env -S node --max-semi-space-size=8 --heap-growing-percent=60 --expose-gc
// The paia-sip2 command (package.json "bin"): the compiled command line
// (npm run build writes dist/), in this one process, so SIGTERM, SIGINT and
// SIGHUP reach the gateway itself. `paia-sip2 doctor --patron NAME` checks the ILS.
// The shebang passes the gateway's memory options (src/node-flags.ts); `env -S`
// splits them (GNU coreutils 8.30+, BSD and macOS env).
import { existsSync } from 'node:fs';

const main = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write(
    `paia-sip2: the build is missing (${main.pathname}); run \`npm run build\` in the package folder first\n`,
  );
  process.exit(1);
}
await import(main.href);
