import { type Dialect, type PatronInformationResponse, parseDialectDate, parseFineItem } from '../sip2/index.js';
import { formatMoney, type Money, parseAmount, parseCurrency, readAmountInText } from './money.js';
import type { Fee, FeeRecord } from './types.js';
import type { UriTemplates } from './uris.js';

export interface FeeContext {
  dialect: Dialect;
  uris: UriTemplates;
  /** The currency when the ILS sends no (usable) BH. */
  currency: string;
}

/** Why an AV entry was left out, for the log (never the entry text: it is patron data). */
export type UnparsedReason = 'pattern' | 'amount' | 'currency';

/** What one fees call could not read, reported once per call (never the texts: they are patron data). */
export interface UnparsedSummary {
  /** Non-empty entries left out. */
  unparsed: number;
  /** Entries read by the dialect's patterns or, failing them, by the amount in the text. */
  parsed: number;
  reasons: Partial<Record<UnparsedReason, number>>;
  /** Position (0-based, among all entries) and shape of the first few left out. */
  examples: Array<{ index: number; reason: UnparsedReason; shape: string }>;
}

/** How many left-out entries a summary shows by shape. */
const EXAMPLES = 3;

/** Item placeholders that mean "no item" (the fine is not about a document). */
const NO_ITEM = new Set(['', '-']);
const ABSOLUTE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]+$/;

/**
 * The fees record from the fine list (AV) and the account fields of the 64.
 *
 * - Empty entries are skipped silently: servers that slice their lists past
 *   the end (Perl SIPServer, Evergreen) pad a page with empty AV fields.
 * - Each other entry is read with the dialect's patterns, else by the amount
 *   in its text (readAmountInText; the whole text is then `about`), else left
 *   out and reported once per call through onUnparsed.
 * - amount = BV in BH (else the configured currency). Without a readable BV,
 *   the sum of the entries when every entry was read and they share one
 *   currency; otherwise no amount (PAIA allows it) rather than a wrong total.
 */
export function feeRecord(
  first: PatronInformationResponse,
  entries: readonly string[],
  ctx: FeeContext,
  onUnparsed: (summary: UnparsedSummary) => void = () => {},
): FeeRecord {
  const currency = parseCurrency(first.currencyType) ?? ctx.currency;
  const parsed: Array<{ fee: Fee; money: Money }> = [];
  const summary: UnparsedSummary = { unparsed: 0, parsed: 0, reasons: {}, examples: [] };
  entries.forEach((entry, index) => {
    if (entry.trim() === '') return;
    const result = parseFee(entry, currency, ctx);
    if ('fee' in result) {
      parsed.push(result);
      return;
    }
    summary.unparsed += 1;
    summary.reasons[result.reason] = (summary.reasons[result.reason] ?? 0) + 1;
    if (summary.examples.length < EXAMPLES)
      summary.examples.push({ index, reason: result.reason, shape: textShape(entry) });
  });
  summary.parsed = parsed.length;
  if (summary.unparsed > 0) onUnparsed(summary);

  const record: FeeRecord = { fee: parsed.map(({ fee }) => fee) };
  const total = first.feeAmount === undefined ? null : parseAmount(first.feeAmount);
  if (total !== null) {
    record.amount = formatMoney({ cents: total, currency });
  } else if (summary.unparsed === 0) {
    const currencies = new Set(parsed.map(({ money }) => money.currency));
    if (currencies.size <= 1) {
      const cents = parsed.reduce((sum, { money }) => sum + money.cents, 0n);
      record.amount = formatMoney({ cents, currency: [...currencies][0] ?? currency });
    }
  }
  return record;
}

/**
 * One AV entry read with the dialect's patterns, or, when none matches, by
 * the one amount its text carries (the whole text becomes `about`); or why
 * it could not be read.
 */
export function parseFee(
  entry: string,
  defaultCurrency: string,
  ctx: Omit<FeeContext, 'currency'>,
): { fee: Fee; money: Money } | { reason: UnparsedReason } {
  const parts = parseFineItem(entry, ctx.dialect);
  if (!parts) {
    const cents = readAmountInText(entry);
    if (cents === null) return { reason: 'pattern' };
    const money: Money = { cents, currency: defaultCurrency };
    return { fee: { amount: formatMoney(money), about: entry.trim() }, money };
  }
  const cents = parts.amount === undefined ? null : parseAmount(parts.amount);
  if (cents === null) return { reason: 'amount' };
  const currency = parts.currency === undefined ? defaultCurrency : parseCurrency(parts.currency);
  if (currency === null) return { reason: 'currency' };
  const money: Money = { cents, currency };
  const fee: Fee = { amount: formatMoney(money) };
  const date = parts.date === undefined ? null : parseDialectDate(parts.date, 'YYYYMMDD');
  if (date !== null) fee.date = date;
  const about = parts.about?.trim();
  if (about) fee.about = about;
  const item = parts.item?.trim() ?? '';
  if (!NO_ITEM.has(item)) fee.item = ctx.uris.item.build(item);
  const type = parts.type?.trim();
  if (type) fee.feetype = type;
  // PAIA: feeid is the URI of the kind of service that caused the fee; an ILS fine number is not one.
  const id = parts.id?.trim();
  if (id && ABSOLUTE_URI.test(id)) fee.feeid = id;
  return { fee, money };
}

/** The shape of a text without its content (letters a/A, digits 9), so a log can show why a pattern failed. */
export function textShape(text: string): string {
  return text
    .replace(/\p{Lu}/gu, 'A')
    .replace(/\p{Ll}|\p{Lo}|\p{Lt}|\p{Lm}/gu, 'a')
    .replace(/\p{Nd}/gu, '9')
    .slice(0, 120);
}
