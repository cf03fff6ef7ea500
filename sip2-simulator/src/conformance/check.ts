import {
  type Charset,
  decodeFrame,
  decodeText,
  encodeText,
  endsWithChecksum,
  type FixedSpec,
  formatSip2Date,
  isMessageCode,
  MAX_FIELD_LENGTH,
  MESSAGE_SPECS,
  type MessageSpec,
  parseSip2Date,
  RESPONSE_CODE,
  Sip2DecodeError,
} from '../../../src/sip2/index.js';
import { CONFORMANCE_RULES, type Deviation, type RuleId } from './rules.js';

/**
 * The conformance check of one message a client (SC) sent, read from its raw
 * bytes before any lenient parsing: what the codec forgives (a missing |, an
 * AZ left out, a short fixed part) is what this names. Pure: the state of the
 * connection comes in as MessageContext (connection.ts keeps it per
 * connection; the session records each message's deviations for the traffic
 * page and the report).
 *
 * The message catalogue of src/sip2/spec.ts is the one source of the layouts:
 * fixed-field lengths and kinds, the values 3M allows (`values`, `format`),
 * required tags, the 3M names.
 */

/** What the check needs to know of the connection when the message arrived. */
export interface MessageContext {
  /** A 93 was accepted on this connection. */
  readonly loggedIn: boolean;
  /** AY and AZ of the previous message that carried both (null: none yet). */
  readonly previous: Trailer | null;
  /** The connection uses error detection: an earlier message carried AZ, or the ACS demands it. */
  readonly checksums: boolean;
  /** The answer to an earlier message had not been sent when this one arrived. */
  readonly outstanding: boolean;
}

/** A message's AY/AZ trailer, as sent. */
export interface Trailer {
  readonly sequence: number;
  /** The four hex digits of AZ, upper case. */
  readonly checksum: string;
}

const CR = 0x0d;
const LF = 0x0a;
/** Commands an SC sends: the requests of the catalogue and 97. */
const COMMANDS: ReadonlySet<string> = new Set([...Object.keys(RESPONSE_CODE), '97']);
const FIELD_ID = /^[A-Za-z0-9]{2}$/;
const UNSUPPORTED_DATE = formatSip2Date(null);

/** The deviations of one message, and its AY/AZ trailer (when it has a sound one) for the next message's context. */
export function inspectMessage(
  raw: Buffer | string,
  context: MessageContext,
  charset: Charset = 'cp850',
): { deviations: Deviation[]; trailer: Trailer | null } {
  const out = new Deviations();
  const bytes = typeof raw === 'string' ? encodeText(raw, charset) : raw;
  const frame = withoutTerminator(bytes, out);
  if (frame.includes(0)) out.add('nul', 'the message holds a NUL byte');
  const text = decodeText(frame, charset);
  const code = text.slice(0, 2);

  if (context.outstanding) out.add('one-at-a-time', `message ${code} sent before the answer to the previous one`);
  if (!context.loggedIn && code !== '93' && code !== '97') out.add('login-first', `message ${code} before a login`);

  const trailer = checkTrailer(frame, text, code, context, out);
  if (!COMMANDS.has(code) || !isMessageCode(code)) {
    // "Command identifiers that are unrecognized should be ignored" (Commands): a command added after 2.00 is no
    // deviation; a message of the ACS sent to it is.
    if (isMessageCode(code)) out.add('unknown-message', `${code} is a message of the ACS, not a command to it`);
    return { deviations: out.list, trailer: trailer.sound };
  }
  const body = text.slice(2, trailer.end);
  if (code !== '97') checkLayout(MESSAGE_SPECS[code], body, trailer.present, out);
  return { deviations: out.list, trailer: trailer.sound };
}

/** Collects deviations, each with its rule's section unless a more precise one is given. */
class Deviations {
  readonly list: Deviation[] = [];

  add(rule: RuleId, detail: string, section: string = CONFORMANCE_RULES[rule].section): void {
    this.list.push({ rule, section, detail });
  }
}

/** The frame without its CR (or CRLF, which the simulator accepts as real ACSs do). */
function withoutTerminator(bytes: Buffer, out: Deviations): Buffer {
  const n = bytes.length;
  if (n > 0 && bytes[n - 1] === CR) return bytes.subarray(0, n - 1);
  if (n > 1 && bytes[n - 1] === LF && bytes[n - 2] === CR) return bytes.subarray(0, n - 2);
  if (n > 0 && bytes[n - 1] === LF) {
    out.add('terminator', 'the message ends in LF, not CR');
    return bytes.subarray(0, n - 1);
  }
  out.add('terminator', 'the message does not end in CR');
  return bytes;
}

/**
 * AY and AZ: where the message text ends, whether a trailer is there, and the
 * trailer when it is sound (a matching checksum), which the next message's
 * sequence is held to.
 */
