import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { packagePath } from '../../src/package-root.js';
import { PATRON_STATUS_FLAGS } from '../../src/sip2/index.js';

/**
 * The simulator's library as a data file (JSON). Every date is relative to
 * the day the file is loaded (`dueInDays: -5` = five days ago), so the demo
 * never goes stale. The schema checks what SIP2 can carry: no "|", CR or LF
 * in any value, at most 255 characters, and references between patrons,
 * items and holds that resolve.
 */

export const DEFAULT_DATA_FILE = packagePath('sip2-simulator', 'data', 'demo.json');

const FORBIDDEN = /[|\r\n\0]/;

/** Any value that ends up in a SIP2 field. */
const sipText = z
  .string()
  .max(255, 'must be at most 255 characters')
  .refine((value) => !FORBIDDEN.test(value), 'must not contain "|", CR, LF or NUL');
/** Barcodes and ids: no blanks either (fine-item patterns read them as \S+). */
const ident = sipText.pipe(z.string().regex(/^\S+$/, 'must be non-empty and contain no blanks'));
const money = z.string().regex(/^\d{1,7}\.\d{2}$/, 'must be an amount like "2.50"');
/** Days relative to the day the data is loaded; negative = in the past. */
const days = z.number().int().min(-36500).max(36500);
/** A calendar date written YYYY-MM-DD (birth dates are absolute, not relative). */
const isoDate = z.string().refine((text) => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return false;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return (
    date.getUTCFullYear() === Number(m[1]) &&
    date.getUTCMonth() === Number(m[2]) - 1 &&
    date.getUTCDate() === Number(m[3])
  );
}, 'must be YYYY-MM-DD');
/** The 64 limits BZ, CA, CB are four digits on the wire. */
const limit = z.number().int().min(0).max(9999);

const flagsSchema = z
  .object(
    Object.fromEntries(PATRON_STATUS_FLAGS.map((flag) => [flag, z.boolean().optional()])) as Record<
      (typeof PATRON_STATUS_FLAGS)[number],
      z.ZodOptional<z.ZodBoolean>
    >,
  )
  .strict();

const fineSchema = z
  .object({
    id: ident,
    amount: money,
    /** overdue, processing, lost, ... (one word: fine-item templates read it as \S+). */
    type: ident,
    dateInDays: days.max(0),
    item: ident.optional(),
    /** What the fine is about; defaults to the item's title. */
    about: sipText.optional(),
  })
  .strict();

const patronSchema = z
  .object({
    barcode: ident,
    password: sipText,
    name: sipText,
    email: sipText.optional(),
    address: sipText.optional(),
    phone: sipText.optional(),
    /** Sent as the non-standard field PC. */
    patronClass: sipText.optional(),
    /** Default pickup location for holds; defaults to the data's defaultLocation. */
    homeLibrary: ident.optional(),
    /** Account expiry; absent or null = never expires. */
    expiresInDays: days.nullable().optional(),
    feeLimit: money.optional(),
    /** 64 PB, sent as YYYYMMDD. */
    birthDate: isoDate.optional(),
    /** 64 PI: the patron's internet profile (Y, N or a profile name, as the ILS has it). */
    internetProfile: sipText.optional(),
    /** 64 BZ, CA, CB. A patron at the charged-items limit cannot check out more, at the hold limit place no more holds. */
    holdItemsLimit: limit.optional(),
    overdueItemsLimit: limit.optional(),
    chargedItemsLimit: limit.optional(),
    /** AF and AG of the 24, 26 and 64 about this patron. */
    screenMessage: sipText.optional(),
    printLine: sipText.optional(),
    /** The card is blocked (as by a 01 Block Patron): true, or the reason shown in AF. */
    blocked: z
      .union([z.boolean(), z.string()], { error: 'must be true, false or the reason as text' })
      .refine(
        (value) => typeof value !== 'string' || sipText.safeParse(value).success,
        'must be at most 255 characters without "|", CR, LF or NUL',
      )
      .optional(),
    /** Status flags set by the library (card reported lost ...); expiry and fee blocks are computed. */
    flags: flagsSchema.optional(),
    fines: z.array(fineSchema).default([]),
  })
  .strict();

const loanSchema = z
  .object({
    patron: ident,
    dueInDays: days,
    checkedOutInDays: days.max(0).optional(),
    renewals: z.number().int().min(0).max(99).default(0),
  })
  .strict();

const ITEM_STATES = ['available', 'in-transit', 'lost', 'missing'] as const;

