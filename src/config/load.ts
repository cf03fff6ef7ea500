import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { type Document, isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { checkCost, parseSecretHash } from '../auth/client-secret.js';
import { type ClientSettings, plainSecretOf } from '../auth/trusted-clients.js';
import { parseRecordMapping, RecordMappingError } from '../backend/daia/records/mapping.js';
import { fileProblemOf } from '../file-problem.js';
import { packagePath } from '../package-root.js';
import { BUILTIN_DIALECTS_TEXT, DIALECT_NAME, loadDialect } from '../sip2/index.js';
import { applyEnv, applyFlags, type SettingFlag, type Sources } from './env.js';
import { effectiveRaw, inherits, libraryIds, ownSections } from './libraries.js';
import { getIn, isMapping, type Raw, setIn } from './raw.js';
import { applyRenames } from './renamed.js';
import { type Config, configSchema, type LibraryConfig, STATE_DIR_OFF, TOP_LEVEL_MUST } from './schema/index.js';
import {
  LIBRARIES_KEY,
  LIBRARY_SECTIONS,
  libraryEntryProblems,
  libraryIdProblem,
  libraryRules,
} from './schema/libraries.js';
import { readSecretFiles } from './secret-files.js';
import { configSettings, FILE_PATHS, SECRET_PATHS, SECTION_KEYS, SETTING_BY_PATH } from './settings.js';
import { suggest } from './suggest.js';

// test/helpers/gateway.ts and bench/ import it from here.
/** @internal */
export { withoutSettings } from './env.js';

/**
 * Loading the configuration: one YAML file, then environment overrides, then
 * validation, then a deep freeze. Every problem is collected and reported at
 * once, each as `<path>: <what is wrong and how to fix it> (<what was found,
 * where>)`, with secrets hidden.
 */

/** config/default.yaml in this package: the embedded demo. */
export const DEFAULT_CONFIG_FILE = packagePath('config', 'default.yaml');

export interface LoadOptions {
  /** The configuration file (`--config FILE`); relative to `cwd`. Default: PAIA_CONFIG of `env`, else config/default.yaml of the package. */
  file?: string | undefined;
  /** Environment with PAIA_* overrides and PORT. Default: process.env. */
  env?: NodeJS.ProcessEnv | undefined;
  /** Directory relative paths given on the command line or in environment variables are read from. Default: process.cwd(). */
  cwd?: string | undefined;
  /** Settings given as command-line flags (`--workers 4`); they win over the environment and the file. */
  flags?: readonly SettingFlag[] | undefined;
}

export interface ConfigProblem {
  /** Dotted setting path (e.g. "sip2.port"), or the file path for problems with the file itself. */
  path: string;
  /** What is wrong and how to fix it, with what was found and where; never a secret. */
  message: string;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    /** The configuration file that was read. */
    readonly file: string,
    readonly problems: readonly ConfigProblem[],
    /** Warnings found on the way (unknown PAIA_* variables), which may explain a problem. */
    readonly warnings: readonly string[] = [],
  ) {
    const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
    const lines = problems.map((p) => `  ${p.path}: ${p.message}`);
    const notes = warnings.length > 0 ? `\nwarnings:\n${warnings.map((w) => `  ${w}`).join('\n')}` : '';
    super(`invalid configuration (${file}), ${count}:\n${lines.join('\n')}${notes}`);
  }
}

// ---------------------------------------------------------------- messages

function show(value: unknown): string {
  if (typeof value === 'string') {
    const shown = value.length > 80 ? `${value.slice(0, 77)}...` : value;
    return `got ${JSON.stringify(shown)}`;
  }
  if (Array.isArray(value)) return 'got a list';
  if (isMapping(value)) return 'got a section';
  return `got ${String(value)}`;
}

/** A problem's path as the sysadmin reads it: a library's named by its id, `libraries[DE-830].sip2.port`. */
function shownPath(path: readonly string[]): string {
  if (path[0] !== LIBRARIES_KEY || path.length < 2) return path.join('.') || '(top level)';
  return `${LIBRARIES_KEY}[${path[1]}]${path
    .slice(2)
    .map((segment) => `.${segment}`)
    .join('')}`;
}

/** The library whose effective configuration a Reporter reports on. */
interface LibraryScope {
  readonly id: string;
  /** Its place in the file: its problems follow the top level's, library by library. */
  readonly index: number;
  /** Its own sections as written (after renames), to tell its values from the top level's. */
  readonly own: Raw;
}

/** `library`: the id of the library whose entry has the problem (a reload keeps that library's old configuration); null for the rest. */
type Problem = ConfigProblem & { order: number; library: string | null };

