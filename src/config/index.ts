export { withoutSettings } from './env.js';
export {
  ConfigError,
  type ConfigProblem,
  DEFAULT_CONFIG_FILE,
  describeConfig,
  type LoadOptions,
  loadConfig,
  loadConfigWithWarnings,
} from './load.js';
export {
  type Config,
  configSchema,
  type HttpTlsConfig,
  type Sip2TlsConfig,
} from './schema/index.js';
export { configSettings, envNameOf, FILE_PATHS, type Setting } from './settings.js';
