import fc from 'fast-check';
import iconv from 'iconv-lite';
import type { Charset } from '../../../src/sip2/charset.js';
import type { Sip2DateTime } from '../../../src/sip2/date.js';
import {
  type FixedSpec,
  MESSAGE_SPECS,
  type MessageCode,
  type MessageSpec,
  PATRON_STATUS_FLAGS,
  type Sip2Message,
  SUMMARY_LISTS,
} from '../../../src/sip2/spec.js';

/**
 * fast-check arbitraries for typed SIP2 messages, derived generically from
 * MESSAGE_SPECS: a field added to the catalogue is property-tested at once.
 */

export const MESSAGE_CODES = Object.keys(MESSAGE_SPECS) as MessageCode[];
export const CHARSETS: readonly Charset[] = ['utf-8', 'latin1', 'cp850'];

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const FORBIDDEN = new Set([0x00, 0x0a, 0x0d, 0x7c]); // NUL, LF, CR, |

/** Printable ASCII without the delimiter: what fixed text fields may hold. */
const PRINTABLE = range(0x20, 0x7e)
  .filter((c) => c !== 0x7c)
  .map((c) => String.fromCharCode(c));
/** Every ASCII character a variable-length value may hold, control characters included. */
const ASCII = range(0x01, 0x7f)
  .filter((c) => !FORBIDDEN.has(c))
  .map((c) => String.fromCharCode(c));
const LATIN1_HIGH = range(0x80, 0xff).map((c) => String.fromCharCode(c));
/** The upper half of code page 850 (ü é â ... ░ ▒ ▓ ... ß ...), as iconv-lite maps it. */
const CP850_HIGH = [...iconv.decode(Buffer.from(range(0x80, 0xff)), 'cp850')];
const LATIN1_LETTERS = [...'ÄÖÜäöüßéèêëáàâíìîóòôúùûñÑçÇåÅæÆøØ'];

const codePoint = (min: number, max: number) => fc.integer({ min, max }).map((c) => String.fromCodePoint(c));

/** One character that the charset can carry in a variable-length field. */
function charArb(charset: Charset): fc.Arbitrary<string> {
  switch (charset) {
    case 'cp850':
      return fc.oneof(
        { arbitrary: fc.constantFrom(...PRINTABLE), weight: 4 },
        fc.constantFrom(...ASCII),
        fc.constantFrom(...CP850_HIGH),
      );
    case 'latin1':
      return fc.oneof(
        { arbitrary: fc.constantFrom(...PRINTABLE), weight: 4 },
        fc.constantFrom(...ASCII),
        fc.constantFrom(...LATIN1_LETTERS),
        fc.constantFrom(...LATIN1_HIGH),
      );
    case 'utf-8':
      return fc.oneof(
        { arbitrary: fc.constantFrom(...PRINTABLE), weight: 4 },
        fc.constantFrom(...ASCII),
        fc.constantFrom(...LATIN1_LETTERS),
        codePoint(0x4e00, 0x9fff), // CJK
        codePoint(0x3040, 0x30ff), // kana
        codePoint(0x1f300, 0x1faff), // emoji (surrogate pairs in UTF-16)
        fc
          .integer({ min: 0x01, max: 0x10ffff })
          .filter((c) => !FORBIDDEN.has(c) && (c < 0xd800 || c > 0xdfff))
          .map((c) => String.fromCodePoint(c)),
      );
  }
}

/** Cuts a string to at most `max` UTF-16 code units without splitting a surrogate pair. */
function capUnits(chars: string[], max: number): string {
  let out = '';
  for (const ch of chars) {
    if (out.length + ch.length > max) break;
    out += ch;
  }
  return out;
}