class Reporter {
  constructor(
    private readonly file: string,
    private readonly doc: Document,
    private readonly lineCounter: LineCounter,
    /** The configuration reported on: the file's, or a library's effective one (libraries.ts). */
    private readonly raw: Raw,
    private readonly sources: Sources,
    /** New path -> the deprecated old one its value was given by (renamed.ts). */
    private readonly renamedFrom: ReadonlyMap<string, string> = new Map(),
    private readonly scope: LibraryScope | null = null,
    readonly problems: Problem[] = [],
  ) {}

  /** Reports on a library's effective configuration, into this reporter's problems. */
  forLibrary(scope: LibraryScope, raw: Raw, sources: Sources, renamedFrom: ReadonlyMap<string, string>): Reporter {
    return new Reporter(this.file, this.doc, this.lineCounter, raw, sources, renamedFrom, scope, this.problems);
  }

  /** "from PAIA_X" or "at <file>:<line>" for the value at path (or "section at" its nearest ancestor in the file). */
  where(path: readonly string[]): string | null {
    const variable = this.sources.get(path.join('.'));
    if (variable) return `from ${variable}`;
    const old = this.renamedFrom.get(path.join('.'));
    if (old !== undefined) return this.where(old.split('.'));
    // A library's own value, or one nobody gives, is in the library's entry; one it inherits is at the top level.
    const { scope } = this;
    const inEntry = scope !== null && (!inherits(scope.own, path) || getIn(this.raw, path) === undefined);
    const filePath = inEntry ? [LIBRARIES_KEY, scope.id, ...path] : path;
    let node: unknown = this.doc.contents;
    let line: number | null = null;
    let found = 0;
    for (const segment of filePath) {
      if (isSeq(node)) {
        // An entry of a list of sections (sip2.maintenance), by its index.
        const item: unknown = node.items[Number(segment)];
        const range = (item as { range?: [number, number, number] } | undefined)?.range;
        if (!range) break;
        line = this.lineCounter.linePos(range[0]).line;
        found += 1;
        node = item;
        continue;
      }
      if (!isMap(node)) break;
      const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === segment);
      const range = pair && isScalar(pair.key) ? pair.key.range : undefined;
      if (!pair || !range) break;
      line = this.lineCounter.linePos(range[0]).line;
      found += 1;
      node = pair.value;
    }
    if (line === null) return null;
    return found === filePath.length ? `at ${this.file}:${line}` : `section at ${this.file}:${line}`;
  }

  add(path: readonly string[], message: string, options: { showValue?: boolean } = {}): void {
    const dotted = path.join('.');
    const value = getIn(this.raw, path);
    const parts: string[] = [];
    if (options.showValue !== false) {
      if (SECRET_PATHS.includes(dotted)) parts.push('value hidden');
      else parts.push(value === undefined ? 'not set' : show(value));
    }
    const where = this.where(path);
    if (where) parts.push(where);
    const old = this.renamedFrom.get(dotted);
    if (old !== undefined) parts.push(`given in seconds as the deprecated ${old}, times 1000`);
    const text = parts.length > 0 ? `${message} (${parts.join(', ')})` : message;
    const { scope } = this;
    if (scope === null) {
      const library = path[0] === LIBRARIES_KEY && path.length >= 2 ? (path[1] ?? null) : null;
      this.problems.push({ path: shownPath(path), message: text, order: orderOf(dotted), library });
    } else {
      // After the top level's problems and the libraries section's own, library by library, each in setting order.
      const settings = configSettings().length + 1;
      const order = settings + scope.index + orderOf(dotted) / settings;
      this.problems.push({
        path: shownPath([LIBRARIES_KEY, scope.id, ...path]),
        message: text,
        order,
        library: scope.id,
      });
    }
  }

  /** A zod issue, in the sysadmin's words. */
  addIssue(issue: z.core.$ZodIssue): void {
    const path = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) this.unknownKey(path, key);
      return;
    }
    const value = getIn(this.raw, path);
    let message = issue.message;
    const fromFile = !this.sources.has(path.join('.'));
    if (issue.code === 'invalid_type' && fromFile) {
      if (issue.expected === 'number' && typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value))
        message += '; write the number without quotes';
      if (issue.expected === 'string' && (typeof value === 'number' || typeof value === 'boolean'))
        message += '; put the value in quotes';
    }
    if (issue.code === 'invalid_type' && !fromFile && issue.expected === 'boolean')
      message += ' (in the environment also yes/no, 1/0, on/off)';
    const params = issue.code === 'custom' ? (issue.params as { showValue?: boolean } | undefined) : undefined;
    this.add(path, message, { showValue: params?.showValue !== false });
  }

  private unknownKey(parent: string[], key: string): void {
    const known = SECTION_KEYS.get(parent.join('.')) ?? LIST_ENTRY_KEYS[parent.slice(0, -1).join('.')] ?? [];
    const nested = [...parent, ...key.split('.')].join('.');
    let message: string;
    if (key.includes('.') && (SETTING_BY_PATH.has(nested) || SECTION_KEYS.has(nested))) {
      const [first, ...rest] = key.split('.');
      message = `is not a setting: write it nested, "${first}:" with "${rest.join('.')}: ..." indented below it`;
    } else {
      const what = parent.length === 0 ? 'section' : 'setting';
      const list = parent.length === 0 ? 'the sections are' : `the settings in ${parent.join('.')} are`;
      message = `is not a known ${what}${suggest(key, known)} (${list} ${known.join(', ')}; keys are camelCase)`;
    }
    this.add([...parent, key], message, { showValue: false });
  }
}

