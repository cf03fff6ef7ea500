import { textShape } from '../../backend/fees.js';
import { parseAmount, readAmountInText } from '../../backend/money.js';
import {
  BUILTIN_DIALECTS,
  type Charset,
  type Dialect,
  encodeText,
  LIST_FIELD,
  loadDialect,
  MESSAGE_SPECS,
  messageName,
  parseFineItem,
  SUPPORTED_MESSAGE_CODE,
  SUPPORTED_MESSAGES,
  type SummaryList,
  type SupportedMessage,
} from '../../sip2/index.js';

/**
 * What the ILS's texts say about the configuration, without a network: the
 * messages its 98 says it supports, a charset other than the configured one,
 * fine items (AV) the dialect's patterns do not read, and 64 counts that do
 * not match their lists. Only shapes of fine items and numbers of entries
 * leave this module, never their text: it is patron data.
 */

/** A text decoded with the wrong charset, and which way round. */
export type CharsetFinding = 'single-byte-read-as-utf-8' | 'utf-8-read-as-single-byte';

/**
 * Whether a text looks decoded with the wrong charset: U+FFFD in a UTF-8
 * decode (the ILS sends a single-byte charset), or a single-byte decode whose
 * bytes are valid UTF-8 with non-ASCII characters (the ILS sends UTF-8).
 */
export function charsetFinding(text: string, charset: Charset): CharsetFinding | null {
  if (charset === 'utf-8') return text.includes('\uFFFD') ? 'single-byte-read-as-utf-8' : null;
  // Only ASCII: the same in every charset.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range, NUL included
  if (!/[^\x00-\x7f]/.test(text)) return null;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(encodeText(text, charset));
    return 'utf-8-read-as-single-byte';
  } catch {
    return null;
  }
}

interface FineShape {
  /** Letters a/A, digits 9, the rest as it is (textShape): never the text. */
  shape: string;
  count: number;
  /** The gateway lists such an entry by the one amount in its text; otherwise it leaves it out. */
  listed: boolean;
}

export interface FineFindings {
  /** Non-empty entries read. */
  read: number;
  /** The entries no pattern of the dialect reads, by shape. */
  unmatched: FineShape[];
  /** Patterns derived from the shapes that read every entry of theirs (amount included). */
  patterns: DerivedPattern[];
  /** Entries with an amount in their text that no derived pattern reads. */
  withoutPattern: number;
  /** Entries without any amount: no pattern can help. */
  withoutAmount: number;
  /**
   * Built-in dialects that fit this ILS: their patterns read every unmatched entry that has an amount, and
   * the names and the hold lists point to them too (dialectFits); a match of the fine texts alone is no
   * reason to switch (another system's texts may happen to match a pattern).
   */
  otherDialects: string[];
}

/**
 * What the ILS's answers show of the two other things a dialect file declares and the doctor can observe
 * (config/dialects/*.yaml): its `charset`, from the names and titles, and its `holdLists`, from the 64's
 * two hold lists. Each null when the answers cannot tell (only ASCII; a patron without the right holds).
 */
export interface IlsEvidence {
  /** The kind of charset the ILS writes names and titles in. */
  charset: 'utf-8' | 'single-byte' | null;
  holdLists: Dialect['holdLists'] | null;
}

/**
 * The kind of charset the texts (decoded in `configured`) came in: a wrong-charset finding says which,
 * a non-ASCII text without one says the configured kind is right; only ASCII cannot tell.
 */
export function charsetOfTexts(texts: readonly string[], configured: Charset): IlsEvidence['charset'] {
  const kind = (charset: Charset) => (charset === 'utf-8' ? 'utf-8' : 'single-byte');
  let clean = false;
  for (const text of texts) {
    const finding = charsetFinding(text, configured);
    if (finding === 'utf-8-read-as-single-byte') return 'utf-8';
    if (finding === 'single-byte-read-as-utf-8') return 'single-byte';
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range, NUL included
    if (/[^\x00-\x7f]/.test(text)) clean = true;
  }
  return clean ? kind(configured) : null;
}

/**
 * Which holds the 64's AS lists, from its entries and CD's (the holds not yet available): with all-in-AS
 * every CD entry is in AS too; with ready-in-AS (Koha) the two never share one. Null when they cannot tell:
 * no CD entry (a patron without pending holds), or some CD entries in AS and some not (neither fits).
 */
