import { isSip2Barcode } from '../barcode.js';
import { separatorOf, splitCsvLine } from './csv-line.js';
import { type JsonEntry, jsonEntries } from './json-lines.js';

/**
 * A mapping file as a library exports it from its ILS, record id and item
 * barcode, read into record id -> barcodes: pure. Two formats, told apart
 * by the first character that is not a space:
 *
 * - JSON (`{` or `[`): `{"<record>": ["<barcode>", ...], ...}` or
 *   `[{"record": "<record>", "barcode": "<barcode>"}, ...]`; ids and
 *   barcodes may be strings or whole numbers.
 * - CSV (anything else): one `record,barcode` pair per line, separated by a
 *   comma, a semicolon or a tab (as the first line has it), quoted fields
 *   allowed, further columns ignored; an optional header line whose second
 *   column names the barcode (`biblionumber,barcode`); blank lines and
 *   lines starting with # are skipped.
 *
 * A broken line (entry) is left out and named with its line number; the
 * rest serves. Only a file that is no mapping at all (JSON that does not
 * parse, the wrong kind of JSON, or lines of which none is usable) is an
 * error as a whole.
 */

export interface MappingProblem {
  /** 1-based line number in the file. */
  line: number;
  message: string;
}

export interface RecordMapping {
  /** Barcodes by record id, each list in file order without repeats. */
  readonly records: ReadonlyMap<string, readonly string[]>;
  /** Barcodes over all records. */
  readonly copies: number;
}

export interface ParsedMapping {
  mapping: RecordMapping;
  format: 'csv' | 'json';
  /** Broken lines, left out, in file order. */
  problems: MappingProblem[];
}

/** The file is no mapping at all: nothing of it can serve. */
export class RecordMappingError extends Error {
  override readonly name = 'RecordMappingError';
}

/**
 * Default of daia.records.maxItemsPerRecord: more copies than a library has
 * of any one title, few enough that one record's 17s stay a small part of a
 * request (a record counts as one id against the DAIA limits).
 */
export const DEFAULT_MAX_ITEMS_PER_RECORD = 100;

export interface MappingOptions {
  /** Most barcodes kept per record (daia.records.maxItemsPerRecord, default 100); later ones are left out and named. */
  maxItemsPerRecord?: number;
}

/** Collects pairs in file order; repeats are dropped, a record's barcodes past the bound are named once. */
class MappingBuilder {
  readonly records = new Map<string, string[]>();
  readonly problems: MappingProblem[] = [];
  /** Pairs (or entries) read, usable or not. */
  entries = 0;
  copies = 0;
  private readonly full = new Set<string>();

  constructor(private readonly maxItems: number) {}

  add(record: unknown, barcode: unknown, line: number): void {
    this.entries += 1;
    const recordId = textOf(record);
    const code = textOf(barcode);
    const problem = pairProblem(recordId, code);
    if (problem !== null || recordId === null || code === null) {
      this.problem(line, problem ?? 'has no record id');
      return;
    }
    let barcodes = this.records.get(recordId);
    if (barcodes === undefined) {
      barcodes = [];
      this.records.set(recordId, barcodes);
    }
    if (barcodes.includes(code)) return;
    if (barcodes.length >= this.maxItems) {
      if (!this.full.has(recordId)) {
        this.full.add(recordId);
        this.problem(
          line,
          `is copy ${this.maxItems + 1} of record ${JSON.stringify(recordId)}: only the first ${this.maxItems} copies of a record are answered (daia.records.maxItemsPerRecord)`,
        );
      }
      return;
    }
    barcodes.push(code);
    this.copies += 1;
  }

  /** An entry that is no pair at all. */
  broken(line: number, message: string): void {
    this.entries += 1;
    this.problem(line, message);
  }

  problem(line: number, message: string): void {
    this.problems.push({ line, message });
  }
}