/** The keys of an entry of a setting that is a list of sections. */
const LIST_ENTRY_KEYS: Record<string, readonly string[]> = {
  'sip2.maintenance': ['days', 'from', 'to', 'timeZone'],
  'auth.clients': ['id', 'secretHash', 'secretEnv', 'secretFile', 'scopes', 'allowedAddresses'],
};

/** Where a problem goes in the list: in the order of the settings; unknown keys at the end of their section. */
function orderOf(dotted: string): number {
  const settings = configSettings();
  const index = settings.findIndex(
    (setting) =>
      setting.path === dotted || setting.path.startsWith(`${dotted}.`) || dotted.startsWith(`${setting.path}.`),
  );
  if (index >= 0) return index;
  const section = dotted.split('.').slice(0, -1).join('.');
  if (section === '') return settings.length;
  const last = settings.findLastIndex((setting) => setting.path.startsWith(`${section}.`));
  return last >= 0 ? last + 0.5 : settings.length;
}

function yamlProblem(message: string, position: { line: number; col: number } | undefined): string {
  const first = (message.split('\n')[0] ?? message).replace(/ at line \d+, column \d+:?$/, '');
  const text = first.charAt(0).toLowerCase() + first.slice(1);
  return position
    ? `not valid YAML at line ${position.line}, column ${position.col}: ${text}`
    : `not valid YAML: ${text}`;
}

// ----------------------------------------------------------------- checks

const FILE_FIXES: Record<string, string> = {
  'http.tls.cert': 'set it to the PEM certificate (chain) the gateway presents',
  'http.tls.key': 'set it to the PEM private key of http.tls.cert',
  'sip2.tls.ca':
    'set it to the PEM CA certificate(s) that signed the ILS certificate, or leave it out to use the system CAs',
  'sip2.tls.cert': 'set it to the PEM client certificate',
  'sip2.tls.key': 'set it to the PEM private key of sip2.tls.cert',
  'state.redis.tlsCa':
    'set it to the PEM CA certificate(s) that signed the Redis certificate, or leave it out to use the system CAs',
  'daia.records.file':
    'set it to the CSV or JSON file of record ids and barcodes exported from the ILS, or to null for no mapping',
};

/** Makes relative file paths absolute: from the config file's directory, or from cwd for environment values. */
function resolvePaths(raw: Raw, sources: Sources, configDir: string, cwd: string): void {
  for (const dotted of [...FILE_PATHS, 'sip2.dialect', 'state.dir']) {
    const path = dotted.split('.');
    const value = getIn(raw, path);
    if (typeof value !== 'string' || value.trim() === '' || isAbsolute(value)) continue;
    if (dotted === 'sip2.dialect' && DIALECT_NAME.test(value)) continue;
    if (dotted === 'state.dir' && STATE_DIR_OFF.includes(value)) continue;
    setIn(raw, path, resolve(sources.has(dotted) ? cwd : configDir, value));
  }
  const clients = getIn(raw, ['auth', 'clients']);
  if (!Array.isArray(clients)) return;
  for (const client of clients) {
    if (!isMapping(client)) continue;
    const file = client.secretFile;
    if (typeof file !== 'string' || file.trim() === '' || isAbsolute(file)) continue;
    client.secretFile = resolve(sources.has('auth.clients') ? cwd : configDir, file);
  }
}

/**
 * Reads the secrets of auth.clients given by secretEnv or secretFile into each
 * client's `secret`, once: the gateway builds its trusted clients from them
 * and reads neither the environment nor the files again. A missing one is a
 * start problem, not a failed login.
 */
