import { formatCents } from './data.js';
import type { Fine } from './library.js';
import { pageSlice } from './library.js';
import type { CountMode, FineFormat, Profile } from './profiles.js';

/**
 * What a server profile changes in a 64 Patron Information response: the
 * fine item texts (AV) in the format of one real system, the account fields
 * BV and BH as that system sends them (or not), list pages padded with empty
 * entries, and (listCount fault) lists longer than the patron's.
 * Sources for each format: sip2-simulator/README.md, "Server profiles".
 */

/** Evergreen's fee type in the 3m/swyer formats: from the last billing type (OpenILS/SIP/Patron.pm). */
function evergreenFeeType(fine: Fine): 'LOST' | 'FINE' | 'FEE' {
  if (fine.type === 'lost') return 'LOST';
  if (fine.type === 'overdue') return 'FINE';
  return 'FEE';
}

/** Evergreen billing type names for the simulator's fine types (config.billing_type). */
function evergreenBillingType(fine: Fine): string {
  if (fine.type === 'overdue') return 'Overdue materials';
  if (fine.type === 'lost') return 'Lost Materials';
  return fine.type;
}

/** One AV text as the format's system writes it; null when that system leaves the fine out of AV. */
export function fineText(fine: Fine, format: Exclude<FineFormat, 'dialect'>): string | null {
  const amount = formatCents(fine.amountCents);
  switch (format) {
    case 'sipserver':
      // The sample ILS's fine_items are plain strings ("Computer Time"): no amount.
      return fine.about;
    case 'koha':
      // Default av_field_template: "[% accountline.description %] [% accountline.amountoutstanding | format('%.2f') %]".
      return `${fine.about} ${amount}`;
    case 'eg-legacy':
      // balance_owed, last_billing_type, then "title / author" for a circulation (no author here), else the billing note.
      return `${amount} ${evergreenBillingType(fine)} ${fine.item !== undefined ? `${fine.about} / ` : fine.about}`;
    case 'eg-3m':
      return `${fine.id} $${amount} "${evergreenFeeType(fine)}" ${fine.about}`;
    case 'eg-swyer-b':
      return `Charge-Number: ${fine.id}, Amount-Due: ${amount}, Fine-Type: ${evergreenFeeType(fine)}, Title: ${fine.about}`;
    case 'folio':
      // edge-sip2 lists the item barcode of each open account; an account without an item is counted but not listed.
      return fine.item ?? null;
  }
}

/** The AV list and the fine items count of the fixed part. */
export function fineList(
  fines: readonly Fine[],
  format: FineFormat,
  dialectEntry: (fine: Fine) => string,
): { entries: string[]; count: number } {
  if (format === 'dialect') return { entries: fines.map(dialectEntry), count: fines.length };
  const entries = fines.map((fine) => fineText(fine, format)).filter((text): text is string => text !== null);
  return { entries, count: fines.length };
}

/** A Perl number as Perl prints it: 3.5, 12, 2.25 (Koha's fee_amount is the account balance as a number). */
export function perlNumber(cents: number): string {
  return formatCents(cents).replace(/\.?0+$/, '');
}

/** A Java Float as Float.toString prints it: 3.5, 12.0 (edge-sip2's total of the remaining amounts). */
export function javaFloat(cents: number): string {
  return formatCents(cents)
    .replace(/(\.\d*?)0+$/, '$1')
    .replace(/\.$/, '.0');
}

/** Which of BV and BH the format's system sends, and how it writes BV. */
const ACCOUNT_FIELDS: Record<FineFormat, { bv: ((cents: number) => string) | null; bh: boolean }> = {
  dialect: { bv: formatCents, bh: true },
  // Sample ILS patrons have no fee_amount and no currency; maybe_add leaves both out.
  sipserver: { bv: null, bh: false },
  // ILS::Patron never sets currency, so BH is never sent.
  koha: { bv: perlNumber, bh: false },
  'eg-legacy': { bv: formatCents, bh: true },
  'eg-3m': { bv: formatCents, bh: true },
  'eg-swyer-b': { bv: formatCents, bh: true },
  // BH from the tenant's configured currency.
  folio: { bv: javaFloat, bh: true },
};

/** BV and BH for the 64 under this profile. */
export function accountFields(
  totalCents: number,
  currency: string,
  profile: Profile,
): { feeAmount?: string; currencyType?: string } {
  const habits = ACCOUNT_FIELDS[profile.fines];
  const out: { feeAmount?: string; currencyType?: string } = {};
  if (profile.bh ?? habits.bh) out.currencyType = currency;
  if (profile.bv ?? habits.bv !== null) out.feeAmount = (habits.bv ?? formatCents)(totalCents);
  return out;
}

/**
 * One page of a list for BP/BQ, capped by the dialect's list limit. With
 * padding, positions past the end of the list up to BQ are empty entries, as
 * a Perl slice `@list[$start-1 .. $end-1]` returns undef there and add_field
 * writes undef as an empty field.
 */
export function listPage(
  list: readonly string[],
  startItem: string | undefined,
  endItem: string | undefined,
  limit: number,
  pad: boolean,
): string[] {
  const page = pageSlice(list, startItem, endItem, limit);
  if (!pad) return page;
  const start = position(startItem) ?? 1;
  const end = position(endItem);
  if (end === null || end < start) return page;
  const last = Math.min(end, start + limit - 1);
  while (start + page.length - 1 < last) page.push('');
  return page;
}

function position(text: string | undefined): number | null {
  if (text === undefined || !/^\s*\d+\s*$/.test(text)) return null;
  const n = Number(text);
  return n >= 1 ? n : null;
}

/** The largest count the 4-digit fixed fields of a 64 can carry. */
export const MAX_LIST_COUNT = 9999;

/** A synthesised list entry (listCount fault): unique per list and position, unknown to the library. */
export function syntheticEntry(list: string, index: number): string {
  return `x-${list.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}-${String(index).padStart(4, '0')}`;
}

/** The list as the listCount fault announces it: exactly n entries, the real ones first. */
export function inflateList(list: string, entries: readonly string[], n: number): string[] {
  const out = entries.slice(0, n);
  for (let i = out.length + 1; i <= n; i++) out.push(syntheticEntry(list, i));
  return out;
}

/** The six counts as the profile's system writes them (null: four blanks). */
export function writtenCounts<K extends string>(counts: Record<K, number>, mode: CountMode): Record<K, number | null> {
  const written = { ...counts } as Record<K, number | null>;
  for (const name of Object.keys(written) as K[]) {
    if (mode === 'zero') written[name] = 0;
    else if (mode === 'blank' || (mode === 'folio' && name === 'unavailableHold')) written[name] = null;
  }
  return written;
}
