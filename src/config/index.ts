export {
  type Config,
  configSchema,
  DEMO_DIALECTS,
  type HttpTlsConfig,
  hostProblem,
  isLoopback,
  LOG_LEVELS,
  type LogLevel,
  PATRON_ID_MODES,
  type PatronIdMode,
  type Sip2TlsConfig,
  uriTemplateProblem,
} from './schema.js';
export { configSettings, envNameOf, FILE_PATHS, SECRET_PATHS, type Setting, type SettingKind } from './settings.js';
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