function readClientSecrets(
  clients: Array<Pick<ClientSettings, 'id' | 'secretEnv' | 'secretFile'> & { secret?: string | undefined }>,
  env: NodeJS.ProcessEnv,
  report: Reporter,
): void {
  clients.forEach((client, index) => {
    const found = plainSecretOf(client, env);
    if (found === undefined) return;
    if ('secret' in found) {
      client.secret = found.secret;
      return;
    }
    const key = client.secretEnv !== undefined ? 'secretEnv' : 'secretFile';
    report.add(['auth', 'clients', String(index), key], `${found.problem} (client ${JSON.stringify(client.id)})`, {
      showValue: false,
    });
  });
}

function fileProblem(file: string): string | null {
  try {
    if (statSync(file).isDirectory()) return 'is a directory, not a file';
    accessSync(file, constants.R_OK);
    return null;
  } catch (error) {
    return fileProblemOf(error);
  }
}

/** `checks`: the settings to check (a library: those it gives itself; the top level checked the rest). */
function checkFiles(
  raw: Raw,
  sources: Sources,
  report: Reporter,
  checks: (dotted: string) => boolean = () => true,
): void {
  for (const dotted of FILE_PATHS) {
    if (!checks(dotted)) continue;
    const value = getIn(raw, dotted.split('.'));
    if (typeof value !== 'string' || value === '') continue;
    const problem = fileProblem(value);
    if (problem) {
      const relative = sources.has(dotted) ? 'relative to the working directory' : 'relative to the config file';
      report.add(
        dotted.split('.'),
        `cannot read ${value}: ${problem}; ${FILE_FIXES[dotted]} (absolute path, or ${relative})`,
        { showValue: false },
      );
    }
  }
  const dialect = getIn(raw, ['sip2', 'dialect']);
  if (typeof dialect === 'string' && dialect !== '' && checks('sip2.dialect')) {
    try {
      loadDialect(dialect);
    } catch (error) {
      report.add(
        ['sip2', 'dialect'],
        `${(error as Error).message}; use ${BUILTIN_DIALECTS_TEXT} or the path of a dialect YAML file (see config/dialects/)`,
        {
          showValue: false,
        },
      );
    }
  }
}

/**
 * A record mapping none of which can serve is a start problem. Its broken
 * lines are not: the gateway names them in its log and serves the rest.
 */
function checkRecordMapping(config: Config, report: Reporter): void {
  const { file, maxItemsPerRecord } = config.daia.records;
  if (file === null || fileProblem(file) !== null) return;
  try {
    parseRecordMapping(readFileSync(file, 'utf8'), { maxItemsPerRecord });
  } catch (error) {
    if (!(error instanceof RecordMappingError)) throw error;
    report.add(['daia', 'records', 'file'], `the record mapping ${file} ${error.message}`, { showValue: false });
  }
}

function collectWarnings(config: Config, warnings: string[]): void {
  if (config.sip2.host !== null && config.sip2.tls?.rejectUnauthorized === false) {
    warnings.push(
      'sip2.tls.rejectUnauthorized is false: the ILS certificate is not checked, so anyone in between can read terminal and patron passwords',
    );
  }
  // The secret keys the hashes of usernames and patron ids in the store whatever paia.patronId is (docs/operations.md, "What the state store holds").
  if (config.state.store === 'redis' && config.paia.patronIdSecret === null) {
    warnings.push(
      'state.store is "redis" and paia.patronIdSecret is not set: the usernames and patron ids in the names of Redis keys are plain SHA-256 hashes, which whoever can read Redis can match by trying every barcode; set paia.patronIdSecret (openssl rand -base64 48; with paia.patronId "barcode" the patron ids stay as they are)',
    );
  }
  const slowdownMs = config.auth.bruteForce.maxSlowdownMs;
  if (slowdownMs >= config.http.requestTimeoutMs) {
    warnings.push(
      `auth.bruteForce.maxSlowdownMs (${slowdownMs} ms) is not below http.requestTimeoutMs (${config.http.requestTimeoutMs} ms): a login from an address in lockout would wait out the whole call and get 504, even with the right password; keep it well below`,
    );
  }
  const hashCosts = new Set(
    config.auth.clients.flatMap((client) => {
      const parsed = client.secretHash === undefined ? null : parseSecretHash(client.secretHash);
      return parsed === null || typeof parsed === 'string' ? [] : [checkCost(parsed)];
    }),
  );
  if (hashCosts.size > 1) {
    warnings.push(
      "auth.clients: the secretHash values have different costs (N, r, p): a failed client login is checked as slowly as the costliest, so a client with a cheaper hash can be told from an unknown client id by the time of the answer; hash every client's secret with the same `paia-sip2 hash-secret`",
    );
  }
  for (const name of ['connectMs', 'responseMs'] as const) {
    const value = config.sip2.timeouts[name];
    if (value < 100)
      warnings.push(`sip2.timeouts.${name} is ${value} ms; it is in milliseconds, not seconds (e.g. 5000 for 5 s)`);
  }
  if (config.http.shutdownTimeoutMs < 100) {
    warnings.push(
      `http.shutdownTimeoutMs is ${config.http.shutdownTimeoutMs} ms; it is in milliseconds, not seconds (e.g. 10000 for 10 s)`,
    );
  }
  if (config.sip2.pool.acquireTimeoutMs < 100) {
    warnings.push(
      `sip2.pool.acquireTimeoutMs is ${config.sip2.pool.acquireTimeoutMs} ms; it is in milliseconds, not seconds`,
    );
  }
  if (config.http.trustedProxy && config.http.publicUrl === null) {
    warnings.push(
      'http.trustedProxy is true but http.publicUrl is not set: links the gateway writes (DAIA\'s Link rel="next") would name the address the proxy forwards to; set http.publicUrl to the https URL clients use',
    );
  }
  // With libraries the top level's sip2 is what they inherit, each with its own host: its tls is theirs.
  if (config.sip2.host === null && config.sip2.tls !== null && config.libraries === null) {
    warnings.push('sip2.host is not set, so the embedded demo simulator is used and sip2.tls is ignored');
  }
}

