import { readDigits } from './digits.js';

/**
 * SIP2 18-character dates: YYYYMMDDZZZZHHMMSS. ZZZZ is four blanks for the
 * ILS's local time, "   Z" for UTC, and other zone letters are allowed; some
 * servers send "0000". We keep the components as the ILS sent them, so a due
 * date stays the library's calendar date whatever time zone the gateway runs in.
 */
export interface Sip2DateTime {
  readonly year: number;
  readonly month: number; // 1-12
  readonly day: number; // 1-31
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  /** The four zone characters exactly as sent ("    " local, "   Z" UTC). */
  readonly zone: string;
}

export const LOCAL_ZONE = '    ';
export const UTC_ZONE = '   Z';
/** "000000000000000000" means the ILS does not support the date (3M SIP2 "date / time sync"). */
export const UNSUPPORTED_DATE = '0'.repeat(18);

/**
 * Parses an 18-char SIP2 date; null for the all-zero "unsupported" value, for year 0000, or anything malformed.
 * Year 0000 is how ILSs write "no date" in a date field (with zeros, or a month and day, after it): read as a
 * date it would be an account expired two thousand years ago, or through JavaScript's two-digit years 1900.
 */
export function parseSip2Date(text: string): Sip2DateTime | null {
  if (text.length !== 18 || text === UNSUPPORTED_DATE) return null;
  const year = readDigits(text, 0, 4);
  const month = readDigits(text, 4, 2);
  const day = readDigits(text, 6, 2);
  const hour = readDigits(text, 12, 2);
  const minute = readDigits(text, 14, 2);
  const second = readDigits(text, 16, 2);
  if (year <= 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return null;
  const value: Sip2DateTime = { year, month, day, hour, minute, second, zone: text.slice(8, 12) };
  return isValid(value) ? value : null;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days in `month` (1-12) of `year` in the Gregorian calendar. */
export function daysIn(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/** A zone is four of blank, A-Z and 0-9 ("    ", "   Z", "0000", " EST" ...). */
function isZone(zone: string): boolean {
  for (let i = 0; i < zone.length; i++) {
    const c = zone.charCodeAt(i);
    if (c !== 32 && !(c >= 65 && c <= 90) && !(c >= 48 && c <= 57)) return false;
  }
  return zone.length === 4;
}

function isValid(v: Sip2DateTime): boolean {
  if (v.month < 1 || v.month > 12 || v.day < 1 || v.hour > 23 || v.minute > 59 || v.second > 60) return false;
  return v.day <= daysIn(v.year, v.month) && isZone(v.zone);
}

/** The last date formatted and its text: the message builder hands the codec one date object per second. */
let lastFormatted: { value: Sip2DateTime; text: string } | null = null;

export function formatSip2Date(value: Sip2DateTime | null): string {
  if (value === null) return UNSUPPORTED_DATE;
  if (lastFormatted?.value === value) return lastFormatted.text;
  const text =
    pad(value.year, 4) +
    pad(value.month, 2) +
    pad(value.day, 2) +
    value.zone +
    pad(value.hour, 2) +
    pad(value.minute, 2) +
    pad(value.second, 2);
  lastFormatted = { value, text };
  return text;
}

/** A JS Date as a SIP2 date, in the process's local time (the SIP2-preferred form) or in UTC. */
export function sip2DateFrom(date: Date, zone: 'local' | 'utc' = 'local'): Sip2DateTime {
  if (zone === 'utc') {
    return {
      year: date.getUTCFullYear(),
      month: date.getUTCMonth() + 1,
      day: date.getUTCDate(),
      hour: date.getUTCHours(),
      minute: date.getUTCMinutes(),
      second: date.getUTCSeconds(),
      zone: UTC_ZONE,
    };
  }
  return {
    year: date.getFullYear(),
    month: date.getMonth() + 1,
    day: date.getDate(),
    hour: date.getHours(),
    minute: date.getMinutes(),
    second: date.getSeconds(),
    zone: LOCAL_ZONE,
  };
}

/** The calendar date as YYYY-MM-DD, exactly as the ILS stated it. */
export function isoDateOf(value: Sip2DateTime): string {
  return `${pad(value.year, 4)}-${pad(value.month, 2)}-${pad(value.day, 2)}`;
}

/** Whether the zone marks UTC: "   Z" per the 3M text, "0000" as some servers send it. */
export function isUtcZone(zone: string): boolean {
  return zone.trim() === 'Z' || zone === '0000';
}

/** An instant: UTC when the zone says so, otherwise the process's local time. */
export function toDate(value: Sip2DateTime): Date {
  const utc = isUtcZone(value.zone);
  const date = utc
    ? new Date(Date.UTC(value.year, value.month - 1, value.day, value.hour, value.minute, value.second))
    : new Date(value.year, value.month - 1, value.day, value.hour, value.minute, value.second);
  // Date reads years 0-99 as 1900-1999; a SIP2 date states all four digits.
  if (value.year < 100) {
    if (utc) date.setUTCFullYear(value.year, value.month - 1, value.day);
    else date.setFullYear(value.year, value.month - 1, value.day);
  }
  return date;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}
