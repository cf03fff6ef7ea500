import { getIn, isMapping, type Raw, setIn } from './raw.js';
import { SETTING_BY_ENV, SETTING_BY_PATH, type Setting } from './settings.js';
import { suggest } from './suggest.js';

/**
 * Environment overrides: each PAIA_* variable of the settings table sets its
 * setting over the file's value; PORT sets http.port unless PAIA_HTTP_PORT
 * does. Other PAIA_* variables are warned about.
 */

/** Where a value came from: the environment variable (or command-line flag), keyed by dotted path. */
export type Sources = Map<string, string>;

/** PAIA_ variables that are inputs of a command, not settings (the doctor's test patron password, the config file's path). */
const NOT_SETTINGS: ReadonlySet<string> = new Set(['PAIA_DOCTOR_PASSWORD', 'PAIA_CONFIG']);

const TRUE_WORDS = ['true', 'yes', '1', 'on'];
const FALSE_WORDS = ['false', 'no', '0', 'off'];

/**
 * `env` without anything the gateway reads as configuration (PAIA_* and PORT):
 * for starting a gateway whose settings must come from the caller alone.
 * @internal The tests and the bench start gateways with it.
 */
export function withoutSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const rest: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('PAIA_') && name !== 'PORT') rest[name] = value;
  }
  return rest;
}

/** A setting given on the command line (`serve --workers 4`), as its text. */
export interface SettingFlag {
  /** The setting's dotted path, e.g. "http.workers". */
  readonly path: string;
  /** How it was given, for messages: "--workers". */
  readonly flag: string;
  readonly text: string;
}

/** Reads a variable's text as the setting's kind; a text that does not fit is passed on for the schema to report. */
function readEnvValue(setting: Setting, text: string): unknown {
  const trimmed = text.trim();
  const lower = trimmed.toLowerCase();
  if (setting.nullable && (lower === '' || lower === 'null' || lower === '~')) return null;
  switch (setting.kind) {
    case 'integer':
    case 'number':
      return /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/.test(trimmed) ? Number(trimmed) : text;
    case 'boolean':
      return TRUE_WORDS.includes(lower) ? true : FALSE_WORDS.includes(lower) ? false : text;
    case 'section':
      return TRUE_WORDS.includes(lower) ? true : FALSE_WORDS.includes(lower) ? null : text;
    case 'enum':
    case 'list':
      return trimmed;
    case 'string':
      return setting.secret ? text : trimmed;
    case 'json':
      try {
        return JSON.parse(trimmed) as unknown;
      } catch {
        return text;
      }
  }
}

/** Sets the settings named in `env` in `raw`; returns which variable set which path. */
export function applyEnv(raw: Raw, env: NodeJS.ProcessEnv, warnings: string[]): Sources {
  const sources: Sources = new Map();
  const switchedOff: string[] = [];
  const entries = Object.entries(env).filter(
    (entry): entry is [string, string] => entry[0].startsWith('PAIA_') && entry[1] !== undefined,
  );
  // Sections (PAIA_HTTP_TLS=null) first, so that the settings inside them can switch them on again.
  const ordered = entries.sort(
    ([a], [b]) => Number(SETTING_BY_ENV.get(b)?.kind === 'section') - Number(SETTING_BY_ENV.get(a)?.kind === 'section'),
  );
  const unknown: string[] = [];
  for (const [name, text] of ordered) {
    const setting = SETTING_BY_ENV.get(name);
    if (!setting) {
      if (!NOT_SETTINGS.has(name)) unknown.push(name);
      continue;
    }
    const off = switchedOff.find((section) => setting.path.startsWith(`${section}.`));
    if (off) {
      warnings.push(`${name} is ignored because ${SETTING_BY_PATH.get(off)?.env} switches ${off} off`);
      continue;
    }
    const value = readEnvValue(setting, text);
    if (setting.kind === 'section') {
      if (value === null) switchedOff.push(setting.path);
      // true keeps a section the file already has.
      if (value === true && isMapping(getIn(raw, setting.path.split('.')))) continue;
    }
    if (setIn(raw, setting.path.split('.'), value)) sources.set(setting.path, name);
    else
      warnings.push(
        `${name} is ignored because the configuration file has something other than a section on the way to ${setting.path}`,
      );
  }
  // A client's secret may sit in a PAIA_* variable of its own (auth.clients[].secretEnv, docs/configuration.md): read, not unknown.
  const secretVariables = clientSecretVariables(raw);
  for (const name of unknown) {
    if (secretVariables.has(name)) continue;
    warnings.push(`${name} is not a paia-sip2 setting and is ignored${suggest(name, [...SETTING_BY_ENV.keys()])}`);
  }
  const port = env.PORT;
  if (port !== undefined && port.trim() !== '') {
    if (env.PAIA_HTTP_PORT !== undefined) {
      warnings.push('PORT is ignored because PAIA_HTTP_PORT is set');
    } else {
      const setting = SETTING_BY_PATH.get('http.port') as Setting;
      if (setIn(raw, ['http', 'port'], readEnvValue(setting, port))) sources.set('http.port', 'PORT');
    }
  }
  return sources;
}

/** The variables auth.clients names by secretEnv, in the file or in PAIA_AUTH_CLIENTS (already applied to `raw`). */
function clientSecretVariables(raw: Raw): Set<string> {
  const clients = getIn(raw, ['auth', 'clients']);
  if (!Array.isArray(clients)) return new Set();
  return new Set(
    clients.flatMap((client) => (isMapping(client) && typeof client.secretEnv === 'string' ? [client.secretEnv] : [])),
  );
}

/** Sets the settings given as command-line flags, after the environment, so that they win over it and the file. */
export function applyFlags(raw: Raw, flags: readonly SettingFlag[], sources: Sources, warnings: string[]): void {
  for (const { path, flag, text } of flags) {
    const setting = SETTING_BY_PATH.get(path);
    if (!setting) throw new Error(`${flag} is wired to ${path}, which is not a setting`);
    if (setIn(raw, path.split('.'), readEnvValue(setting, text))) sources.set(path, flag);
    else
      warnings.push(
        `${flag} is ignored because the configuration file has something other than a section on the way to ${path}`,
      );
  }
}