// ----------------------------------------------------------------- loading

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Replaces any secret value that slipped into a message (defence in depth: messages are built not to contain them). */
function scrubber(raw: Raw): (text: string) => string {
  const libraries = getIn(raw, [LIBRARIES_KEY]);
  const secrets = [raw, ...(isMapping(libraries) ? Object.values(libraries) : [])]
    .flatMap((entry) => SECRET_PATHS.map((path) => getIn(entry, path.split('.'))))
    .filter((value): value is string => typeof value === 'string' && value.length >= 4);
  return (text) => secrets.reduce((result, secret) => result.split(secret).join('(value hidden)'), text);
}

/** Reads, overrides, validates and freezes the configuration; also returns warnings (unknown PAIA_* variables, risky settings). */
export function loadConfigWithWarnings(options: LoadOptions = {}): { config: Config; warnings: string[] } {
  return loaded(options, () => false);
}

/**
 * The configuration as SIGHUP reads it again (issue 29): a library whose
 * entry has problems is left out of `libraries` and listed in `refused`, each
 * with its problems (the gateway keeps that library's running configuration);
 * any other problem (the file cannot be read or parsed, a top-level setting)
 * throws ConfigError as at start, and the gateway changes nothing.
 */
export function reloadConfig(options: LoadOptions = {}): {
  config: Config;
  refused: { id: string; problems: ConfigProblem[] }[];
  warnings: string[];
} {
  const refused = new Map<string, ConfigProblem[]>();
  const { config, warnings } = loaded(options, ({ library, path, message }) => {
    if (library === null) return false;
    refused.set(library, [...(refused.get(library) ?? []), { path, message }]);
    return true;
  });
  return { config, refused: [...refused].map(([id, problems]) => ({ id, problems })), warnings };
}

