/**
 * The layering of src/ as tables: what test/unit/architecture.test.ts checks
 * the import statements against, and what test/unit/docs/drift.test.ts holds
 * ARCHITECTURE.md to. One source for both.
 */

/** Top-level modules of src/ anyone may import: the logger, where the package's files are, the version, the caches' bound, node's flags, the cancellation signal, why a file cannot be read, the timeout line, the live list, the dictionary, the idle trim. */
export const SHARED = [
  'log.ts',
  'file-problem.ts',
  'package-root.ts',
  'version.ts',
  'lru-bound.ts',
  'node-flags.ts',
  'cancel-signal.ts',
  'timeout-line.ts',
  'live-list.ts',
  'dictionary.ts',
  'idle-trim.ts',
];

/**
 * Folder -> the folders it may import from (besides itself and the shared
 * modules): cli -> gateway -> http -> auth -> state, auth -> backend -> sip2,
 * with config beside gateway (it takes the components' defaults) and metrics below http.
 */
export const MAY_IMPORT: Record<string, readonly string[]> = {
  cli: ['gateway', 'config', 'backend', 'sip2'],
  gateway: ['config', 'http', 'auth', 'state', 'backend', 'sip2', 'metrics'],
  config: ['sip2', 'auth', 'backend'],
  http: ['auth', 'state', 'backend', 'metrics'],
  auth: ['state', 'backend'],
  state: [],
  backend: ['sip2'],
  metrics: ['sip2'],
  sip2: [],
};
/**
 * Who in src/ may reach into the simulator, and which of its modules: the
 * gateway starts one in demo mode (server.ts); the command line runs it as
 * `paia-sip2 simulator` (command.ts), so the installed package needs no
 * checkout. Both import it lazily, so serving never loads it otherwise.
 */
export const SIMULATOR_ENTRIES: Record<string, readonly string[]> = {
  gateway: ['../sip2-simulator/src/server.ts'],
  cli: ['../sip2-simulator/src/command.ts'],
};
/** Single modules a folder may import beyond its rule: the HTTP app's defaults, kept apart so the schema does not load the app. */
export const ALSO_ALLOWED: Record<string, readonly string[]> = { config: ['http/defaults.ts'] };
/** Outside config/ and gateway/, who may import the configuration: the command line, which loads it and hands it on. */
export const CONFIG_LOADERS = ['cli/main.ts', 'cli/serve.ts'];
/**
 * Outside config/, who may read process.env: the command line, which hands it
 * to the loader, and the doctor's password prompt (PAIA_DOCTOR_PASSWORD, no
 * setting). Everything else gets what the loader read, as options.
 */
export const ENV_READERS = ['cli/main.ts', 'cli/doctor/input.ts'];
