import { type Charset, canEncode, decodeText, encodeText } from './charset.js';
import { asciiChecksum, checksum } from './checksum.js';
import { formatSip2Date, parseSip2Date, type Sip2DateTime } from './date.js';
import { readDigits } from './digits.js';
import { Sip2DecodeError, Sip2EncodeError } from './errors.js';
import {
  type ExtraFields,
  type FixedSpec,
  isMessageCode,
  MESSAGE_SPECS,
  type MessageSpec,
  PATRON_STATUS_FLAGS,
  type PatronStatusFlags,
  type Sip2Message,
  SUMMARY_LISTS,
  type SummaryList,
} from './spec.js';

interface WireOptions {
  charset: Charset;
  /** Append (when encoding) and require (when decoding) AY sequence and AZ checksum. */
  errorDetection: boolean;
}

export interface DecodeOptions extends WireOptions {
  /**
   * With error detection on, also accept a frame that carries no AZ at all,
   * as real ACSs do (many clients never send one); a frame that does carry
   * AZ is still verified. Off by default: the client checks every response.
   */
  checksumOptional?: boolean;
}

export interface EncodeOptions extends WireOptions {
  /** AY value 0-9; ignored for 96/97, which never carry a sequence number. */
  sequence?: number;
  /** "\r" per the standard; some ILS configurations want "\r\n". */
  terminator?: '\r' | '\r\n';
  /**
   * What to do with characters the charset cannot represent. The client throws
   * (a password must never be altered silently); a server may replace with '?'.
   */
  unencodable?: 'throw' | 'replace';
}

/** A frame decoded as far as the catalogue allows. */
export type Decoded =
  | { kind: 'message'; message: Sip2Message; sequence: number | null; checksummed: boolean }
  | { kind: 'unknown'; code: string; body: string; sequence: number | null; checksummed: boolean };

/** The longest value a variable-length field may carry (3M SIP2: 0 to 255 characters). */
export const MAX_FIELD_LENGTH = 255;

const NO_SEQUENCE = new Set(['96', '97']);
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const TAG = /^[A-Za-z0-9]{2}$/;

// ---------------------------------------------------------------- encoding

/** Encodes a typed message into wire bytes, terminator included. */
export function encodeMessage(message: Sip2Message, options: EncodeOptions): Buffer {
  if (!isMessageCode(message.code))
    throw new Sip2EncodeError('code', `"${String(message.code)}" is not a SIP2 message this codec knows`);
  const spec: MessageSpec = MESSAGE_SPECS[message.code];
  const record = message as unknown as Record<string, unknown>;
  let text = message.code;
  for (const field of spec.fixed) text += encodeFixed(field, record[field.name]);
  for (const field of spec.fields) {
    const value = record[field.name];
    if (value === undefined) {
      if (field.required) text += `${field.tag}|`;
      continue;
    }
    const values = field.repeat ? (value as string[]) : [value];
    for (const v of values) {
      const s = field.kind === 'yn' ? (v ? 'Y' : 'N') : String(v);
      text += `${field.tag}${checkValue(field.name, s, options)}|`;
    }
  }
  for (const [tag, value] of message.extra ?? []) {
    if (!TAG.test(tag) || tag === 'AY' || tag === 'AZ')
      throw new Sip2EncodeError('extra', `"${tag}" is not a SIP2 field id`);
    text += `${tag}${checkValue(tag, value, options)}|`;
  }
  return frame(text, message.code, options);
}

/** Adds AY/AZ (when error detection is on) and the terminator to a message text. */
function frame(text: string, code: string, options: EncodeOptions): Buffer {
  const terminator = options.terminator ?? '\r';
  if (!options.errorDetection) return encodeText(text + terminator, options.charset);
  let head = text;
  if (!NO_SEQUENCE.has(code)) {
    const seq = options.sequence ?? 0;
    if (!Number.isInteger(seq) || seq < 0 || seq > 9)
      throw new Sip2EncodeError('sequence', 'the AY sequence number must be a digit 0-9');
    head += `AY${seq}`;
  }
  head += 'AZ';
  // Nearly every message is ASCII: its bytes are its character codes in every charset, made once.
  const sum = asciiChecksum(head);
  if (sum !== null) return Buffer.from(head + sum + terminator, 'latin1');
  const headBytes = encodeText(head, options.charset);
  return Buffer.concat([headBytes, Buffer.from(checksum(headBytes) + terminator, 'ascii')]);
}

