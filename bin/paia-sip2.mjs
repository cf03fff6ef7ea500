#!/usr/bin/env node
// The paia-sip2 command (package.json "bin"): runs src/cli/main.ts through tsx,
// as `npm start` does. `paia-sip2 doctor --patron NAME` checks the ILS.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