const itemSchema = z
  .object({
    barcode: ident,
    title: sipText,
    /** Identifies the title (edition) for title-level holds; defaults to "t-" + barcode. */
    titleId: ident.optional(),
    callNumber: sipText,
    /** SIP2 media type, 3 digits (000 other, 001 book, 002 magazine, 004 audio tape, 005 video tape, 006 CD ...). */
    mediaType: z
      .string()
      .regex(/^\d{3}$/, 'must be three digits')
      .default('001'),
    permanentLocation: sipText.optional(),
    currentLocation: sipText.optional(),
    owner: sipText.optional(),
    /** CH item properties (a 19 Item Status Update replaces them). */
    itemProperties: sipText.optional(),
    /** Shelf state; "on loan" and "on the hold shelf" follow from loans and waiting holds. */
    status: z.enum(ITEM_STATES).default('available'),
    loan: loanSchema.optional(),
  })
  .strict();

const holdSchema = z
  .object({
    id: ident.optional(),
    patron: ident,
    /** Item-level hold (SIP2 hold type 3) ... */
    item: ident.optional(),
    /** ... or title-level hold (hold type 2), by titleId. */
    title: ident.optional(),
    pickupLocation: ident.optional(),
    placedInDays: days.max(0).default(0),
    expiresInDays: days.optional(),
    /** Present when the item waits on the hold shelf for this patron (item-level holds only). */
    waiting: z.object({ pickupByInDays: days }).strict().optional(),
  })
  .strict()
  .refine(
    (hold) => (hold.item === undefined) !== (hold.title === undefined),
    'a hold needs exactly one of "item" or "title"',
  )
  .refine(
    (hold) => !hold.waiting || hold.item !== undefined,
    'only an item-level hold can be waiting on the hold shelf',
  );

const terminalSchema = z
  .object({
    login: sipText.pipe(z.string().min(1)),
    password: sipText,
    location: sipText.optional(),
  })
  .strict();

const rulesSchema = z
  .object({
    loanPeriodDays: z.number().int().min(1).max(3650).default(28),
    renewalLimit: z.number().int().min(0).max(99).default(3),
    holdExpiryDays: z.number().int().min(1).max(3650).default(365),
    /** How long a returned item waits on the hold shelf for its patron. */
    holdPickupDays: z.number().int().min(1).max(365).default(7),
  })
  .strict();

const dataSchema = z
  .object({
    institution: ident,
    libraryName: sipText,
    currency: z.string().regex(/^[A-Z]{3}$/, 'must be a three-letter currency code'),
    defaultLocation: ident,
    rules: rulesSchema.default({ loanPeriodDays: 28, renewalLimit: 3, holdExpiryDays: 365, holdPickupDays: 7 }),
    terminals: z.array(terminalSchema).min(1),
    patrons: z.array(patronSchema),
    items: z.array(itemSchema),
    holds: z.array(holdSchema).default([]),
  })
  .strict()
  .superRefine((data, ctx) => {
    const patrons = new Set<string>();
    data.patrons.forEach((patron, i) => {
      if (patrons.has(patron.barcode))
        ctx.addIssue({
          code: 'custom',
          path: ['patrons', i, 'barcode'],
          message: `duplicate patron "${patron.barcode}"`,
        });
      patrons.add(patron.barcode);
    });
    const items = new Map<string, (typeof data.items)[number]>();
    const titles = new Set<string>();
    data.items.forEach((item, i) => {
      if (items.has(item.barcode))
        ctx.addIssue({ code: 'custom', path: ['items', i, 'barcode'], message: `duplicate item "${item.barcode}"` });
      items.set(item.barcode, item);
      titles.add(item.titleId ?? `t-${item.barcode}`);
      if (item.loan && !patrons.has(item.loan.patron)) {
        ctx.addIssue({
          code: 'custom',
          path: ['items', i, 'loan', 'patron'],
          message: `unknown patron "${item.loan.patron}"`,
        });
      }
      if (item.loan && item.status !== 'available') {
        ctx.addIssue({
          code: 'custom',
          path: ['items', i, 'status'],
          message: 'an item on loan must have status "available" (on the shelf when returned)',
        });
      }
    });
    data.patrons.forEach((patron, i) => {
      patron.fines.forEach((fine, j) => {
        if (fine.item !== undefined && !items.has(fine.item)) {
          ctx.addIssue({
            code: 'custom',
            path: ['patrons', i, 'fines', j, 'item'],
            message: `unknown item "${fine.item}"`,
          });
        }
      });
    });
    const waiting = new Set<string>();
    data.holds.forEach((hold, i) => {
      if (!patrons.has(hold.patron))
        ctx.addIssue({ code: 'custom', path: ['holds', i, 'patron'], message: `unknown patron "${hold.patron}"` });
      if (hold.item !== undefined) {
        const item = items.get(hold.item);
        if (!item) ctx.addIssue({ code: 'custom', path: ['holds', i, 'item'], message: `unknown item "${hold.item}"` });
        if (hold.waiting && item) {
          if (item.loan || item.status !== 'available' || waiting.has(item.barcode)) {
            ctx.addIssue({
              code: 'custom',
              path: ['holds', i, 'waiting'],
              message: `item "${item.barcode}" cannot wait on the hold shelf (on loan, not available, or already waiting)`,
            });
          }
          waiting.add(item.barcode);
        }
      }
      if (hold.title !== undefined && !titles.has(hold.title)) {
        ctx.addIssue({ code: 'custom', path: ['holds', i, 'title'], message: `unknown title "${hold.title}"` });
      }
    });
  });