function checkValue(name: string, value: string, options: EncodeOptions): string {
  if (hasForbiddenCharacter(value)) {
    // Never echo the value: it may be a password.
    throw new Sip2EncodeError(name, `field ${name} contains a character SIP2 cannot carry (|, CR, LF or NUL)`);
  }
  if (value.length > MAX_FIELD_LENGTH) {
    throw new Sip2EncodeError(name, `field ${name} is longer than ${MAX_FIELD_LENGTH} characters`);
  }
  if (!canEncode(value, options.charset)) {
    if (options.unencodable !== 'replace') {
      throw new Sip2EncodeError(name, `field ${name} has characters that ${options.charset} cannot represent`);
    }
    return replaceUnencodable(value, options.charset);
  }
  return value;
}

/** Whether `value` holds |, CR, LF or NUL: one pass over its characters, for every value of every message. */
function hasForbiddenCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code === 0x7c /* | */ || code === 0x0d || code === 0x0a || code === 0) return true;
  }
  return false;
}

function replaceUnencodable(value: string, charset: Charset): string {
  let out = '';
  for (const ch of value) out += canEncode(ch, charset) ? ch : '?';
  return out;
}

/** The 63 summary's positions for each list asked for (null: none, or a value that names no list), made once. */
const SUMMARY_TEXTS = new Map<SummaryList | null, string>(
  [null, ...SUMMARY_LISTS].map((value) => [value, SUMMARY_LISTS.map((list) => (list === value ? 'Y' : ' ')).join('')]),
);

function encodeFixed(field: FixedSpec, value: unknown): string {
  let text: string;
  switch (field.kind) {
    case 'text':
      text = typeof value === 'string' ? value : '';
      break;
    case 'yn':
      text = value ? 'Y' : 'N';
      break;
    case 'bit':
      text = value ? '1' : '0';
      break;
    case 'ynu':
      text = typeof value === 'string' ? value : 'U';
      break;
    case 'num':
      if (value === null || value === undefined) text = ' '.repeat(field.length);
      else text = Number.isInteger(value) && (value as number) >= 0 ? String(value).padStart(field.length, '0') : '';
      break;
    case 'date':
      text = formatSip2Date((value ?? null) as Sip2DateTime | null);
      break;
    case 'flags':
      text = PATRON_STATUS_FLAGS.map((flag) => ((value as PatronStatusFlags | undefined)?.[flag] ? 'Y' : ' ')).join('');
      break;
    case 'summary':
      text = (SUMMARY_TEXTS.get(value as SummaryList) ?? SUMMARY_TEXTS.get(null)!).padEnd(field.length, ' ');
      break;
  }
  if (text.length !== field.length || !PRINTABLE_ASCII.test(text) || text.includes('|')) {
    throw new Sip2EncodeError(
      field.name,
      `fixed field ${field.name} must be ${field.length} printable ASCII characters`,
    );
  }
  return text;
}

// ---------------------------------------------------------------- decoding

/**
 * Decodes one frame (terminator already removed by the FrameDecoder).
 * Throws Sip2DecodeError, and only that, for bytes that are not SIP2.
 */
export function decodeFrame(bytes: Buffer, options: DecodeOptions): Decoded {
  if (bytes.includes(0)) throw new Sip2DecodeError('nul-byte', 'a SIP2 message may not contain NUL bytes');
  const { end, sequence, checksummed } = readTrailer(bytes, options);
  const text = decodeText(bytes.subarray(0, end), options.charset);
  const code = text.slice(0, 2);
  if (code.length !== 2 || readDigits(code) < 0)
    throw new Sip2DecodeError('bad-message-code', 'the message does not start with a two-digit command id');
  if (!isMessageCode(code)) return { kind: 'unknown', code, body: text.slice(2), sequence, checksummed };
  return { kind: 'message', message: decodeBody(code, text.slice(2)), sequence, checksummed };
}

/** Whether a frame (terminator removed) ends in an "AZ<hex4>" checksum field. */
export function endsWithChecksum(bytes: Buffer): boolean {
  const n = bytes.length;
  return (
    n >= 6 &&
    bytes[n - 6] === 0x41 /* A */ &&
    bytes[n - 5] === 0x5a /* Z */ &&
    isHexDigit(bytes[n - 4]!) &&
    isHexDigit(bytes[n - 3]!) &&
    isHexDigit(bytes[n - 2]!) &&
    isHexDigit(bytes[n - 1]!)
  );
}

