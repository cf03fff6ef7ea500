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

export function isCurrency(text: string): boolean {
  return CURRENCY.test(text);
}

/** Parses amount and currency together; null when either does not parse. */
export function parseMoney(amount: string, currency: string | undefined): Money | null {
  const cents = parseAmount(amount);
  const code = parseCurrency(currency);
  return cents === null || code === null ? null : { cents, currency: code };
}

/** Adds amounts of one currency; throws on mixed currencies (that would be a bug, not data). */
export function addMoney(a: Money, b: Money): Money {
  if (a.currency !== b.currency) throw new Error(`cannot add ${a.currency} and ${b.currency}`);
  return { cents: a.cents + b.cents, currency: a.currency };
}

/** -1, 0 or 1; throws on mixed currencies. */
export function compareMoney(a: Money, b: Money): -1 | 0 | 1 {
  if (a.currency !== b.currency) throw new Error(`cannot compare ${a.currency} and ${b.currency}`);
  return a.cents < b.cents ? -1 : a.cents > b.cents ? 1 : 0;
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
