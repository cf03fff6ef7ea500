#!/usr/bin/env node
// The paia-sip2 command (package.json "bin"): the compiled command line
// (npm run build writes dist/), in this one process, so SIGTERM, SIGINT and
// SIGHUP reach the gateway itself. `paia-sip2 doctor --patron NAME` checks the ILS.
import { existsSync } from 'node:fs';

const main = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write(
    `paia-sip2: the build is missing (${main.pathname}); run \`npm run build\` in the package folder first\n`,
  );
  process.exit(1);
}
await import(main.href);