function checkTrailer(
  frame: Buffer,
  text: string,
  code: string,
  context: MessageContext,
  out: Deviations,
): { end: number; present: boolean; sound: Trailer | null } {
  if (!endsWithChecksum(frame)) {
    // A trailer is recognised right after the last | (or anywhere in a message without one).
    const bar = text.lastIndexOf('|');
    const broken = /(?:AY.)?AZ[^|]{0,6}$/.exec(text);
    if (broken && (bar === -1 || broken.index === bar + 1)) {
      out.add('checksum', 'AZ is not four hex digits at the end of the message');
      return { end: broken.index, present: true, sound: null };
    }
    if (/AY\d$/.test(text)) {
      out.add('sequence', 'AY without the AZ that must follow it');
      return { end: text.length - 3, present: true, sound: null };
    }
    if (context.checksums) out.add('checksum', 'no AZ, although earlier messages on this connection carried one');
    return { end: text.length, present: false, sound: null };
  }
  const checksum = text.slice(-4).toUpperCase();
  let matches = true;
  try {
    decodeFrame(frame, { charset: 'latin1', errorDetection: true });
  } catch (error) {
    if (!(error instanceof Sip2DecodeError)) throw error;
    matches = error.reason !== 'bad-checksum';
  }
  if (!matches) out.add('checksum', 'AZ does not match the message');
  const ay = /AY(.)AZ.{4}$/s.exec(text);
  const end = text.length - (ay ? 9 : 6);
  if (code === '97') {
    if (ay) out.add('sequence', 'a 97 carries AY; the 3M text says it never includes a sequence number');
    return { end, present: true, sound: null };
  }
  if (!ay) {
    out.add('sequence', 'AZ without the AY that must come before it');
    return { end, present: true, sound: null };
  }
  if (!/\d/.test(ay[1]!)) {
    out.add('sequence', 'AY is not a digit 0-9');
    return { end, present: true, sound: null };
  }
  const sequence = Number(ay[1]);
  const previous = context.previous;
  const retransmission = previous?.sequence === sequence && previous.checksum === checksum;
  if (previous && !retransmission && sequence !== (previous.sequence + 1) % 10)
    out.add('sequence', `AY ${sequence} does not follow the previous AY ${previous.sequence}`);
  return { end, present: true, sound: matches ? { sequence, checksum } : null };
}

/** Fixed fields, then tagged fields, against the message's layout in the catalogue. */
function checkLayout(spec: MessageSpec, body: string, trailer: boolean, out: Deviations): void {
  const fixedLength = spec.fixed.reduce((sum, field) => sum + field.length, 0);
  const message = `message ${spec.code}`;
  if (body.length < fixedLength) {
    out.add('fixed-length', `${message} is shorter than its ${fixedLength} fixed characters`);
    return;
  }
  const fixedText = body.slice(0, fixedLength);
  if (fixedText.includes('|')) out.add('fixed-length', `a | among the ${fixedLength} fixed characters of ${message}`);
  let pos = 0;
  const values = new Map<string, string>();
  for (const field of spec.fixed) {
    const value = fixedText.slice(pos, pos + field.length);
    values.set(field.name, value);
    if (!offlineDateUnused(field, value, values)) checkFixed(field, value, pos + 2, out);
    pos += field.length;
  }
  checkTagged(spec, body, fixedLength, trailer, out);
}

/**
 * The nb due date of a 11 or 29 left blank while no block is N. The 3M text
 * makes it a required date, but it is the due date an article got in off-line
 * (store and forward) operation, which a no block N message is not; most SCs
 * send blanks there (the Perl SIPServer's own t/ suite does), and no ACS
 * reads it. Blank with no block Y is still a deviation.
 */
function offlineDateUnused(field: FixedSpec, value: string, before: ReadonlyMap<string, string>): boolean {
  return field.name === 'nbDueDate' && before.get('noBlock') === 'N' && value.trim() === '';
}

function checkFixed(field: FixedSpec, value: string, at: number, out: Deviations): void {
  const where = `${threeMName(field.name)} (positions ${at}-${at + field.length - 1})`;
  const section = `Field Definitions, ${threeMName(field.name)}`;
  if (field.kind === 'date') {
    if (value !== UNSUPPORTED_DATE && parseSip2Date(value) === null)
      out.add('date-format', `${where} is not YYYYMMDDZZZZHHMMSS`, section);
    return;
  }
  const expected = FIXED_VALUES[field.kind](field, value);
  if (expected !== null) out.add('fixed-value', `${where} must be ${expected}`, section);
}

/** Per kind: null when the value is allowed, else what is. */
const FIXED_VALUES: Record<Exclude<FixedSpec['kind'], 'date'>, (field: FixedSpec, value: string) => string | null> = {
  text: (field, value) => restricted(field, value, /^[\x20-\x7e]*$/, 'printable ASCII'),
  yn: (_, value) => (value === 'Y' || value === 'N' ? null : 'Y or N'),
  bit: (_, value) => (value === '0' || value === '1' ? null : '0 or 1'),
  ynu: (_, value) => (/^[YNU]$/.test(value) ? null : 'Y, N or U'),
  num: (field, value) => restricted(field, value, /^\d+$/, `${field.length} digits`),
  flags: (field, value) => (/^[ Y]+$/.test(value) ? null : `Y or blank in each of its ${field.length} positions`),
  summary: (_, value) =>
    /^[ Y]+$/.test(value) && value.indexOf('Y') === value.lastIndexOf('Y')
      ? null
      : 'blanks with at most one Y (one list at a time)',
};

