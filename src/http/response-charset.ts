/**
 * Response charset negotiation (spec: Accept-Charset first, then the charset
 * parameter of Accept, else UTF-8 or ISO-8859-1) and encoding. ISO-8859-1
 * output is lossless: every non-ASCII character is written as a JSON \uXXXX
 * escape, so the bytes are plain ASCII and decode the same in either charset.
 */
export type ResponseCharset = 'utf-8' | 'iso-8859-1';

const DEFAULT_RESPONSE_CHARSET: ResponseCharset = 'utf-8';

/** Charset names and aliases (IANA registry) this server can answer in, lower case. */
const NAMES: ReadonlyMap<string, ResponseCharset> = new Map<string, ResponseCharset>([
  ['utf-8', 'utf-8'],
  ['utf8', 'utf-8'],
  ['unicode-1-1-utf-8', 'utf-8'],
  ['iso-8859-1', 'iso-8859-1'],
  ['iso8859-1', 'iso-8859-1'],
  ['iso_8859-1', 'iso-8859-1'],
  ['iso_8859-1:1987', 'iso-8859-1'],
  ['iso-ir-100', 'iso-8859-1'],
  ['latin1', 'iso-8859-1'],
  ['l1', 'iso-8859-1'],
  ['ibm819', 'iso-8859-1'],
  ['cp819', 'iso-8859-1'],
  ['csisolatin1', 'iso-8859-1'],
]);

function responseCharsetByName(name: string): ResponseCharset | undefined {
  return NAMES.get(name.trim().toLowerCase());
}

interface HeaderElement {
  value: string;
  params: Map<string, string>;
  q: number;
  index: number;
}

/** `name=value` header parameters, lower-cased names, quotes (and backslash escapes) removed; the first of a repeated name wins. */
export function parseParams(parts: readonly string[]): Map<string, string> {
  const params = new Map<string, string>();
  for (const param of parts) {
    const eq = param.indexOf('=');
    if (eq < 0) continue;
    const name = param.slice(0, eq).trim().toLowerCase();
    let v = param.slice(eq + 1).trim();
    if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1).replace(/\\(.)/g, '$1');
    if (name !== '' && !params.has(name)) params.set(name, v);
  }
  return params;
}

/** Splits a comma-separated header of `value;name=value` elements (quoted values allowed). */
function parseElements(header: string): HeaderElement[] {
  const elements: HeaderElement[] = [];
  let index = 0;
  for (const part of splitOutsideQuotes(header, ',')) {
    const [head, ...rest] = splitOutsideQuotes(part, ';');
    const value = (head ?? '').trim().toLowerCase();
    if (value === '') continue;
    const params = parseParams(rest);
    elements.push({ value, params, q: parseQ(params.get('q')), index: index++ });
  }
  return elements;
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quoted) {
      current += ch;
      if (ch === '\\' && i + 1 < text.length) current += text[++i] as string;
      else if (ch === '"') quoted = false;
    } else if (ch === '"') {
      quoted = true;
      current += ch;
    } else if (ch === separator) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

function parseQ(value: string | undefined): number {
  if (value === undefined) return 1;
  if (!/^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(value.trim())) return 1;
  return Number(value.trim());
}

function byPreference(a: HeaderElement, b: HeaderElement): number {
  return b.q - a.q || a.index - b.index;
}

/**
 * Chooses the response charset. Accept-Charset wins; then the charset
 * parameters in Accept; else UTF-8, or ISO-8859-1 when the client refused
 * UTF-8 (q=0) but not ISO-8859-1.
 */
export function negotiateCharset(acceptCharset: string | undefined, accept: string | undefined): ResponseCharset {
  const refused = new Set<ResponseCharset>();
  if (acceptCharset !== undefined) {
    const elements = parseElements(acceptCharset);
    for (const element of elements) {
      const charset = responseCharsetByName(element.value);
      if (charset !== undefined && element.q === 0) refused.add(charset);
    }
    for (const element of elements.filter((e) => e.q > 0).sort(byPreference)) {
      if (element.value === '*') {
        const pick = (['utf-8', 'iso-8859-1'] as const).find((c) => !refused.has(c));
        if (pick) return pick;
        continue;
      }
      const charset = responseCharsetByName(element.value);
      if (charset !== undefined && !refused.has(charset)) return charset;
    }
  }
  if (accept !== undefined) {
    for (const element of parseElements(accept)
      .filter((e) => e.q > 0)
      .sort(byPreference)) {
      const name = element.params.get('charset');
      const charset = name === undefined ? undefined : responseCharsetByName(name);
      if (charset !== undefined && !refused.has(charset)) return charset;
    }
  }
  if (refused.has('utf-8') && !refused.has('iso-8859-1')) return 'iso-8859-1';
  return DEFAULT_RESPONSE_CHARSET;
}

// Made once, not per response (replace() starts a global pattern from 0 every time).
const LINE_SEPARATORS = /[\u2028\u2029]/g;
const NON_ASCII = /[\u0080-\uffff]/g;

/**
 * Makes JSON text safe for the charset: for ISO-8859-1 every non-ASCII UTF-16
 * unit becomes \uXXXX (surrogate pairs as two escapes, valid JSON); for
 * UTF-8 only U+2028 and U+2029, which old JavaScript parsers choke on in JSONP.
 * Non-ASCII characters occur in JSON text only inside strings, where an
 * escape means the same character.
 */
export function escapeJsonText(json: string, charset: ResponseCharset): string {
  return json.replace(charset === 'utf-8' ? LINE_SEPARATORS : NON_ASCII, escapeUnit);
}

function escapeUnit(unit: string): string {
  return `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * The body to send: for UTF-8 the text itself, which @hono/node-server hands
 * to Node as it is and Node encodes as UTF-8 straight into the socket write
 * (no Buffer made per response); for ISO-8859-1 its bytes.
 */
export function encodeBody(text: string, charset: ResponseCharset): string | Uint8Array {
  return charset === 'utf-8' ? text : Buffer.from(text, 'latin1');
}
