import { type Document, isMap, isScalar } from 'yaml';
import { getIn, isMapping, type Raw } from './raw.js';
import { LIBRARIES_KEY, LIBRARY_SECTIONS } from './schema/libraries.js';

/**
 * The libraries section before validation (issue 29): which libraries the
 * file names, in its order, and each library's effective raw configuration:
 * the top level's values as written (after the environment, which sets the
 * top level only), with the library's own sip2, paia and daia merged over
 * them. load.ts validates that with the whole schema, so what a library
 * leaves out takes the top level's value, not the schema's default.
 */

/**
 * The library ids in the order the file gives them: a JavaScript object puts
 * ids that look like numbers ("830") first, the document does not.
 */
export function libraryIds(doc: Document, section: Raw): string[] {
  const node = doc.get(LIBRARIES_KEY, true);
  const written = isMap(node) ? node.items.map((pair) => String(isScalar(pair.key) ? pair.key.value : pair.key)) : [];
  const keys = Object.keys(section);
  const ordered = written.filter((id) => keys.includes(id));
  return [...ordered, ...keys.filter((id) => !ordered.includes(id))];
}

/** A library's own sections, copied (the loader resolves paths and renames in them); an empty one (`sip2:` alone) gives nothing. */
export function ownSections(entry: unknown): Raw {
  const own: Raw = {};
  if (!isMapping(entry)) return own;
  for (const key of LIBRARY_SECTIONS) {
    const value = entry[key];
    if (value !== undefined && value !== null) own[key] = structuredClone(value);
  }
  return own;
}

/** `over` merged into a copy of `base`: mappings field by field, anything else (a list, a scalar, null) replaces. */
function merged(base: unknown, over: unknown): unknown {
  if (!isMapping(base) || !isMapping(over)) return structuredClone(over);
  const result: Raw = structuredClone(base);
  for (const [key, value] of Object.entries(over)) result[key] = merged(result[key], value);
  return result;
}

/** The top level's raw configuration (without the libraries section) with a library's own sections merged over it. */
export function effectiveRaw(top: Raw, own: Raw): Raw {
  const { [LIBRARIES_KEY]: _libraries, ...rest } = top;
  const result = structuredClone(rest);
  for (const [key, value] of Object.entries(own)) result[key] = merged(result[key], value);
  return result;
}

/** Whether a library takes the setting at `path` from the top level (it does not give it itself). */
export function inherits(own: Raw, path: readonly string[]): boolean {
  return getIn(own, path) === undefined;
}
