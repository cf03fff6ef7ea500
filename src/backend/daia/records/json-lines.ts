/**
 * Where the entries of a JSON document start, by line: pure. JSON.parse
 * says nothing about positions, but a sysadmin fixing an export needs the
 * line of a broken entry. Reads a text JSON.parse has accepted: the
 * top-level container's entries and their entries, with the key of each
 * top-level object entry.
 */

export interface JsonEntry {
  /** 1-based line where the entry's value starts. */
  line: number;
  /** The key, when the top level is an object. */
  key?: string;
  /** Lines where the entries of this entry's value start, when it is an array or object. */
  entries: number[];
}

interface Open {
  kind: '{' | '[';
  /** An object expects a key next (after { or ,), an array or an object after ":" a value. */
  expectValue: boolean;
  /** The entry this container is, at depth 1; null elsewhere. */
  entry: JsonEntry | null;
}

/** The top-level entries of a valid JSON text, in document order (an object's repeated keys each appear). */
export function jsonEntries(text: string): JsonEntry[] {
  const top: JsonEntry[] = [];
  const stack: Open[] = [];
  let line = 1;
  let pendingKey: string | undefined;
  /** A value starts at this line inside the innermost container. */
  const valueStarts = (): JsonEntry | null => {
    const parent = stack.at(-1);
    if (parent === undefined || !parent.expectValue) return null;
    parent.expectValue = false;
    if (stack.length === 1) {
      const entry: JsonEntry = { line, entries: [] };
      if (pendingKey !== undefined) entry.key = pendingKey;
      top.push(entry);
      return entry;
    }
    if (stack.length === 2) parent.entry?.entries.push(line);
    return null;
  };
  for (let at = 0; at < text.length; at += 1) {
    const char = text[at];
    if (char === '\n') line += 1;
    else if (char === '"') {
      let end = at + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const parent = stack.at(-1);
      if (parent?.kind === '{' && !parent.expectValue) {
        if (stack.length === 1) pendingKey = JSON.parse(text.slice(at, end + 1)) as string;
      } else {
        valueStarts();
      }
      at = end;
    } else if (char === '{' || char === '[') {
      const entry = valueStarts();
      stack.push({ kind: char, expectValue: char === '[', entry });
    } else if (char === '}' || char === ']') {
      stack.pop();
    } else if (char === ',') {
      const parent = stack.at(-1);
      if (parent !== undefined) parent.expectValue = parent.kind === '[';
    } else if (char === ':') {
      const parent = stack.at(-1);
      if (parent !== undefined) parent.expectValue = true;
    } else if (char !== ' ' && char !== '\t' && char !== '\r') {
      // The first character of a number, true, false or null; the rest of it is read as it comes.
      valueStarts();
    }
  }
  return top;
}
