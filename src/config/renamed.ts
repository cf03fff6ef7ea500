import { getIn, isMapping, type Raw, setIn } from './raw.js';

/**
 * Settings renamed so that every time setting is in milliseconds (`...Ms`).
 * The old `...Seconds` names are still read for one release, in the file and
 * as environment variables (named from the old path by the same rule): each
 * one given is turned into its new setting and named in one warning at
 * start-up. The environment wins over the file whichever name each uses;
 * both names in the file, or both in the environment, at different values,
 * is a problem, since which one should win is not for the gateway to guess.
 * Remove an entry, and its old name is an unknown setting again.
 */

export interface RenamedSetting {
  /** The old dotted path, in seconds, e.g. "sip2.pool.keepaliveSeconds". */
  readonly from: string;
  /** The new dotted path, in milliseconds, e.g. "sip2.pool.keepaliveMs". */
  readonly to: string;
}

/** Renamed in 0.x (CHANGELOG, Unreleased): seconds to milliseconds, the value times 1000. */
export const RENAMED_SETTINGS: readonly RenamedSetting[] = [
  'sip2.pool.keepalive',
  'sip2.pool.maxLifetime',
  'daia.records.fileCheck',
  'daia.records.http.cache',
  'daia.records.http.failureCache',
  'auth.tokenLifetime',
  'auth.bruteForce.lockoutBase',
  'auth.bruteForce.lockoutMax',
  'auth.bruteForce.maxSlowdown',
  'cache.items.ttl',
  'cache.accounts.window',
].map((stem) => ({ from: `${stem}Seconds`, to: `${stem}Ms` }));

/** Where a value came from (env.ts's Sources): the variable or flag, by dotted path. */
type Sources = Map<string, string>;

/**
 * Moves each old setting in `raw` to its new path (seconds times 1000),
 * warning once per old name; returns the problems (both names in the file,
 * or both in the environment, at different values). A value that is not a number is moved as it is, for
 * the schema to report at the new path; `renamedFrom` says where it came from.
 */
export function applyRenames(
  raw: Raw,
  sources: Sources,
  warnings: string[],
): { problems: { path: string; message: string }[]; renamedFrom: Map<string, string> } {
  const problems: { path: string; message: string }[] = [];
  const renamedFrom = new Map<string, string>();
  for (const { from, to } of RENAMED_SETTINGS) {
    const fromPath = from.split('.');
    const parent = getIn(raw, fromPath.slice(0, -1));
    const key = fromPath[fromPath.length - 1] as string;
    if (!isMapping(parent) || !(key in parent)) continue;
    const old = parent[key];
    delete parent[key];
    const source = sources.get(from);
    const oldName = source ?? from;
    const newName = source === undefined ? to : source.replace(/_SECONDS$/, '_MS');
    // Rounded: 1.1 s would be 1100.0000000000002 ms, refused at the new path for a fraction nobody wrote.
    const value = typeof old === 'number' ? Math.round(old * 1000) : old;
    warnings.push(
      `${oldName} is deprecated and will be removed in a coming release: set ${newName} instead, in milliseconds (${oldName} ${String(old)} is ${newName} ${typeof old === 'number' ? value : '(its value times 1000)'})`,
    );
    const current = getIn(raw, to.split('.'));
    const given = current !== undefined && current !== null;
    // The environment wins over the file, whichever name each uses; one layer naming both is a contradiction.
    const newFromEnv = sources.has(to);
    if (given && newFromEnv === (source !== undefined)) {
      if (current !== value) {
        const where = (name: string, path: string) => sources.get(path) ?? `${name} in the configuration file`;
        problems.push({
          path: to,
          message: `is set twice, by ${where(to, to)} (${String(current)} ms) and by the deprecated ${where(from, from)} (${String(old)} s); remove ${from} (or its variable)`,
        });
      }
      continue;
    }
    if (given && newFromEnv) continue;
    setIn(raw, to.split('.'), value);
    renamedFrom.set(to, from);
    if (source !== undefined) sources.set(to, source);
  }
  return { problems, renamedFrom };
}