/** The fields of each kind of record, in file order (for --help and tests that the README lists them all). */
export const DATA_FIELDS: Readonly<Record<string, readonly string[]>> = {
  '(top)': Object.keys(dataSchema.shape),
  rules: Object.keys(rulesSchema.shape),
  'terminals[]': Object.keys(terminalSchema.shape),
  'patrons[]': Object.keys(patronSchema.shape),
  'patrons[].fines[]': Object.keys(fineSchema.shape),
  'items[]': Object.keys(itemSchema.shape),
  'items[].loan': Object.keys(loanSchema.shape),
  'holds[]': Object.keys(holdSchema.shape),
};

export type LibraryData = z.output<typeof dataSchema>;

/** Validates parsed JSON; throws an Error listing every problem with its record and field. */
export function parseLibraryData(value: unknown, source = 'data'): LibraryData {
  const result = dataSchema.safeParse(value);
  if (!result.success) {
    const reasons = result.error.issues.map((issue) => `${describePath(issue.path, value)}: ${issue.message}`);
    throw new Error(`${source} is invalid: ${reasons.join('; ')}`);
  }
  return result.data;
}

/** Keys that name a record in an error, in order of preference. */
const RECORD_NAMES = ['barcode', 'id', 'login', 'patron'] as const;

/**
 * A path as a reader finds it in the file: `patrons[3] (barcode "emile").birthDate`.
 * Each array element is named by its barcode (or id, login, patron) when it has one.
 */
function describePath(path: readonly PropertyKey[], input: unknown): string {
  let text = '';
  let node: unknown = input;
  for (const key of path) {
    node = node !== null && typeof node === 'object' ? (node as Record<PropertyKey, unknown>)[key] : undefined;
    if (typeof key === 'number') {
      text += `[${key}]`;
      const record = node !== null && typeof node === 'object' ? (node as Record<string, unknown>) : {};
      const name = RECORD_NAMES.find((k) => typeof record[k] === 'string');
      if (name) text += ` (${name} ${JSON.stringify(record[name])})`;
    } else {
      text += `${text ? '.' : ''}${String(key)}`;
    }
  }
  return text || '(top)';
}

/** Reads and validates a data file; throws a readable Error. */
export function loadLibraryData(path: string = DEFAULT_DATA_FILE): LibraryData {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(
      `cannot read data file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`data file ${path} is not valid JSON: ${(error as Error).message}`);
  }
  return parseLibraryData(json, `data file ${path}`);
}

// ------------------------------------------------------------ relative dates

/**
 * The local calendar day `offset` days from `now`, at the given local time
 * (default 23:59:59: due dates and expiry dates mean "until the end of that day").
 */
export function dayFrom(now: Date, offset: number, time: [number, number, number] = [23, 59, 59]): Date {
  return new Date(now.getFullYear(), now.getMonth(), now.getDate() + offset, time[0], time[1], time[2]);
}

/** Adds whole calendar days, keeping the local time of day (DST-safe). */
export function addDays(date: Date, n: number): Date {
  return new Date(
    date.getFullYear(),
    date.getMonth(),
    date.getDate() + n,
    date.getHours(),
    date.getMinutes(),
    date.getSeconds(),
  );
}

// ------------------------------------------------------------ money

/** "2.50" -> 250. Only non-negative amounts with at most two decimals; null otherwise. */
export function parseCents(text: string): number | null {
  const m = /^\s*(\d{1,9})(?:[.,](\d{1,2}))?\s*$/.exec(text);
  if (!m) return null;
  return Number(m[1]) * 100 + Number((m[2] ?? '0').padEnd(2, '0'));
}

/** 250 -> "2.50". */
export function formatCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}
