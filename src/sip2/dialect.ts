import { readdirSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { packagePath } from '../package-root.js';
import { CHARSETS } from './charset.js';
import {
  daysIn,
  formatSip2Date,
  isoDateOf,
  isUtcZone,
  parseSip2Date,
  type Sip2DateTime,
  sip2DateFrom,
  toDate,
  UTC_ZONE,
} from './date.js';
import { readDigits } from './digits.js';
import { MESSAGE_SPECS } from './spec.js';

/**
 * How one ILS fills SIP2. A dialect is data (config/dialects/*.yaml), never
 * code: the client reads its wire settings, the backend its list and date
 * conventions, and the simulator speaks it so every dialect can be tested.
 */

export const DATE_FORMATS = ['sip2', 'sip2-utc', 'YYYYMMDD', 'YYYY-MM-DD', 'YYYY-MM-DD HH:MM:SS'] as const;
export type DateFormat = (typeof DATE_FORMATS)[number];

const PATRON_INFO_TAGS: ReadonlySet<string> = new Set(MESSAGE_SPECS['64'].fields.map((field) => field.tag));

const FINE_GROUPS = ['amount', 'currency', 'about', 'item', 'date', 'type', 'id'] as const;

/** One fine-item pattern: a valid regular expression that captures the amount. */
const finePattern = z
  .string()
  .min(1)
  .superRefine((value, ctx) => {
    let re: RegExp;
    try {
      re = new RegExp(value, 'u');
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `is not a valid regular expression (${(error as Error).message})` });
      return;
    }
    if (!re.source.includes('(?<amount>')) {
      ctx.addIssue({ code: 'custom', message: 'must capture the fine amount as a named group (?<amount>...)' });
    }
  });

const fineItemsSchema = z.object({
  /**
   * One pattern, or a list tried in order (first match wins): an ILS can be
   * configured to write fines in several shapes (Evergreen's av_format,
   * Koha's av_field_template), and a list covers them all.
   */
  pattern: z.union([finePattern, z.array(finePattern).min(1, 'must list at least one pattern')]),
  template: z.string().min(1),
});

const dialectSchema = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9-]*$/, 'must be lower-case letters, digits and dashes'),
    description: z.string(),
    charset: z.enum(CHARSETS),
    terminator: z.enum(['CR', 'CRLF']),
    /**
     * all-in-AS: AS lists every hold, CD the ones not yet available (Evergreen, Sierra, FOLIO).
     * ready-in-AS: AS lists only holds ready for pickup, CD the pending ones (Koha).
     */
    holdLists: z.enum(['all-in-AS', 'ready-in-AS']),
    /** The non-standard 64 field carrying the account expiry date, if the ILS sends one. */
    expiry: z
      .object({
        field: z
          .string()
          .regex(/^[A-Z][A-Z0-9]$/, 'must be a two-character SIP2 field id')
          // The expiry is read from the 64's unmodelled fields; a modelled one (AQ, PB ...) never lands there.
          .refine(
            (tag) => !PATRON_INFO_TAGS.has(tag),
            'must not be a field the 64 already uses for something else (AQ, PB, PI, BD ...)',
          ),
        format: z.enum(DATE_FORMATS),
      })
      .nullable(),
    /** AH is free text in SIP2; each ILS picks its own format. */
    dueDateFormat: z.enum(DATE_FORMATS),
    /** AV entries are free text: the pattern reads them, the template writes them (simulator). */
    fineItems: fineItemsSchema,
    /** The most entries this ILS returns in one 64 list, whatever BP/BQ ask for. */
    listLimit: z.number().int().min(1).max(9999),
    /** The BP/BQ page size the client asks for. */
    pageSize: z.number().int().min(1).max(9999),
    /**
     * How far the six counts of a 64 can be trusted. reliable: a count of 0
     * means the list is empty, so the backend does not ask for it (the 3M
     * text: a count the ILS does not know is four blanks, and a blank count
     * is always read as unknown, so that list is asked for). unreliable: the
     * ILS may write 0 (or anything) while the list has entries, so every list
     * is asked for. Default unreliable: a dialect file that says nothing is
     * read the safe way.
     */
    listCounts: z.enum(['reliable', 'unreliable']).default('unreliable'),
    /**
     * Lists whose entries this ILS always also lists as charged items (AU):
     * when the charged list was read completely, these are not asked for.
     */
    chargedIncludes: z.array(z.enum(['overdue', 'recall'])).default([]),
  })
  .strict();

export type Dialect = Readonly<z.infer<typeof dialectSchema>>;
/** The name of a built-in dialect: a file of config/dialects/ without its .yaml. */
export type DialectName = string;

const DIALECT_DIR = `${packagePath('config', 'dialects')}/`;
/** A dialect name, as opposed to the path of a dialect file. */
export const DIALECT_NAME = /^[a-z][a-z0-9-]*$/;

/**
 * The built-in dialects: the files shipped in config/dialects/, generic (the
 * default) first, then by name. The one list every message, the schema, the
 * simulator's --dialect and the tests that cover every dialect are built
 * from: adding a dialect is adding its file (and its README row).
 */
export const BUILTIN_DIALECTS: readonly [DialectName, ...DialectName[]] = (() => {
  const names = readdirSync(DIALECT_DIR)
    .filter((file) => file.endsWith('.yaml'))
    .map((file) => file.slice(0, -'.yaml'.length))
    .filter((name) => DIALECT_NAME.test(name))
    // Code-unit order: the names are [a-z0-9-], and localeCompare would map ICU's collation data into
    // every gateway (about 2 MB of resident memory, bench B4) to sort a handful of them.
    .sort((a, b) => Number(b === 'generic') - Number(a === 'generic') || (a < b ? -1 : a > b ? 1 : 0));
  if (names[0] !== 'generic') throw new Error(`${DIALECT_DIR}generic.yaml is missing: the package is incomplete`);
  return names as [DialectName, ...DialectName[]];
})();

