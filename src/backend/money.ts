/**
 * Exact money: amounts are integer cents in BigInt, never floats. ILSs write
 * amounts loosely ("2.5", "2.50", "12", "-1.00", "1,50", "+3"); PAIA wants
 * `x.xx CUR` (a negative sum as `-x.xx CUR`).
 */

export interface Money {
  /** Integer cents; negative for a credit. */
  readonly cents: bigint;
  /** ISO 4217 style: three upper-case letters. */
  readonly currency: string;
}

/** Sign, digits, optional decimal point or comma, digits. Compiled once. */
const AMOUNT = /^([+-])?(\d*)(?:[.,](\d*))?$/;
const CURRENCY = /^[A-Z]{3}$/;
/** Longer amounts are not money an ILS sends; refusing them bounds the BigInt work. */
const MAX_AMOUNT_LENGTH = 32;

/**
 * Parses an ILS amount into cents, or null for anything else. Digits beyond
 * the second decimal must be zeros ("2.500"): sub-cent amounts are refused
 * rather than rounded.
 */
export function parseAmount(text: string): bigint | null {
  const trimmed = text.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_AMOUNT_LENGTH) return null;
  const m = AMOUNT.exec(trimmed);
  if (!m) return null;
  const [, sign, whole = '', fraction = ''] = m;
  if (whole.length === 0 && fraction.length === 0) return null;
  if (/[1-9]/.test(fraction.slice(2))) return null;
  const cents = BigInt(whole || '0') * 100n + BigInt(fraction.slice(0, 2).padEnd(2, '0'));
  return sign === '-' ? -cents : cents;
}

/** A currency code as PAIA wants it (upper case), or null when the text is not three letters. */
export function parseCurrency(text: string | undefined): string | null {
  const code = (text ?? '').trim().toUpperCase();
  return CURRENCY.test(code) ? code : null;
}

/** `x.xx CUR`, `-x.xx CUR` for a negative amount. */
export function formatMoney(money: Money): string {
  if (!CURRENCY.test(money.currency)) throw new Error(`"${money.currency}" is not a currency code`);
  const negative = money.cents < 0n;
  const abs = negative ? -money.cents : money.cents;
  const whole = abs / 100n;
  const fraction = (abs % 100n).toString().padStart(2, '0');
  return `${negative ? '-' : ''}${whole}.${fraction} ${money.currency}`;
}

/**
 * An amount written in free text (an AV entry no dialect pattern reads, such
 * as Koha's "Overdue fine 30002 2.50"), or null when there is none or more
 * than one could be meant. The rule:
 *
 * - An amount has a decimal point or comma followed by exactly two digits
 *   ("2.50", "2,50", "-1.00", "$2.50", "€ 3,00"). Whole numbers are never
 *   amounts: item barcodes, ids, years and counts are whole numbers, while
 *   every fine format we know writes money with two decimals.
 * - It stands alone: no letter, digit, "_", ".", ",", "-" or "/" right before
 *   it (its sign aside), and no digit, nor "." or "," followed by a digit,
 *   right after it. So dates and versions ("01.08.2019", "2026-11-01",
 *   "it-12.50", "1.2.30") are not read as money.
 * - Exactly one such amount: it is the amount. Several: the one marked with a
 *   currency ($ € £ before it, or a three-letter code next to it) if exactly
 *   one is; otherwise the text is ambiguous and null.
 */
export function readAmountInText(text: string): bigint | null {
  if (text.length > 1000) return null;
  const candidates: Array<{ cents: bigint; marked: boolean }> = [];
  for (const m of text.matchAll(AMOUNT_IN_TEXT)) {
    const [, sign = '', symbol, digits = ''] = m;
    const cents = parseAmount(`${sign}${digits}`);
    if (cents === null) continue;
    const before = text.slice(0, m.index);
    const after = text.slice(m.index + m[0].length);
    const marked =
      symbol !== undefined ||
      /(?:^|[^\p{L}])[A-Z]{3} ?$/u.test(before) ||
      /^ ?(?:[A-Z]{3}(?!\p{L})|[$€£])/u.test(after);
    candidates.push({ cents, marked });
  }
  if (candidates.length === 1) return candidates[0]!.cents;
  const marked = candidates.filter((c) => c.marked);
  return marked.length === 1 ? marked[0]!.cents : null;
}

const AMOUNT_IN_TEXT = /(?<![\p{L}\p{N}_.,\-/])([+-])?(?:([$€£]) ?)?(\d{1,12}[.,]\d{2})(?!\p{N}|[.,]\p{N})/gu;