/** 0-9, A-F or a-f as a byte. */
function isHexDigit(byte: number): boolean {
  return (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66);
}

/** Finds and verifies the "AY<d>AZ<hex4>" trailer; returns where the message text ends. */
function readTrailer(
  bytes: Buffer,
  options: DecodeOptions,
): { end: number; sequence: number | null; checksummed: boolean } {
  const n = bytes.length;
  if (!endsWithChecksum(bytes)) {
    const code = bytes.toString('latin1', 0, 2);
    if (options.errorDetection && !options.checksumOptional && !NO_SEQUENCE.has(code)) {
      throw new Sip2DecodeError('missing-checksum', 'error detection is on but the message carries no AZ checksum');
    }
    return { end: n, sequence: null, checksummed: false };
  }
  const expected = checksum(bytes, n - 4);
  if (bytes.toString('latin1', n - 4, n).toUpperCase() !== expected) {
    // With error detection off, text that merely looks like a trailer is message text.
    if (!options.errorDetection) return { end: n, sequence: null, checksummed: false };
    throw new Sip2DecodeError('bad-checksum', 'the AZ checksum does not match the message');
  }
  let end = n - 6;
  let sequence: number | null = null;
  if (end >= 3 && bytes[end - 3] === 0x41 /* A */ && bytes[end - 2] === 0x59 /* Y */) {
    const digit = bytes[end - 1]!;
    if (digit >= 0x30 && digit <= 0x39) {
      sequence = digit - 0x30;
      end -= 3;
    }
  }
  return { end, sequence, checksummed: true };
}

/** What decoding one message needs of its spec, worked out once per message code. */
interface DecodePlan {
  readonly fixed: readonly FixedSpec[];
  readonly fixedLength: number;
  /** The tagged fields by their id's two character codes (tagCode): no string made per field read. */
  readonly byTag: ReadonlyMap<number, MessageSpec['fields'][number]>;
  /** Fields that get a default (false or '') when the message leaves them out. */
  readonly required: MessageSpec['fields'];
  /** Makes the empty decoded message (newPlainObject). */
  readonly newMessage: new () => Record<string, unknown>;
}

const decodePlans = new Map<string, DecodePlan>();

function decodePlanOf(code: keyof typeof MESSAGE_SPECS): DecodePlan {
  let plan = decodePlans.get(code);
  if (plan === undefined) {
    const spec: MessageSpec = MESSAGE_SPECS[code];
    plan = {
      fixed: spec.fixed,
      fixedLength: spec.fixed.reduce((sum, field) => sum + field.length, 0),
      byTag: new Map(spec.fields.map((field) => [tagCode(field.tag, 0), field])),
      required: spec.fields.filter((field) => field.required),
      newMessage: plainObjectMaker(),
    };
    decodePlans.set(code, plan);
  }
  return plan;
}

/**
 * A constructor of empty plain objects: what it makes has Object.prototype as
 * its prototype and no property, as `{}` has, and is told from one by nothing
 * in JavaScript. Why not `{}`: V8 turns an object that gets more than a dozen
 * properties by computed name into a hash table, as a decoded 64 with its
 * twenty-odd fields was (2.4 KB of garbage per answer, most of the codec's
 * allocations under B1's load, and four times the time to fill); the objects a
 * constructor makes get room for their properties from the first ones made.
 * One constructor per message code, so each code's objects get their own room.
 */
function plainObjectMaker(): new () => Record<string, unknown> {
  function PlainObject(): void {}
  PlainObject.prototype = Object.prototype;
  return PlainObject as unknown as new () => Record<string, unknown>;
}

function decodeBody(code: keyof typeof MESSAGE_SPECS, body: string): Sip2Message {
  const plan = decodePlanOf(code);
  if (body.length < plan.fixedLength) {
    throw new Sip2DecodeError(
      'truncated-fixed-fields',
      `message ${code} is shorter than its ${plan.fixedLength} fixed characters`,
    );
  }
  const out = new plan.newMessage();
  out.code = code;
  let pos = 0;
  for (const field of plan.fixed) {
    out[field.name] = decodeFixed(field, body.slice(pos, pos + field.length));
    pos += field.length;
  }
  const extra: ExtraFields = [];
  // The tagged fields, read in place (splitFields' rules, without an array of pairs): this runs for every answer.
  while (pos < body.length) {
    const stop = fieldEnd(body, pos);
    const field = plan.byTag.get(tagCode(body, pos));
    const value = body.slice(pos + 2, stop);
    if (!field) {
      extra.push([body.slice(pos, pos + 2), value]);
    } else if (field.repeat) {
      out[field.name] ??= [];
      (out[field.name] as string[]).push(value);
    } else if (out[field.name] !== undefined) {
      extra.push([field.tag, value]); // a second copy of a single field: keep it, never overwrite
    } else {
      out[field.name] = field.kind === 'yn' ? value === 'Y' : value;
    }
    pos = stop + 1;
  }
  for (const field of plan.required) {
    if (out[field.name] === undefined) out[field.name] = field.kind === 'yn' ? false : '';
  }
  if (extra.length > 0) out.extra = extra;
  return out as unknown as Sip2Message;
}