/** A variable-length value: 0-255 characters the charset can carry, never |, CR, LF or NUL. */
function valueArb(charset: Charset): fc.Arbitrary<string> {
  const ch = charArb(charset);
  const short = fc.array(ch, { maxLength: 24 }).map((chars) => capUnits(chars, 255));
  // long values near the limit, built from a repeated random run (cheaper than 255 random picks)
  const long = fc
    .tuple(fc.array(ch, { minLength: 1, maxLength: 16 }), fc.integer({ min: 200, max: 255 }))
    .map(([run, target]) => {
      const chars: string[] = [];
      while (chars.join('').length < target) chars.push(...run);
      return capUnits(chars, target);
    });
  return fc.oneof({ arbitrary: short, weight: 5 }, { arbitrary: long, weight: 1 });
}

export const sip2DateArb: fc.Arbitrary<Sip2DateTime> = fc
  .record({
    year: fc.integer({ min: 1, max: 9999 }),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 31 }),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.integer({ min: 0, max: 59 }),
    zone: fc.constantFrom('    ', '   Z', '0000', '   Q'),
  })
  .filter(({ year, month, day }) => {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    return day <= [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  });

function fixedArb(field: FixedSpec): fc.Arbitrary<unknown> {
  switch (field.kind) {
    case 'text':
      return fc.string({ unit: fc.constantFrom(...PRINTABLE), minLength: field.length, maxLength: field.length });
    case 'yn':
    case 'bit':
      return fc.boolean();
    case 'ynu':
      return fc.constantFrom('Y', 'N', 'U');
    case 'num':
      return fc.option(fc.integer({ min: 0, max: 10 ** field.length - 1 }), { nil: null });
    case 'date':
      return fc.option(sip2DateArb, { nil: null });
    case 'flags':
      return fc.record(Object.fromEntries(PATRON_STATUS_FLAGS.map((flag) => [flag, fc.boolean()])));
    case 'summary':
      return fc.option(fc.constantFrom(...SUMMARY_LISTS), { nil: null });
  }
}

const ALNUM = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'];

/** Two-character field ids the message's spec does not use (nor AY/AZ). */
function extraTagArb(spec: MessageSpec): fc.Arbitrary<string> {
  const used = new Set(spec.fields.map((field) => field.tag));
  return fc
    .tuple(fc.constantFrom(...ALNUM), fc.constantFrom(...ALNUM))
    .map(([a, b]) => a + b)
    .filter((tag) => !used.has(tag) && tag !== 'AY' && tag !== 'AZ');
}

/**
 * A typed message of the given code: every fixed field, the required tagged
 * fields, any subset of the optional ones (repeatable ones as non-empty
 * arrays) and, sometimes, unknown fields.
 */
export function messageArb(code: MessageCode, charset: Charset): fc.Arbitrary<Sip2Message> {
  const spec: MessageSpec = MESSAGE_SPECS[code];
  const value = valueArb(charset);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  const requiredKeys: string[] = [];
  for (const field of spec.fixed) {
    model[field.name] = fixedArb(field);
    requiredKeys.push(field.name);
  }
  for (const field of spec.fields) {
    model[field.name] =
      field.kind === 'yn' ? fc.boolean() : field.repeat ? fc.array(value, { minLength: 1, maxLength: 4 }) : value;
    if (field.required) requiredKeys.push(field.name);
  }
  model.extra = fc.array(fc.tuple(extraTagArb(spec), value), { minLength: 1, maxLength: 4 });
  // structuredClone: plain prototypes everywhere, as the decoder builds them
  return fc.record(model, { requiredKeys }).map((fields) => structuredClone({ code, ...fields }) as Sip2Message);
}

/** Any message of the catalogue. */
export function anyMessageArb(charset: Charset): fc.Arbitrary<Sip2Message> {
  return fc.constantFrom(...MESSAGE_CODES).chain((code) => messageArb(code, charset));
}

/** Feeds the bytes to `push` in chunks of the given sizes (cycled). */
export function inChunks<T>(bytes: Uint8Array, sizes: readonly number[], push: (chunk: Uint8Array) => T[]): T[] {
  const out: T[] = [];
  let pos = 0;
  for (let i = 0; pos < bytes.length; i++) {
    const size = sizes[i % sizes.length] ?? bytes.length;
    out.push(...push(bytes.subarray(pos, pos + size)));
    pos += size;
  }
  return out;
}