export function holdListsOf(as: readonly string[], cd: readonly string[]): IlsEvidence['holdLists'] {
  if (cd.length === 0) return null;
  const inAs = new Set(as.map((entry) => entry.trim()));
  const shared = cd.filter((entry) => inAs.has(entry.trim())).length;
  if (shared === 0) return 'ready-in-AS';
  return shared === cd.length ? 'all-in-AS' : null;
}

/** Whether the names and the hold lists point to `dialect`: both must be known, and both its own. */
export function dialectFits(dialect: Dialect, evidence: IlsEvidence): boolean {
  const charset = dialect.charset === 'utf-8' ? 'utf-8' : 'single-byte';
  return evidence.charset === charset && evidence.holdLists === dialect.holdLists;
}

/** The fine items (AV) no pattern of the dialect reads, their shapes, and patterns that would read them. */
export function fineFindings(entries: readonly string[], dialect: Dialect, evidence: IlsEvidence): FineFindings {
  const unmatched = entries.filter((entry) => entry.trim() !== '' && parseFineItem(entry, dialect) === null);
  const shapes = new Map<string, FineShape>();
  const patterns: DerivedPattern[] = [];
  let withoutPattern = 0;
  let withoutAmount = 0;
  const withAmount: string[] = [];
  for (const entry of unmatched) {
    const shape = textShape(entry);
    const listed = readAmountInText(entry) !== null;
    const known = shapes.get(shape);
    if (known) known.count++;
    else shapes.set(shape, { shape, count: 1, listed });
    if (!listed) {
      withoutAmount++;
      continue;
    }
    withAmount.push(entry);
    const derived = patternForShape(fullShape(entry));
    if (derived !== null && readsAmount(entry, derived.pattern, dialect)) {
      if (!patterns.some((known) => known.pattern === derived.pattern)) patterns.push(derived);
    } else {
      withoutPattern++;
    }
  }
  const otherDialects =
    withAmount.length === 0
      ? []
      : BUILTIN_DIALECTS.filter((name) => name !== dialect.name).filter((name) => {
          const other = loadDialect(name);
          return (
            withAmount.every((entry) => amountOf(parseFineItem(entry, other)?.amount) !== null) &&
            dialectFits(other, evidence)
          );
        });
  return {
    read: entries.filter((entry) => entry.trim() !== '').length,
    unmatched: [...shapes.values()],
    patterns,
    withoutPattern,
    withoutAmount,
    otherDialects,
  };
}

/** An amount in a shape: the rule of readAmountInText, with letters as a/A and digits as 9. */
const AMOUNT_IN_SHAPE = /(?<![\p{L}\p{N}_.,\-/])[+-]?(?:([$€£]) ?)?9{1,12}([.,])99(?!\p{N}|[.,]\p{N})/gu;

export interface DerivedPattern {
  pattern: string;
  /** Where the amount stands, for the sysadmin. */
  where: 'alone' | 'at the end' | 'at the start' | 'in between';
}

/**
 * A fine-item pattern for entries of this shape, from where their one amount
 * stands: at the end (Koha's "<description> <amount>"), at the start
 * (Evergreen's legacy "<amount> <type> <title>"), or in between. Null when
 * the shape has no single amount.
 */
export function patternForShape(shape: string): DerivedPattern | null {
  const found = [...shape.matchAll(AMOUNT_IN_SHAPE)];
  if (found.length !== 1) return null;
  const m = found[0]!;
  const [whole, symbol, separator] = m;
  const currency = symbol === undefined ? '' : `${symbol === '$' ? '\\$' : symbol} ?`;
  const amount = `${currency}(?<amount>-?\\d+${separator === ',' ? ',' : '\\.'}\\d{2})`;
  const start = m.index;
  const end = start + whole.length;
  const before = shape.slice(0, start);
  const after = shape.slice(end);
  if (after === '') {
    if (before === '') return { pattern: `^${amount}$`, where: 'alone' };
    const pattern = /\s$/.test(before) ? `^(?<about>.*\\S)\\s+${amount}$` : `^(?<about>.*?)${amount}$`;
    return { pattern, where: 'at the end' };
  }
  if (before === '') {
    return {
      pattern: /^\s/.test(after) ? `^${amount}\\s+(?<about>.*)$` : `^${amount}(?<about>.*)$`,
      where: 'at the start',
    };
  }
  return { pattern: `^.*?(?<![\\p{L}\\p{N}_.,/-])${amount}(?!\\d|[.,]\\d)\\W*(?<about>.*)$`, where: 'in between' };
}

