import { isMessageCode, MESSAGE_SPECS } from '../../src/sip2/index.js';

/**
 * A SIP2 wire text cut into its fields by the message catalogue
 * (src/sip2/spec.ts), for people to read: the fixed fields by position and
 * name, the variable ones by their two-letter id and name, AY and AZ last.
 * Unlike the codec it never rejects: the text may be malformed (that is what
 * a tester wants to see) or masked, and what does not fit is shown as it is.
 */

interface WireField {
  /** The two-letter id of a variable field; null for a fixed one. */
  readonly tag: string | null;
  /** The catalogue's name; null for an id no message of the catalogue has. */
  readonly name: string | null;
  readonly value: string;
}

export interface WireFields {
  readonly code: string;
  readonly name: string;
  readonly fields: WireField[];
  /** Fixed part shorter than the layout wants, or text left over. */
  readonly rest: string;
}

/** Every variable field's name by id, over all messages: a field sent where the layout has none is still named. */
const TAG_NAMES: ReadonlyMap<string, string> = new Map(
  Object.values(MESSAGE_SPECS)
    .flatMap((spec) => spec.fields.map((field) => [field.tag, field.name] as const))
    .reverse(),
);

/** The 3M names of the error-detection fields, which the catalogue leaves to the codec. */
const TRAILER_NAMES: Readonly<Record<string, string>> = { AY: 'sequenceNumber', AZ: 'checksum' };

/** The fields of one message; null when the command id is not one of the catalogue's. */
export function wireFields(text: string): WireFields | null {
  const code = text.slice(0, 2);
  if (!isMessageCode(code)) return null;
  const spec = MESSAGE_SPECS[code];
  const fields: WireField[] = [];
  let at = 2;
  for (const fixed of spec.fixed) {
    if (at + fixed.length > text.length) return { code, name: spec.name, fields, rest: text.slice(at) };
    fields.push({ tag: null, name: fixed.name, value: text.slice(at, at + fixed.length) });
    at += fixed.length;
  }
  const trailer = /(?:AY(\d))?AZ([0-9A-Fa-f]{4})$/.exec(text.slice(at));
  const body = trailer ? text.slice(at, at + trailer.index) : text.slice(at);
  const named = new Map(spec.fields.map((field) => [field.tag, field.name]));
  for (const part of body.split('|')) {
    if (part === '') continue;
    const tag = part.slice(0, 2);
    fields.push({ tag, name: named.get(tag) ?? TAG_NAMES.get(tag) ?? null, value: part.slice(2) });
  }
  if (trailer?.[1] !== undefined) fields.push({ tag: 'AY', name: TRAILER_NAMES.AY!, value: trailer[1] });
  if (trailer) fields.push({ tag: 'AZ', name: TRAILER_NAMES.AZ!, value: trailer[2]! });
  return { code, name: spec.name, fields, rest: '' };
}
