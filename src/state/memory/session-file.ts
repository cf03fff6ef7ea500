import type { StoredSession } from './sessions.js';

/**
 * The memory store's state file, as text: JSON lines. The first line is the
 * header (what the file is, its format version, a check of the key that
 * named the patrons, how many sessions follow); then one line per session:
 *
 *   ["<SHA-256 of the token>","<keyed hash of the patron>",<expiry ms>,<last use ms>,"<sealed session>"]
 *
 * Nothing in it lets its reader use a session or read its barcode or patron
 * id: tokens only as their SHA-256, each session sealed with its own token
 * (session-seal.ts: AES-256-GCM), and the patron index a keyed hash. Whose a
 * session is stays hidden only from whoever lacks that key: with
 * paia.patronIdSecret it is not in the directory; the random key kept there
 * without it lets a reader of the directory hash guessed patron ids. The file is read whole or not
 * at all: any line that is not as written, a count that does not match (a
 * cut-off file), another format version or another key makes it unusable.
 */

/** What the header says the file is. */
const FORMAT = 'paia-sip2 sessions';
/** The version this code writes and reads; a file of any other is not read. */
export const SESSION_FILE_VERSION = 1;

/** base64url of 32 bytes: a token hash, a keyed hash. */
const HASH = /^[A-Za-z0-9_-]{43}$/;
/** A sealed session (session-seal.ts): format, IV and ciphertext, base64url, dot-separated. */
const SEALED = /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** Far beyond any sealed session the gateway makes: a line longer than this was not written by it. */
const MAX_SEALED_CHARS = 4096;

interface Header {
  format: string;
  version: number;
  /** keyCheck of the key the patron hashes were made with. */
  key: string;
  count: number;
  /** When it was written, epoch ms (for a person reading it). */
  savedAt: number;
}

/** The first line: what the file is, and how many session lines follow. */
export function sessionFileHeader(count: number, options: { keyCheck: string; now: number }): string {
  const header: Header = {
    format: FORMAT,
    version: SESSION_FILE_VERSION,
    key: options.keyCheck,
    count,
    savedAt: options.now,
  };
  return `${JSON.stringify(header)}\n`;
}

/** One session's line; null for a session that has no sealed form (it is not persisted). */
export function sessionFileLine(hash: string, stored: StoredSession): string | null {
  if (stored.sealed === null) return null;
  // Every string here is base64url or dots (checked again when read), so no JSON escaping is needed: the
  // state file of 100,000 sessions is written without a JSON.stringify each.
  return `["${hash}","${stored.patronKey}",${stored.expiresAt},${stored.lastUsed},"${stored.sealed}"]\n`;
}

/**
 * The whole file's text for these sessions (each with its token hash); `keyCheck` names the key of their patron hashes.
 * @internal persistence.ts writes the same header and lines a slice at a time; the tests make files with this.
 */
export function encodeSessionFile(
  sessions: Iterable<[string, StoredSession]>,
  options: { keyCheck: string; now: number },
): string {
  const lines: string[] = [];
  for (const [hash, stored] of sessions) {
    const line = sessionFileLine(hash, stored);
    if (line !== null) lines.push(line);
  }
  return sessionFileHeader(lines.length, options) + lines.join('');
}

export type DecodedSessionFile =
  | { ok: true; sessions: Array<[string, StoredSession]>; expired: number }
  | { ok: false; problem: string };

/**
 * The sessions of a state file still live at `now`, or why the file cannot
 * be used (in words for the log line; never a value from the file beyond
 * its version).
 */
export function decodeSessionFile(text: string, options: { keyCheck: string; now: number }): DecodedSessionFile {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const header = parseJson(lines[0] ?? '');
  if (!isRecord(header) || header.format !== FORMAT) return { ok: false, problem: 'it is not a session state file' };
  if (header.version !== SESSION_FILE_VERSION) {
    const version = typeof header.version === 'number' ? String(header.version) : 'unknown';
    return {
      ok: false,
      problem: `it has format version ${version}, another version of paia-sip2 wrote it (this one reads version ${SESSION_FILE_VERSION})`,
    };
  }
  if (header.key !== options.keyCheck) {
    return {
      ok: false,
      problem:
        'its patron index was made with another key (paia.patronIdSecret changed, or the key file in the directory was replaced)',
    };
  }
  if (header.count !== lines.length - 1) {
    return { ok: false, problem: `it is incomplete (${lines.length - 1} of ${String(header.count)} sessions)` };
  }
  const sessions: Array<[string, StoredSession]> = [];
  let expired = 0;
  for (let index = 1; index < lines.length; index++) {
    const entry = sessionOf(parseJson(lines[index]!));
    if (entry === null) return { ok: false, problem: `line ${index + 1} is damaged` };
    if (entry[1].expiresAt <= options.now) expired += 1;
    else sessions.push(entry);
  }
  return { ok: true, sessions, expired };
}

function sessionOf(value: unknown): [string, StoredSession] | null {
  if (!Array.isArray(value) || value.length !== 5) return null;
  const [hash, patronKey, expiresAt, lastUsed, sealed] = value as unknown[];
  if (typeof hash !== 'string' || !HASH.test(hash)) return null;
  if (typeof patronKey !== 'string' || !HASH.test(patronKey)) return null;
  if (!Number.isSafeInteger(expiresAt) || !Number.isSafeInteger(lastUsed)) return null;
  if (typeof sealed !== 'string' || sealed.length > MAX_SEALED_CHARS || !SEALED.test(sealed)) return null;
  return [hash, { session: null, sealed, patronKey, expiresAt: expiresAt as number, lastUsed: lastUsed as number }];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