/** The field's own values (spec.ts) where it has them, else what its kind allows. */
function restricted(field: FixedSpec, value: string, otherwise: RegExp, expected: string): string | null {
  if (field.values !== undefined) return field.values.test(value) ? null : `of the form ${field.values.source}`;
  return otherwise.test(value) ? null : expected;
}

/** The tagged part: ids, delimiters, lengths, repeats, forms, then the required ones. */
function checkTagged(spec: MessageSpec, body: string, fixedLength: number, trailer: boolean, out: Deviations): void {
  const tagged = body.slice(fixedLength);
  const byTag = new Map(spec.fields.map((field) => [field.tag, field]));
  const seen = new Set<string>();
  let pos = 0;
  while (pos < tagged.length) {
    const tag = tagged.slice(pos, pos + 2);
    if (pos === 0 && !byTag.has(tag) && misaligned(spec, body, fixedLength, out, !FIELD_ID.test(tag))) return;
    if (!FIELD_ID.test(tag)) {
      out.add('field-id', `a field after ${[...seen].at(-1) ?? 'the fixed part'} has no two-character id`);
      return;
    }
    const bar = tagged.indexOf('|', pos + 2);
    const value = tagged.slice(pos + 2, bar === -1 ? tagged.length : bar);
    if (bar === -1)
      out.add('field-terminator', `${tag} ${trailer ? 'before AY/AZ' : 'at the end'} does not end with |`);
    checkField(spec, byTag.get(tag), tag, value, seen, out);
    seen.add(tag);
    pos = bar === -1 ? tagged.length : bar + 1;
  }
  for (const field of spec.fields) {
    if (field.required && !seen.has(field.tag))
      out.add(
        'required-field',
        `${field.tag} (${threeMName(field.name)}) missing`,
        `Command Messages to the ACS, ${spec.name}`,
      );
  }
  // 15 Hold and 29 Renew: "Either or both of the item identifier and title identifier fields must be present".
  if ((spec.code === '15' || spec.code === '29') && !seen.has('AB') && !seen.has('AJ'))
    out.add('required-field', 'neither AB nor AJ', `Command Messages to the ACS, ${spec.name}`);
}

/**
 * Whether the tagged part starts elsewhere than right after the fixed fields:
 * its first id is none of the message's and one of them stands up to 3
 * characters before or after (a fixed field too short or too long, a
 * client's most common slip), or its first id is no id at all.
 */
function misaligned(spec: MessageSpec, body: string, fixedLength: number, out: Deviations, noId: boolean): boolean {
  const tags = new Set(spec.fields.map((field) => field.tag));
  const at = (k: number) => body.slice(fixedLength + k, fixedLength + k + 2);
  const shift = [-1, 1, -2, 2, -3, 3].find((k) => tags.has(at(k))) ?? (noId ? 0 : undefined);
  if (shift === undefined) return false;
  const how =
    shift === 0 ? '' : `: the fixed part looks ${Math.abs(shift)} character(s) too ${shift < 0 ? 'short' : 'long'}`;
  out.add(
    'fixed-length',
    `the tagged fields of ${spec.code} do not start after its ${fixedLength} fixed characters${how}`,
  );
  return true;
}

function checkField(
  spec: MessageSpec,
  field: MessageSpec['fields'][number] | undefined,
  tag: string,
  value: string,
  seen: ReadonlySet<string>,
  out: Deviations,
): void {
  if (tag === 'AY' || tag === 'AZ') {
    out.add(tag === 'AZ' ? 'checksum' : 'sequence', `${tag} is not at the end of the message in its fixed form`);
    return;
  }
  if (value.length > MAX_FIELD_LENGTH) out.add('field-length', `${tag} is longer than ${MAX_FIELD_LENGTH} characters`);
  if (field === undefined) return; // "Fields with unrecognized field identifiers should be ignored."
  const section = `Field Definitions, ${threeMName(field.name)}`;
  if (seen.has(tag) && !field.repeat) out.add('duplicate-field', `${tag} sent twice in message ${spec.code}`);
  if (field.kind === 'yn' && value !== 'Y' && value !== 'N') out.add('fixed-value', `${tag} must be Y or N`, section);
  if (field.format === 'date') {
    if (value !== UNSUPPORTED_DATE && parseSip2Date(value) === null)
      out.add('date-format', `${tag} is not YYYYMMDDZZZZHHMMSS`, section);
  } else if (field.format !== undefined && !field.format.test(value)) {
    out.add('fixed-value', `${tag} must be of the form ${field.format.source}`, section);
  }
}

/** A catalogue name in the 3M text's words: "nbDueDate" is "nb due date". */
function threeMName(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => ` ${letter.toLowerCase()}`);
}