/** The built-in dialects for messages: "generic, evergreen, folio, koha". */
export const BUILTIN_DIALECTS_TEXT = BUILTIN_DIALECTS.join(', ');
const cache = new Map<string, Dialect>();

/** Loads a built-in dialect by name, or a dialect file by path; throws with a readable reason. */
export function loadDialect(nameOrPath: string): Dialect {
  const cached = cache.get(nameOrPath);
  if (cached) return cached;
  const path = DIALECT_NAME.test(nameOrPath) ? `${DIALECT_DIR}${nameOrPath}.yaml` : nameOrPath;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new Error(`dialect "${nameOrPath}" not found (built-in dialects: ${BUILTIN_DIALECTS_TEXT})`);
  }
  const result = dialectSchema.safeParse(parseYaml(text));
  if (!result.success) {
    const reasons = result.error.issues.map((issue) => `${issue.path.join('.') || '(top)'} ${issue.message}`);
    throw new Error(`dialect file ${path} is invalid: ${reasons.join('; ')}`);
  }
  const dialect = Object.freeze(result.data);
  cache.set(nameOrPath, dialect);
  return dialect;
}

export function terminatorOf(dialect: Dialect): '\r' | '\r\n' {
  return dialect.terminator === 'CRLF' ? '\r\n' : '\r';
}

// ----------------------------------------------------------- dialect dates

/** Writes a date the way the dialect's ILS writes it (used by the simulator). */
export function formatDialectDate(value: Sip2DateTime, format: DateFormat): string {
  const date = isoDateOf(value);
  const time = [value.hour, value.minute, value.second].map((n) => String(n).padStart(2, '0')).join(':');
  switch (format) {
    case 'sip2':
      return formatSip2Date(value);
    case 'sip2-utc':
      return formatSip2Date(value.zone === UTC_ZONE ? value : sip2DateFrom(toDate(value), 'utc'));
    case 'YYYYMMDD':
      return date.replaceAll('-', '');
    case 'YYYY-MM-DD':
      return date;
    case 'YYYY-MM-DD HH:MM:SS':
      return `${date} ${time}`;
  }
}

/**
 * Reads a dialect date as a calendar date YYYY-MM-DD, or null when the text
 * does not fit the format. Lenient about what the format says is optional:
 * a SIP2 date or a bare date is accepted whatever the configured format, since
 * ILSs are not consistent across messages.
 */
export function parseDialectDate(text: string, format: DateFormat): string | null {
  const trimmed = text.trim();
  if (format === 'sip2' || format === 'sip2-utc' || trimmed.length === 18) {
    const parsed = parseSip2Date(trimmed.length === 18 ? trimmed : text);
    // A UTC instant is a library-local calendar date; the gateway runs in the library's time zone.
    if (parsed) return isoDateOf(isUtcZone(parsed.zone) ? sip2DateFrom(toDate(parsed), 'local') : parsed);
  }
  const m = /^(\d{4})-?(\d{2})-?(\d{2})(?:[ T]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?$/.exec(trimmed);
  if (!m) return null;
  const [, y, mo, d] = m as unknown as [string, string, string, string];
  // Year 0000 is "no date", as in a SIP2 date (parseSip2Date).
  if (y === '0000') return null;
  // A real day of the Gregorian calendar, checked by arithmetic: a Date per call showed in the CPU profile of B1
  // (every 64 of the generic dialect has its expiry date read this way).
  const month = readDigits(mo);
  const day = readDigits(d);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(readDigits(y), month) ? `${y}-${mo}-${d}` : null;
}

/** Whether `text` is exactly a calendar date YYYY-MM-DD naming a real day (a setting, a date to send as it is). */
export function isIsoDate(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(text) && parseDialectDate(text, 'YYYY-MM-DD') === text;
}

// ------------------------------------------------------------ fine items

export type FineItemParts = Partial<Record<(typeof FINE_GROUPS)[number], string>>;

const patternCache = new Map<string, RegExp>();

/** The dialect's fine-item patterns, in the order they are tried. */
function fineItemPatterns(dialect: Dialect): readonly string[] {
  const { pattern } = dialect.fineItems;
  return typeof pattern === 'string' ? [pattern] : pattern;
}

/** Reads one AV entry with the first of the dialect's patterns that matches; null if none does. */
export function parseFineItem(text: string, dialect: Dialect): FineItemParts | null {
  for (const pattern of fineItemPatterns(dialect)) {
    let re = patternCache.get(pattern);
    if (!re) {
      re = new RegExp(pattern, 'u');
      patternCache.set(pattern, re);
    }
    const m = re.exec(text);
    if (!m?.groups) continue;
    const parts: FineItemParts = {};
    for (const group of FINE_GROUPS) {
      const value = m.groups[group];
      if (value !== undefined) parts[group] = value;
    }
    return parts;
  }
  return null;
}

/** Writes one AV entry with the dialect's template (used by the simulator). */
export function formatFineItem(parts: FineItemParts, dialect: Dialect): string {
  return dialect.fineItems.template.replace(
    /\{(\w+)\}/g,
    (_, name: string) => parts[name as keyof FineItemParts] ?? '',
  );
}