/** The loader; `setAside` takes a problem that does not stop the load (its library is left out) and says whether it did. */
function loaded(options: LoadOptions, setAside: (problem: Problem) => boolean): { config: Config; warnings: string[] } {
  const cwd = options.cwd ?? process.cwd();
  // --config wins over PAIA_CONFIG (a path to the file, e.g. from a container or unit's environment).
  const fromEnv = (options.env ?? process.env).PAIA_CONFIG?.trim();
  const named = options.file ?? (fromEnv === '' ? undefined : fromEnv);
  const file = named === undefined ? DEFAULT_CONFIG_FILE : resolve(cwd, named);
  const secretFiles = readSecretFiles(options.env ?? process.env, cwd);
  if (secretFiles.problems.length > 0) throw new ConfigError(file, secretFiles.problems);
  const env = secretFiles.env;

  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : (error as Error).message;
    throw new ConfigError(file, [
      {
        path: file,
        message: `cannot read the configuration file: ${reason}; check the --config argument${options.file === undefined && named !== undefined ? ' (here: PAIA_CONFIG)' : ''}`,
      },
    ]);
  }

  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      file,
      [...new Set(doc.errors.map((error) => yamlProblem(error.message, error.linePos?.[0])))].map((message) => ({
        path: file,
        message,
      })),
    );
  }
  const parsed: unknown = doc.toJS({ maxAliasCount: 100 });
  if (parsed !== null && parsed !== undefined && !isMapping(parsed)) {
    throw new ConfigError(file, [
      {
        path: file,
        message: `${TOP_LEVEL_MUST}, ${show(parsed)}`,
      },
    ]);
  }
  const raw: Raw = parsed ?? {};

  const warnings: string[] = [];
  const sources = applyEnv(raw, env, warnings);
  for (const [path, variable] of secretFiles.sources) sources.set(path, variable);
  applyFlags(raw, options.flags ?? [], sources, warnings);
  const renames = applyRenames(raw, sources, warnings);
  resolvePaths(raw, sources, dirname(file), cwd);

  const report = new Reporter(file, doc, lineCounter, raw, sources, renames.renamedFrom);
  for (const { path, message } of renames.problems) report.add(path.split('.'), message, { showValue: false });
  const whole = configSchema.safeParse(raw);
  if (!whole.success) for (const issue of whole.error.issues) report.addIssue(issue);
  // Without the entries the section refused (an id, a stray key): the top level, and the other libraries, stay usable.
  const result = whole.success ? whole : configSchema.safeParse({ ...raw, [LIBRARIES_KEY]: usableEntries(raw) });
  if (result.success) {
    readClientSecrets(result.data.auth.clients, options.env ?? process.env, report);
    checkRecordMapping(result.data as Config, report);
  }
  checkFiles(raw, sources, report);
  const libraries = loadLibraries(
    { raw, doc, sources, report, configDir: dirname(file), cwd },
    result.success ? result.data : null,
  );

  const scrub = scrubber(raw);
  const stopping = report.problems
    .map((problem) => ({ ...problem, message: scrub(problem.message) }))
    // A top level that does not validate sets nothing aside: there is nothing to build the libraries on.
    .filter((problem) => !result.success || !setAside(problem));
  const asideIds = new Set(report.problems.flatMap(({ library }) => (library === null ? [] : [library])));
  if (stopping.length > 0) {
    const problems = stopping
      .map((problem, index) => ({ ...problem, index }))
      .sort((a, b) => a.order - b.order || a.index - b.index)
      .map(({ path, message }) => ({ path, message }));
    throw new ConfigError(file, problems, warnings.map(scrub));
  }
  const kept = libraries?.filter(({ library }) => !asideIds.has(library.id)) ?? null;
  const config = deepFreeze({ ...result.data, libraries: kept?.map(({ library }) => library) ?? null } as Config);
  collectWarnings(config, warnings);
  for (const { library, warnings: own } of kept ?? []) {
    // What a library inherits the top level warned about already.
    const found: string[] = [];
    collectWarnings(library.config, found);
    for (const warning of [...own, ...found.filter((text) => !warnings.includes(text))])
      warnings.push(`${shownPath([LIBRARIES_KEY, library.id])}: ${warning}`);
  }
  return { config, warnings: warnings.map(scrub) };
}

/** The libraries section without the entries it refuses as a whole or for a key (schema/libraries.ts); as it is when not a section. */
function usableEntries(raw: Raw): unknown {
  const section = raw[LIBRARIES_KEY];
  if (!isMapping(section)) return section;
  const ids = Object.keys(section);
  return Object.fromEntries(
    ids
      .filter((id, index) => libraryIdProblem(id, ids.slice(0, index)) === null)
      .filter((id) => libraryEntryProblems(section[id]).length === 0)
      .map((id) => [id, section[id]]),
  );
}

/** What loadLibraries reads: the top level's raw configuration and where its values came from. */
interface LibrariesInput {
  raw: Raw;
  doc: Document;
  sources: Sources;
  report: Reporter;
  configDir: string;
  cwd: string;
}

/** The top level, validated: what a library's configuration takes its other sections from. */
type TopLevel = z.output<typeof configSchema>;

/**
 * Each library's effective configuration (issue 29), validated as a
 * single-library gateway's is, its problems named `libraries[ID].<path>`. A
 * problem a library only inherits is the top level's, reported there once.
 * `top` is null when the top level has problems: the libraries are checked
 * anyway, so that every problem is reported at once. Null without libraries.
 */
