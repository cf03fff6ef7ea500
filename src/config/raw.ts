/** The configuration as read from YAML and the environment, before validation. */
export type Raw = Record<string, unknown>;

export function isMapping(value: unknown): value is Raw {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function getIn(raw: unknown, path: readonly (string | number)[]): unknown {
  let current = raw;
  for (const segment of path) {
    // Lists of sections (sip2.maintenance): an issue's path names the entry by its index.
    if (Array.isArray(current)) current = current[Number(segment)];
    else if (isMapping(current)) current = current[segment];
    else return undefined;
  }
  return current;
}

/** Sets a value, turning missing, null, true or false sections on the way into mappings. False when something else is in the way. */
export function setIn(raw: Raw, path: readonly string[], value: unknown): boolean {
  let current = raw;
  for (const segment of path.slice(0, -1)) {
    let next = current[segment];
    if (next === undefined || next === null || typeof next === 'boolean') {
      next = {};
      current[segment] = next;
    }
    if (!isMapping(next)) return false;
    current = next;
  }
  current[path[path.length - 1] as string] = value;
  return true;
}
