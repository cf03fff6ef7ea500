import type { z } from 'zod';
import { RENAMED_SETTINGS } from './renamed.js';
import { configSchema } from './schema/index.js';
import { LIBRARIES_KEY } from './schema/libraries.js';
import { settingRoles } from './schema/validators.js';

/**
 * Every setting by its dotted path, with its environment variable and how
 * that variable's text is read, all derived from the schema (schema/): the
 * path from its place in the sections, the variable from the path by
 * envNameOf, the kind from its zod type, secret and file from the roles the
 * schema registers (settingRoles). Nothing here is written twice.
 *
 * Variables that do not follow the rule (the documented exceptions):
 * - PORT sets http.port unless PAIA_HTTP_PORT is set (env.ts);
 * - PAIA_<SECRET>_FILE names a file holding a secret setting's value (secret-files.ts);
 * - PAIA_CONFIG (the configuration file) and PAIA_DOCTOR_PASSWORD (the doctor's
 *   test patron) are inputs of a command, not settings (env.ts);
 * - the variables auth.clients names by secretEnv hold client secrets (env.ts);
 * - the old ...Seconds names of renamed settings (renamed.ts) are read for one
 *   release, by the same rule from their old paths.
 */

/**
 * How the text of a setting's environment variable is read. A text that does
 * not fit is passed on as it is, for the schema to report with its own message.
 */
type SettingKind =
  /** A number ("1.5" too, so that the schema says it must be whole). */
  | 'integer'
  /** A number that may have a fraction ("0.5"). */
  | 'number'
  /** true/false, yes/no, 1/0, on/off, in any case. */
  | 'boolean'
  /** Trimmed; a secret is taken exactly as given. */
  | 'string'
  /** Comma-separated; passed on trimmed and split by the schema (textList), which splits a one-line list in YAML the same way. */
  | 'list'
  /** One of the schema's words, trimmed. */
  | 'enum'
  /** An optional section (TLS): true/yes/1/on switches it on ({} or the file's section), false/no/0/off/null off. */
  | 'section'
  /** A structured value (a list of sections) written as JSON. */
  | 'json';

export interface Setting {
  /** Dotted path, e.g. "sip2.pool.acquireTimeoutMs". */
  readonly path: string;
  /** Its environment variable, e.g. "PAIA_SIP2_POOL_ACQUIRE_TIMEOUT_MS". */
  readonly env: string;
  readonly kind: SettingKind;
  /** "", "null" and "~" in the variable mean null. */
  readonly nullable: boolean;
  /** Never shown in messages or logs. */
  readonly secret: boolean;
  /** Names a file: a relative path is read from the config file's directory (or, from the environment, the working directory), and the file must be readable. */
  readonly file: boolean;
}

/** The zod types this walk knows: the def of every schema the configuration uses. */
type Def = {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
};

const defOf = (schema: z.ZodType): Def => schema._zod.def as unknown as Def;

/** A setting's schema without its wrappers (default, optional, nullable, preprocess, transform), and what they said. */
function unwrap(schema: z.ZodType): { core: z.ZodType; nullable: boolean; secret: boolean; file: boolean } {
  let core = schema;
  let nullable = false;
  let secret = false;
  let file = false;
  for (;;) {
    const role = settingRoles.get(core);
    secret ||= role?.secret === true;
    file ||= role?.file === true;
    const def = defOf(core);
    if (def.type === 'nullable') nullable = true;
    if (def.innerType && ['default', 'prefault', 'optional', 'nullable', 'readonly'].includes(def.type))
      core = def.innerType;
    // z.preprocess(fn, schema) is a pipe from a transform: the schema is what the value must be.
    else if (def.type === 'pipe' && def.in && def.out) core = defOf(def.in).type === 'transform' ? def.out : def.in;
    else return { core, nullable, secret, file };
  }
}