function loadLibraries(
  input: LibrariesInput,
  top: TopLevel | null,
): { library: LibraryConfig; warnings: string[] }[] | null {
  const { raw, doc, sources, report } = input;
  const section = raw[LIBRARIES_KEY];
  if (!isMapping(section) || Object.keys(section).length === 0) return null;
  // An entry the schema refused as a whole (its id, not a section) is not looked into; one with a stray key is.
  const keys = Object.keys(section);
  const refused = new Set(
    keys.filter(
      (id, index) =>
        libraryIdProblem(id, keys.slice(0, index)) !== null ||
        libraryEntryProblems(section[id]).some((problem) => problem.path.length === 0),
    ),
  );
  // zod's record skips a "__proto__" key, so the schema never saw this one.
  if (Object.hasOwn(section, '__proto__'))
    report.add([LIBRARIES_KEY, '__proto__'], libraryIdProblem('__proto__', []) ?? '', { showValue: false });
  const ids = libraryIds(doc, section);
  // 830 and "830" are two keys to YAML and one to JavaScript, which keeps the last: a library would vanish.
  for (const id of new Set(ids.filter((id, index) => ids.indexOf(id) !== index)))
    report.add([LIBRARIES_KEY, id], 'is given twice (once as a number, once as text): give each library one id', {
      showValue: false,
    });
  const topProblems = new Set(report.problems.map((problem) => problem.path));
  const loaded: { library: LibraryConfig; warnings: string[] }[] = [];
  ids.forEach((id, index) => {
    if (refused.has(id)) return;
    const own = ownSections(section[id]);
    const warnings: string[] = [];
    // Only the file gives a library's settings: renames and relative paths as in the file.
    const renames = applyRenames(own, new Map(), warnings);
    resolvePaths(own, new Map(), input.configDir, input.cwd);
    const effective = effectiveRaw(raw, own);
    const inherited = (path: string) => inherits(own, path.split('.'));
    const librarySources = new Map([...sources].filter(([path]) => inherited(path)));
    const libraryReport = report.forLibrary({ id, index, own }, effective, librarySources, renames.renamedFrom);
    for (const problem of renames.problems)
      libraryReport.add(problem.path.split('.'), problem.message, { showValue: false });
    for (const problem of libraryRules(effective)) libraryReport.add(problem.path, problem.message);
    const theTopLevels = (path: readonly string[]) =>
      !LIBRARY_SECTIONS.includes(path[0] ?? '') || (inherited(path.join('.')) && topProblems.has(path.join('.')));
    const result = configSchema.safeParse(effective);
    if (!result.success) {
      for (const issue of result.error.issues) {
        const path = issue.path.map(String);
        if (issue.code !== 'unrecognized_keys') {
          if (!theTopLevels(path)) libraryReport.addIssue(issue);
          continue;
        }
        const unknown = issue.keys.filter((key) => !theTopLevels([...path, key]));
        if (unknown.length > 0) libraryReport.addIssue({ ...issue, keys: unknown });
      }
    }
    checkFiles(effective, librarySources, libraryReport, (dotted) => !inherited(dotted));
    if (!result.success || top === null) return;
    const config = { ...top, sip2: result.data.sip2, paia: result.data.paia, daia: result.data.daia, libraries: null };
    if (!inherited('daia.records')) checkRecordMapping(config, libraryReport);
    loaded.push({ library: { id, config }, warnings });
  });
  return loaded;
}

/**
 * Reads, overrides, validates and freezes the configuration. Throws ConfigError listing every problem.
 * @internal The gateway takes the warnings too (loadConfigWithWarnings); the tests want the config alone.
 */
export function loadConfig(options: LoadOptions = {}): Config {
  return loadConfigWithWarnings(options).config;
}

/** Where DAIA's records come from; of a lookup only the origin (its URL may carry an API key in its query). */
function describeRecords(config: Config): string {
  const { records } = config.daia;
  const prefix = records.idPrefix === null ? 'edition URIs' : `edition URIs and "${records.idPrefix}" ids`;
  const sources = [
    ...(records.file === null ? [] : [records.file]),
    ...(records.http.url === null ? [] : [`a lookup at ${new URL(records.http.url.replace('{record}', 'x')).origin}`]),
  ];
  if (sources.length > 0) return `${prefix}, from ${sources.join(', then ')}`;
  return config.sip2.host === null ? `${prefix}, from the demo mapping` : 'off (no daia.records.file or .http.url)';
}

/**
 * A short, secret-free summary for the start-up log line and `check-config`.
 * With libraries, each library's sip2, paia and daia in file order, in place
 * of the top level's (which only say what the libraries inherit).
 */
export function describeConfig(config: Config): Record<string, unknown> {
  const summary = describeSections(config);
  if (config.libraries === null) return summary;
  const { sip2: _sip2, paia: _paia, daia: _daia, ...shared } = summary;
  return {
    ...shared,
    libraries: config.libraries.map(({ id, config: own }) => {
      const { sip2, paia, daia } = describeSections(own);
      return { id, sip2, paia, daia };
    }),
  };
}