/** The two character codes of the field id at `pos` of `text` as one number, the key of DecodePlan.byTag. */
function tagCode(text: string, pos: number): number {
  return (text.charCodeAt(pos) << 8) | text.charCodeAt(pos + 1);
}

/** A letter or digit, as a field id's two characters must be. */
function isTagChar(char: number): boolean {
  return (char >= 48 && char <= 57) || (char >= 65 && char <= 90) || (char >= 97 && char <= 122);
}

/** Where the value of the tagged field at `pos` of "XXvalue|YYvalue|" ends (its "|", or the text's end). */
function fieldEnd(text: string, pos: number): number {
  if (pos + 2 > text.length || !isTagChar(text.charCodeAt(pos)) || !isTagChar(text.charCodeAt(pos + 1)))
    throw new Sip2DecodeError('bad-field-tag', 'a variable-length field does not start with a two-character field id');
  const bar = text.indexOf('|', pos + 2);
  return bar === -1 ? text.length : bar;
}

/**
 * Splits "XXvalue|YYvalue|" into pairs. A last field without its delimiter is accepted.
 * @internal The rules the decoder applies in place; its unit test states them.
 */
export function splitFields(text: string): ExtraFields {
  const fields: ExtraFields = [];
  let pos = 0;
  while (pos < text.length) {
    const stop = fieldEnd(text, pos);
    fields.push([text.slice(pos, pos + 2), text.slice(pos + 2, stop)]);
    pos = stop + 1;
  }
  return fields;
}

function decodeFixed(field: FixedSpec, text: string): unknown {
  switch (field.kind) {
    case 'text':
    case 'ynu':
      return text;
    case 'yn':
      return text === 'Y';
    case 'bit':
      return text === '1';
    case 'num': {
      const value = readDigits(text);
      return value < 0 ? null : value;
    }
    case 'date':
      return parseSip2Date(text);
    case 'flags': {
      const flags = {} as PatronStatusFlags;
      for (let i = 0; i < PATRON_STATUS_FLAGS.length; i++) flags[PATRON_STATUS_FLAGS[i]!] = text[i] === 'Y';
      return flags;
    }
    case 'summary': {
      const index = text.indexOf('Y');
      return index >= 0 && index < SUMMARY_LISTS.length ? (SUMMARY_LISTS[index] as SummaryList) : null;
    }
  }
}

/** The first value of a field the catalogue does not model (PA, PB, PC ...), from a decoded message. */
export function extraField(message: { extra?: ExtraFields }, tag: string): string | undefined {
  return message.extra?.find(([t]) => t === tag)?.[1];
}

/** All flags false: a patron in good standing. */
export function noPatronFlags(): PatronStatusFlags {
  return Object.fromEntries(PATRON_STATUS_FLAGS.map((flag) => [flag, false])) as PatronStatusFlags;
}

/**
 * A wire text safe to log: the values of AC (terminal password), AD (patron
 * password) and CO (login password) replaced by ***. Tagged fields start right
 * after the fixed part and after each "|", so a field value that merely
 * contains "AD" is left alone.
 */
export function redactSecrets(wireText: string): string {
  const code = wireText.slice(0, 2);
  const start = isMessageCode(code) ? 2 + MESSAGE_SPECS[code].fixed.reduce((sum, field) => sum + field.length, 0) : 0;
  const mask = (fields: string, re: RegExp) => fields.replace(re, '$1$2***');
  return start > 0
    ? wireText.slice(0, start) + mask(wireText.slice(start), /(^|\|)(AC|AD|CO)[^|\r]*/g)
    : mask(wireText, /(\|)(AC|AD|CO)[^|\r]*/g);
}
