/**
 * Which values of an ILS API's JSON answer are a record's item barcodes: a
 * small path syntax, pure. Steps are separated by dots; a name picks that
 * field of an object, `[]` takes every entry of an array:
 *
 * - `[].external_id`: the answer is an array of items, each with
 *   `external_id` (Koha's REST API, GET /api/v1/biblios/{id}/items);
 * - `items[].barcode`: an object whose `items` array holds items with
 *   `barcode` (FOLIO's inventory, GET /inventory/items?query=...);
 * - `[]`: an array of barcodes.
 *
 * Field names are letters, digits and _ - $ @ : (what APIs that list
 * items name their fields with).
 */

type Step = { kind: 'field'; name: string } | { kind: 'each' };

export interface FieldPath {
  readonly text: string;
  readonly steps: readonly Step[];
}

/** One step as written: a name (letters, digits, _ - $ @ :), a name followed by `[]`s, or `[]`s alone. */
const SEGMENT = /^([\p{L}\p{N}_$@:-]*)((?:\[\])*)$/u;

/** Why `text` is not a field path, or null. The message completes "the field path ..." for a sysadmin. */
export function fieldPathProblem(text: string): string | null {
  if (text.trim() === '') return 'is empty';
  for (const segment of text.split('.')) {
    const match = SEGMENT.exec(segment);
    if (match === null || segment === '')
      return `has the step ${JSON.stringify(segment)}: each step between dots is a field name (letters, digits, _ - $ @ :), optionally followed by [] (every entry of an array), or [] alone`;
  }
  return null;
}

/** Compiles a path; throws with fieldPathProblem's reason. */
export function compileFieldPath(text: string): FieldPath {
  const problem = fieldPathProblem(text);
  if (problem !== null) throw new Error(`field path ${JSON.stringify(text)} ${problem}`);
  const steps: Step[] = [];
  for (const segment of text.split('.')) {
    const [, name = '', brackets = ''] = SEGMENT.exec(segment) ?? [];
    if (name !== '') steps.push({ kind: 'field', name });
    for (let i = 0; i < brackets.length / 2; i += 1) steps.push({ kind: 'each' });
  }
  return { text, steps };
}

/** The values a path picks, as text; or why the answer does not have the shape the path describes. */
export type Picked = { values: string[] } | { problem: string };

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * The texts `path` picks from `value`, in document order, at most `max`.
 * Missing fields and nulls inside an array's entries are skipped (an item
 * without a barcode); a missing field before any `[]`, or a value of the
 * wrong kind anywhere, means the answer is not what the path describes.
 * Numbers (integers) are read as text: some ILSs send barcodes as numbers.
 */
export function pickTexts(value: unknown, path: FieldPath, max = Number.POSITIVE_INFINITY): Picked {
  let current: unknown[] = [value];
  let inArray = false;
  let where = 'the answer';
  for (const step of path.steps) {
    const next: unknown[] = [];
    for (const entry of current) {
      if (entry === null || entry === undefined) {
        if (inArray) continue;
        return { problem: `${where} is missing` };
      }
      if (step.kind === 'each') {
        if (!Array.isArray(entry)) return { problem: `${where} is ${describe(entry)}, not an array` };
        next.push(...entry);
      } else {
        if (typeof entry !== 'object' || Array.isArray(entry))
          return { problem: `${where} is ${describe(entry)}, not an object with "${step.name}"` };
        const field = (entry as Record<string, unknown>)[step.name];
        if (field === undefined && !inArray) return { problem: `${where} has no "${step.name}"` };
        next.push(field);
      }
    }
    if (step.kind === 'each') inArray = true;
    where = step.kind === 'each' ? `an entry of ${where}` : `"${step.name}" of ${where}`;
    current = next;
  }
  const values: string[] = [];
  for (const entry of current) {
    if (values.length >= max) break;
    if (entry === null || entry === undefined) continue;
    if (typeof entry === 'string') values.push(entry);
    else if (typeof entry === 'number' && Number.isSafeInteger(entry)) values.push(String(entry));
    else return { problem: `${where} is ${describe(entry)}, not a text` };
  }
  return { values };
}