/** The shape of the whole text (textShape stops at 120 characters), taken in pieces. */
function fullShape(text: string): string {
  const chars = Array.from(text);
  let shape = '';
  for (let i = 0; i < chars.length; i += 60) shape += textShape(chars.slice(i, i + 60).join(''));
  return shape;
}

function readsAmount(entry: string, pattern: string, dialect: Dialect): boolean {
  const trial: Dialect = { ...dialect, fineItems: { ...dialect.fineItems, pattern } };
  return amountOf(parseFineItem(entry, trial)?.amount) !== null;
}

function amountOf(text: string | undefined): bigint | null {
  return text === undefined ? null : parseAmount(text);
}

/** What the gateway uses each BX position's message for (the others it never sends). */
const USED_FOR: Partial<Record<SupportedMessage, string>> = {
  scAcsStatus: 'status, keepalive',
  requestResend: 'garbled replies',
  login: 'every connection',
  patronInformation: 'PAIA login, patron, items, fees',
  endPatronSession: 'PAIA logout',
  itemInformation: 'PAIA items',
  hold: 'PAIA request, cancel',
  renew: 'PAIA renew',
};

/** Messages without which a PAIA method cannot work. */
const NEEDED: readonly SupportedMessage[] = ['patronInformation', 'itemInformation', 'renew', 'hold'];

/**
 * The 98's BX read position by position: one row per message (yes, no or ?
 * for a position the ILS left out, its code and 3M name, what the gateway
 * uses it for), and warnings for a message the gateway needs that the ILS
 * says it does not support, or a BX shorter than SIP2 2.00's.
 */
export function supportedMessages(bx: string): { rows: string[]; warnings: string[] } {
  const named = SUPPORTED_MESSAGES.map((message) => {
    const code = SUPPORTED_MESSAGE_CODE[message];
    return { message, code, name: messageName(code), usedFor: USED_FOR[message] };
  });
  const width = Math.max(...named.map((m) => m.name.length));
  const rows = named.map(({ code, name, usedFor }, index) => {
    const flag = bx[index];
    const answer = flag === 'Y' ? 'yes' : flag === 'N' ? 'no ' : '?  ';
    return `${answer}  ${code} ${name.padEnd(width)}${usedFor ? `  used for ${usedFor}` : ''}`;
  });
  const warnings = named
    .filter(({ message }, index) => NEEDED.includes(message) && bx[index] === 'N')
    .map(
      ({ code, name, usedFor }) =>
        `the ILS says it does not support ${code} ${name}, which the gateway needs for ${usedFor}`,
    );
  if (bx.length < SUPPORTED_MESSAGES.length) {
    warnings.push(
      `BX has ${bx.length} of ${SUPPORTED_MESSAGES.length} positions: the ILS may speak an older SIP2 version`,
    );
  }
  return { rows, warnings };
}

// ---------------------------------------------------------------- the 64's counts against the lists

/** One of the six lists of a 64: its count and how many entries a full read found. */
export interface ListCount {
  list: SummaryList;
  /** The 64's count; null for four blanks (unknown). */
  count: number | null;
  /** Non-empty entries read (a server that slices past a list's end pads a page with empty ones). */
  entries: number;
  /** The read stopped at sip2.maxListEntries. */
  capped: boolean;
}

/**
 * How a count stands to its list: it matches; it is blank (the gateway reads
 * that list on every call); the list was read only up to sip2.maxListEntries
 * and the count is not below that (no contradiction); or it differs.
 */
export type CountVerdict = 'matches' | 'blank' | 'capped' | 'differs';

export function countVerdict({ count, entries, capped }: ListCount): CountVerdict {
  if (count === null) return 'blank';
  if (count === entries) return 'matches';
  return capped && count >= entries ? 'capped' : 'differs';
}

/** The 64 field that carries a list (AS, AT, AU, AV, BU, CD), from the codec's table. */
export function listTag(list: SummaryList): string {
  const field = MESSAGE_SPECS['64'].fields.find((candidate) => candidate.name === LIST_FIELD[list]);
  return field && 'tag' in field ? field.tag : '??';
}
