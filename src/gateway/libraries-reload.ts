import { isDeepStrictEqual } from 'node:util';
import type { Config } from '../config/index.js';

/**
 * What a SIGHUP changes in a gateway with several libraries (issue 29),
 * decided from the running libraries and the configuration read again: a
 * library is its sip2, paia and daia (its own settings over the top level's,
 * as the loader merged them), so those decide whether it changed. Every other
 * section (http, state, auth, cache, metrics, log, demo) belongs to the
 * process, which built its listener, its stores and its limits from it once:
 * a change there is not applied and only named, and every library keeps being
 * built from the running top level, so that no two libraries differ in it.
 */

/** The sections a library is made of; the rest of a Config is the process's. */
const LIBRARY_SECTIONS = ['sip2', 'paia', 'daia'] as const;

/** A library as it runs or as the file now gives it. */
export interface LibraryEntry {
  readonly id: string;
  readonly config: Config;
}

export interface ReloadPlan {
  /** In the file but not running: built, then served. */
  readonly added: readonly LibraryEntry[];
  /** Running with other settings: the new one built, then swapped in, then the old one drained. */
  readonly replaced: readonly LibraryEntry[];
  /** Running but no longer in the file: no new calls, the calls in flight finish, then its pool closes. */
  readonly removed: readonly string[];
  /** Running, in the file with the same settings: not touched. */
  readonly unchanged: readonly string[];
  /** Running, and its new entry is invalid: it keeps running as it is. */
  readonly kept: readonly string[];
  /** Settings the file changed and a reload does not apply (dotted paths, no values): the process's, and a running library's paia.patronIdSecret. */
  readonly notApplied: readonly string[];
}

/**
 * The plan from the running libraries, the new configuration (its libraries
 * without the refused ones) and the ids whose entries were refused. `running`
 * is the top level the gateway started with: what the new libraries are built on.
 */
export function planReload(
  running: Config,
  current: readonly LibraryEntry[],
  next: Config,
  refused: readonly string[],
): ReloadPlan {
  const wanted = next.libraries ?? [];
  const currentById = new Map(current.map((entry) => [entry.id, entry]));
  const added: LibraryEntry[] = [];
  const replaced: LibraryEntry[] = [];
  const unchanged: string[] = [];
  const notApplied: string[] = [];
  for (const { id, config } of wanted) {
    const now = currentById.get(id);
    const entry = { id, config: onTopOf(running, now === undefined ? config : keepingSecret(now.config, config)) };
    if (now !== undefined && entry.config.paia.patronIdSecret !== config.paia.patronIdSecret)
      notApplied.push(`libraries[${id}].paia.patronIdSecret`);
    if (now === undefined) added.push(entry);
    else if (sameLibrary(now.config, entry.config)) unchanged.push(id);
    else replaced.push(entry);
  }
  const inFile = new Set(wanted.map(({ id }) => id));
  const kept = current.filter(({ id }) => !inFile.has(id) && refused.includes(id)).map(({ id }) => id);
  const removed = current.filter(({ id }) => !inFile.has(id) && !refused.includes(id)).map(({ id }) => id);
  return { added, replaced, removed, unchanged, kept, notApplied: [...processChanges(running, next), ...notApplied] };
}

/**
 * A running library's new settings with its running paia.patronIdSecret: the
 * key of the patron URIs its tokens were issued with and of the hashed names
 * in its state store (which a replacement takes over), so a new key waits
 * for a restart, as the process's settings do.
 */
function keepingSecret(running: Config, library: Config): Config {
  return { ...library, paia: { ...library.paia, patronIdSecret: running.paia.patronIdSecret } };
}

/** A library's sections from the file on the running top level. */
function onTopOf(running: Config, library: Config): Config {
  return { ...running, sip2: library.sip2, paia: library.paia, daia: library.daia, libraries: null };
}

function sameLibrary(a: Config, b: Config): boolean {
  return LIBRARY_SECTIONS.every((section) => isDeepStrictEqual(a[section], b[section]));
}

/** The dotted paths of the process's settings that differ; a list or a leaf is one path. */
function processChanges(running: Config, next: Config): string[] {
  const changed: string[] = [];
  const walk = (a: unknown, b: unknown, path: string): void => {
    if (isDeepStrictEqual(a, b)) return;
    if (isSection(a) && isSection(b)) {
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[key], b[key], `${path}.${key}`);
      return;
    }
    changed.push(path);
  };
  for (const key of Object.keys(running) as (keyof Config)[]) {
    if (key === 'libraries' || (LIBRARY_SECTIONS as readonly string[]).includes(key)) continue;
    walk(running[key], next[key], key);
  }
  return changed;
}

function isSection(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