function kindOf(core: z.ZodType, path: string): SettingKind {
  const def = defOf(core);
  switch (def.type) {
    case 'string':
      return 'string';
    case 'number':
      return (core as z.ZodNumber).isInt ? 'integer' : 'number';
    case 'boolean':
      return 'boolean';
    case 'enum':
      return 'enum';
    case 'array':
      return def.element && defOf(unwrap(def.element).core).type === 'string' ? 'list' : 'json';
    case 'unknown':
      return 'json';
    default:
      throw new Error(`settings.ts cannot read ${path} (a zod ${def.type}): teach kindOf this type`);
  }
}

/** The settings of a section, in the schema's order: an optional (nullable) section is a setting itself, before its own. */
function settingsOf(schema: z.ZodType, path: readonly string[]): Setting[] {
  const { core, nullable, secret, file } = unwrap(schema);
  const def = defOf(core);
  const dotted = path.join('.');
  const entry = (kind: SettingKind): Setting => ({
    path: dotted,
    env: envNameOf(dotted),
    kind,
    nullable: kind === 'section' || nullable,
    secret,
    file,
  });
  if (def.type !== 'object' || !def.shape) return [entry(kindOf(core, dotted))];
  const inner = Object.entries(def.shape)
    // The libraries section repeats sections per library: no setting of its own, no variable (load.ts reads it).
    .filter(([key]) => path.length > 0 || key !== LIBRARIES_KEY)
    .flatMap(([key, child]) => settingsOf(child, [...path, key]));
  return nullable ? [entry('section'), ...inner] : inner;
}

/** In the order of the schema: problems are listed in this order. */
const SETTINGS: readonly Setting[] = settingsOf(configSchema, []);

/** The old names of renamed settings, each read as its new setting is (renamed.ts turns its value into the new one). */
const OLD_NAMES: readonly Setting[] = RENAMED_SETTINGS.map(({ from, to }) => {
  const setting = SETTINGS.find((entry) => entry.path === to);
  if (!setting) throw new Error(`renamed.ts renames ${from} to ${to}, which is not a setting`);
  return { ...setting, path: from, env: envNameOf(from) };
});

/** Every setting with its environment variable, in schema order. */
export function configSettings(): readonly Setting[] {
  return SETTINGS;
}

/** camelCase path -> PAIA_UPPER_SNAKE (`sip2.pool.acquireTimeoutMs` -> `PAIA_SIP2_POOL_ACQUIRE_TIMEOUT_MS`): the rule every variable follows. @internal */
export function envNameOf(path: string): string {
  return `PAIA_${path
    .split('.')
    .map((segment) => segment.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase())
    .join('_')}`;
}

/** Settings by variable and by path, the old names of renamed settings included. */
export const SETTING_BY_ENV: ReadonlyMap<string, Setting> = new Map(
  [...SETTINGS, ...OLD_NAMES].map((entry) => [entry.env, entry]),
);
export const SETTING_BY_PATH: ReadonlyMap<string, Setting> = new Map(
  [...SETTINGS, ...OLD_NAMES].map((entry) => [entry.path, entry]),
);

/** Settings whose values never appear in messages or logs. */
export const SECRET_PATHS: readonly string[] = SETTINGS.filter((entry) => entry.secret).map((entry) => entry.path);

/** Settings naming files; relative paths are read from the directory of the config file. */
export const FILE_PATHS: readonly string[] = SETTINGS.filter((entry) => entry.file).map((entry) => entry.path);

/** The keys each section allows, in schema order, by dotted path ("" = the top level, libraries included). */
export const SECTION_KEYS: ReadonlyMap<string, readonly string[]> = (() => {
  const keys = new Map<string, string[]>();
  for (const { path } of SETTINGS) {
    const segments = path.split('.');
    segments.forEach((key, depth) => {
      const parent = segments.slice(0, depth).join('.');
      const known = keys.get(parent) ?? [];
      if (!known.includes(key)) known.push(key);
      keys.set(parent, known);
    });
  }
  keys.get('')?.push(LIBRARIES_KEY);
  return keys;
})();
