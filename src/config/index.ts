// biome-ignore-all assist/source/organizeImports: what ships and what only the tests use stay apart (the latter tagged for knip --production)
export { ConfigError, describeConfig, type LoadOptions, loadConfigWithWarnings, reloadConfig } from './load.js';
export type { Config } from './schema/index.js';

/** @internal What the tests load the configuration with, and the environment without PAIA_* settings. */
export { withoutSettings } from './env.js';
export { sentinelAddresses } from './schema/state.js';
export { secretFileVariables } from './secret-files.js';
/** @internal */
export { type ConfigProblem, DEFAULT_CONFIG_FILE, loadConfig } from './load.js';
/** @internal */
export { configSchema, type HttpTlsConfig, type Sip2TlsConfig } from './schema/index.js';
/** The settings table (the doctor names a library's settings from it). */
export { configSettings } from './settings.js';
/** @internal The settings table's parts, as the docs and the settings tests check them. */
export { envNameOf, FILE_PATHS, type Setting } from './settings.js';
