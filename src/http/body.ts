import { Readable } from 'node:stream';
import type { Context } from 'hono';
import { malformed } from './errors.js';
import { parseParams } from './response-charset.js';

export interface BodyOptions {
  /** Largest body accepted, in bytes. */
  maxBytes: number;
  /** Also accept application/x-www-form-urlencoded (auth methods). */
  acceptForm: boolean;
  /** Deepest nesting of JSON arrays and objects accepted. Default MAX_JSON_DEPTH. */
  maxDepth?: number;
}

/** PAIA bodies nest three deep ({doc: [{item}]}); anything far deeper is not a PAIA request. */
const MAX_JSON_DEPTH = 16;

/** How deep arrays and objects nest in a JSON text (strings skipped); stops counting past `limit`. */
function jsonDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c)
        i++; // backslash: skip the escaped character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) {
      inString = true;
    } else if (ch === 0x7b || ch === 0x5b) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (ch === 0x7d || ch === 0x5d) {
      depth--;
    }
  }
  return deepest;
}

interface MediaType {
  type: string;
  params: Map<string, string>;
}

/** `type/subtype; name=value; ...`, lower-cased type and parameter names; null when not a media type. */
function parseMediaType(value: string): MediaType | null {
  const [head, ...rest] = value.split(';');
  const type = (head ?? '').trim().toLowerCase();
  if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(type)) return null;
  return { type, params: parseParams(rest) };
}

const JSON_TYPE = 'application/json';
const FORM_TYPE = 'application/x-www-form-urlencoded';

// One decoder for every body: decode() without { stream: true } keeps no state between calls.
// ignoreBOM false: a leading byte order mark is dropped, not parsed.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Reads a POST body: checks Content-Type (JSON, or form for auth; charset
 * only UTF-8), the size bound (declared and actual), UTF-8 validity, then
 * parses. Every failure is a 400 invalid_request saying what is wrong; a
 * well-formed body is returned for the method's schema to judge (422).
 * Form bodies become an object of strings (first value of a repeated name).
 */
export async function readBody(c: Context, options: BodyOptions): Promise<unknown> {
  const expected = options.acceptForm ? `${JSON_TYPE} or ${FORM_TYPE}` : JSON_TYPE;
  const header = c.req.header('content-type');
  if (header === undefined || header.trim() === '') {
    throw malformed(`the request needs a body with Content-Type ${expected}`);
  }
  const media = parseMediaType(header);
  const kind = media?.type === JSON_TYPE ? 'json' : media?.type === FORM_TYPE && options.acceptForm ? 'form' : null;
  if (media === null || kind === null) {
    throw malformed(`unsupported Content-Type ${JSON.stringify(header.slice(0, 100))}: send ${expected}`);
  }
  const charset = media.params.get('charset');
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw malformed(`unsupported request charset ${JSON.stringify(charset.slice(0, 40))}: send the body in UTF-8`);
  }

  const incoming = (c.env as { incoming?: unknown } | undefined)?.incoming;
  const bytes =
    incoming instanceof Readable && !incoming.readableDidRead
      ? await readNodeLimited(incoming, c.req.header('content-length'), options.maxBytes)
      : await readLimited(c.req.raw, options.maxBytes);
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw malformed('the request body is not valid UTF-8');
  }

  if (kind === 'form') {
    const fields: Array<[string, string]> = [];
    const seen = new Set<string>();
    for (const [name, value] of new URLSearchParams(text)) {
      if (seen.has(name)) continue;
      seen.add(name);
      fields.push([name, value]);
    }
    return Object.fromEntries(fields);
  }
  if (text.trim() === '') throw malformed('the request body is empty: send a JSON object');
  // Checked before parsing: a deeply nested document costs memory and stack before any schema sees it.
  const maxDepth = options.maxDepth ?? MAX_JSON_DEPTH;
  if (jsonDepth(text, maxDepth) > maxDepth) {
    throw malformed(
      `the request body nests JSON arrays and objects too deeply: at most ${maxDepth} levels are accepted`,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw malformed('the request body is not valid JSON');
  }
}

function tooLarge(maxBytes: number): Error {
  return malformed(`the request body is too large: at most ${maxBytes} bytes are accepted`);
}

/**
 * Under @hono/node-server: the body straight from Node's request stream, with
 * the same bounds as readLimited. Going through the web Request instead would
 * build a Request, a ReadableStream and an AbortController per POST (about a
 * tenth of a login's CPU in a profile).
 */
async function readNodeLimited(
  incoming: Readable,
  declared: string | undefined,
  maxBytes: number,
): Promise<Uint8Array> {
  checkDeclaredLength(declared ?? null, maxBytes);
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of incoming as AsyncIterable<Buffer>) {
      total += chunk.byteLength;
      // Leaving the loop destroys the stream: the rest of an oversized body is not read.
      if (total > maxBytes) throw tooLarge(maxBytes);
      chunks.push(chunk);
    }
  } catch (error) {
    if (total > maxBytes) throw error;
    throw malformed('the request body could not be read');
  }
  return Buffer.concat(chunks, total);
}

function checkDeclaredLength(declared: string | null, maxBytes: number): void {
  if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared.trim()) > maxBytes)
    throw tooLarge(maxBytes);
}

/** The body bytes, refusing more than maxBytes (a declared Content-Length is checked before reading). */
async function readLimited(request: Request, maxBytes: number): Promise<Uint8Array> {
  checkDeclaredLength(request.headers.get('content-length'), maxBytes);
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let result: Awaited<ReturnType<typeof reader.read>>;
    try {
      result = await reader.read();
    } catch {
      throw malformed('the request body could not be read');
    }
    if (result.done) break;
    total += result.value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(maxBytes);
    }
    chunks.push(result.value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