function describeSections(config: Config): Record<string, unknown> {
  const { http, sip2, paia, daia, auth, cache, metrics, log, demo } = config;
  const embedded = sip2.host === null;
  const dialectName = embedded ? demo.dialect : sip2.dialect;
  let charset: string | null = sip2.charset;
  let dialect = dialectName;
  try {
    const loaded = loadDialect(dialectName);
    charset ??= loaded.charset;
    dialect = loaded.name;
  } catch {
    // validated at load; a summary never throws
  }
  return {
    http: {
      listen: `${http.tls ? 'https' : 'http'}://${http.host.includes(':') ? `[${http.host}]` : http.host}:${http.port}${http.basePath}`,
      publicUrl: http.publicUrl,
      tls: http.tls !== null,
      trustedProxy: http.trustedProxy,
      corsOrigins: http.corsOrigins,
      workers: http.workers,
      limits: {
        headersTimeoutMs: http.headersTimeoutMs,
        receiveTimeoutMs: http.receiveTimeoutMs,
        keepAliveTimeoutMs: http.keepAliveTimeoutMs,
        maxConnections: http.maxConnections,
        maxConnectionsPerAddress: http.maxConnectionsPerAddress ?? 'no cap',
      },
    },
    sip2: {
      ils: embedded
        ? `embedded demo simulator on 127.0.0.1:${demo.sip2Port === 0 ? '(free port)' : demo.sip2Port}`
        : `${sip2.host}:${sip2.port}`,
      tls: embedded ? false : sip2.tls !== null,
      dialect,
      charset,
      errorDetection: sip2.errorDetection,
      terminal: sip2.terminal.user,
      location: sip2.terminal.location,
      institution: sip2.institution,
      pool: `${sip2.pool.min}-${sip2.pool.max} connections`,
      timeoutsMs: { connect: sip2.timeouts.connectMs, response: sip2.timeouts.responseMs },
      maintenance:
        sip2.maintenance.length === 0
          ? 'none'
          : sip2.maintenance.map((window) => `${window.days.join(',')} ${window.from}-${window.to} ${window.timeZone}`),
    },
    paia: {
      patronId: paia.patronId,
      // null only in demo mode: the URIs start with where the gateway listens (or http.publicUrl).
      itemUri: paia.itemUri ?? '(the gateway URL)/item/{barcode}',
      editionUri: paia.editionUri ?? '(the gateway URL)/title/{title}',
    },
    daia: {
      maxIds: daia.maxIds ?? paia.maxDocs,
      idsPerMinutePerAddress: daia.idsPerMinutePerAddress,
      exemptClients: daia.exemptClients.length === 0 ? 'none' : daia.exemptClients,
      poolShare: daia.poolShare,
      requestUrl: daia.requestUrl ?? '(the gateway URL)/daia?id={item}&format=json',
      shelfRequests: daia.shelfRequests,
      department: daia.department.content ?? "(the ILS's library name)",
      records: describeRecords(config),
    },
    auth: {
      tokenLifetimeMs: auth.tokenLifetimeMs,
      maxSessions: auth.maxSessions,
      maxSessionsPerPatron: auth.maxSessionsPerPatron,
      requestsPerMinute: auth.requestsPerMinute,
      logoutAllSessions: auth.logoutAllSessions,
      maxLoginsPerSecond: auth.maxLoginsPerSecond,
      allowedClients: auth.allowedClients.length === 0 ? 'any' : auth.allowedClients,
      clients: auth.clients.length === 0 ? 'off' : auth.clients.map((client) => client.id),
      bruteForce: auth.bruteForce,
      passwordPolicy: {
        minLength: auth.passwordPolicy.minLength,
        denyList: `${auth.passwordPolicy.denyList.length} entries`,
      },
    },
    cache: {
      items: cache.items.enabled ? `${cache.items.maxEntries} entries for ${cache.items.ttlMs / 1000} s` : 'off',
      accounts: cache.accounts.enabled
        ? `a patron's reads shared for ${cache.accounts.windowMs / 1000} s, up to ${cache.accounts.maxPatrons} patrons`
        : 'off',
    },
    metrics: metrics.enabled
      ? { path: '/metrics', allowedClients: metrics.allowedClients.length === 0 ? 'any' : metrics.allowedClients }
      : 'off',
    log: log.format === 'json' ? log.level : `${log.level} (${log.format})`,
  };
}