/** What is wrong with a pair, or null. */
function pairProblem(recordId: string | null, code: string | null): string | null {
  if (recordId === null || recordId === '') return 'has no record id';
  if (code === null || code === '') return `has no barcode for record ${JSON.stringify(recordId)}`;
  if (!isSip2Barcode(code))
    return `has a barcode SIP2 cannot carry (control characters, "|" or more than 255 characters) for record ${JSON.stringify(recordId)}`;
  return null;
}

/** A string, or a whole number as text; null for anything else. */
function textOf(value: unknown): string | null {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return null;
}

/** Reads a mapping file's text; throws RecordMappingError when none of it can serve. */
export function parseRecordMapping(text: string, options: MappingOptions = {}): ParsedMapping {
  const body = text.replace(/^\uFEFF/, '');
  const first = body.trimStart()[0];
  const builder = new MappingBuilder(options.maxItemsPerRecord ?? DEFAULT_MAX_ITEMS_PER_RECORD);
  const format = first === '{' || first === '[' ? 'json' : 'csv';
  if (format === 'json') readJson(body, builder);
  else readCsv(body, builder);
  const [firstProblem] = builder.problems;
  if (builder.entries > 0 && builder.copies === 0)
    throw new RecordMappingError(
      `has no usable record id and barcode in ${builder.entries} ${builder.entries === 1 ? 'entry' : 'entries'}${firstProblem ? `: line ${firstProblem.line} ${firstProblem.message}` : ''}`,
    );
  return { mapping: { records: builder.records, copies: builder.copies }, format, problems: builder.problems };
}

/** CSV lines into the builder. */
function readCsv(text: string, builder: MappingBuilder): void {
  let separator: string | null = null;
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = index + 1;
    if (raw.trim() === '' || raw.trimStart().startsWith('#')) continue;
    const isFirst = separator === null;
    separator ??= separatorOf(raw);
    const fields = splitCsvLine(raw, separator);
    if (isFirst && fields !== null && /barcode/i.test(fields[1] ?? '')) continue;
    if (fields === null) builder.broken(line, 'has a quoted field that is not closed');
    else if (fields.length < 2)
      builder.broken(
        line,
        `has one field only, needs a record id and a barcode separated by ${separator === '\t' ? 'a tab' : `"${separator}"`}`,
      );
    else builder.add(fields[0], fields[1], line);
  }
}

/** JSON entries into the builder. */
function readJson(text: string, builder: MappingBuilder): void {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RecordMappingError(`is not valid JSON: ${(error as Error).message}`);
  }
  const positions = jsonEntries(text);
  if (Array.isArray(value)) {
    for (const [index, entry] of (value as unknown[]).entries()) {
      const line = positions[index]?.line ?? 0;
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
        builder.broken(line, 'is not an object {"record": ..., "barcode": ...}');
      else builder.add((entry as Record<string, unknown>).record, (entry as Record<string, unknown>).barcode, line);
    }
    return;
  }
  if (typeof value !== 'object' || value === null)
    throw new RecordMappingError(
      'is JSON but no mapping: give {"<record>": ["<barcode>", ...]} or [{"record": ..., "barcode": ...}]',
    );
  // Object keys come out of JSON.parse with integer-like keys first: the positions are looked up by key (the last of repeats, as JSON.parse keeps).
  const byKey = new Map<string, JsonEntry>(positions.map((entry) => [entry.key ?? '', entry]));
  for (const [record, barcodes] of Object.entries(value as Record<string, unknown>)) {
    const position = byKey.get(record);
    const line = position?.line ?? 0;
    if (typeof barcodes === 'string' || typeof barcodes === 'number') {
      builder.add(record, barcodes, line);
    } else if (Array.isArray(barcodes)) {
      barcodes.forEach((barcode: unknown, index) => {
        builder.add(record, barcode, position?.entries[index] ?? line);
      });
    } else {
      builder.broken(line, `has ${JSON.stringify(record)} with neither a barcode nor a list of barcodes`);
    }
  }
}
