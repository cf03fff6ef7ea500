/**
 * The HTTP app's defaults, apart from the app itself so that the
 * configuration schema can take them without loading the HTTP stack. The app
 * uses them when an option is left out; the schema makes them the settings'
 * defaults.
 */
export const APP_DEFAULTS = Object.freeze({
  requestsPerMinute: 120,
  logoutAllSessions: false,
  requestTimeoutMs: 30_000,
  maxUrlBytes: 2048,
});

/** CORS: any origin may read the answers (the PAIA and DAIA specs expect it of public services). */
export const DEFAULT_CORS_ORIGINS: readonly string[] = Object.freeze(['*']);
