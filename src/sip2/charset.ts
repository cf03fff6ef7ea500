import { isAscii } from 'node:buffer';
import iconv from 'iconv-lite';

/**
 * The wire charsets we support. SIP2 says cp850 unless both sides agree on
 * something else; in practice Koha and Evergreen default to UTF-8 and some
 * older systems to Latin-1.
 */
export const CHARSETS = ['cp850', 'latin1', 'utf-8'] as const;
export type Charset = (typeof CHARSETS)[number];

export function isCharset(value: string): value is Charset {
  return (CHARSETS as readonly string[]).includes(value);
}

/**
 * Whether every code unit is ASCII (U+0000-U+007F). Every supported charset
 * (cp850, Latin-1, UTF-8) maps ASCII to the same single bytes, so such text
 * needs no table: nearly all SIP2 traffic (codes, dates, barcodes, ids) is
 * ASCII, and iconv-lite's cp850 round trip per field showed in the CPU
 * profile of B1 (bench/README.md, CPU profile).
 */
function isAsciiText(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

export function encodeText(text: string, charset: Charset): Buffer {
  // Buffer's own utf-8/latin1 codecs are faster than iconv-lite's and agree with it.
  if (charset === 'utf-8') return Buffer.from(text, 'utf8');
  if (charset === 'latin1') return encodeLatin1(text);
  if (isAsciiText(text)) return Buffer.from(text, 'latin1');
  return iconv.encode(text, charset);
}

export function decodeText(bytes: Buffer, charset: Charset): string {
  if (charset === 'utf-8') return bytes.toString('utf8');
  if (charset === 'latin1') return bytes.toString('latin1');
  if (isAscii(bytes)) return bytes.toString('latin1');
  return iconv.decode(bytes, charset);
}

/**
 * Characters that the charset cannot represent. Encoding them would silently
 * turn them into '?', so the encoder refuses them instead.
 */
export function canEncode(text: string, charset: Charset): boolean {
  if (isAsciiText(text)) return true;
  if (charset === 'utf-8') return !/[\uD800-\uDFFF]/.test(text.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''));
  return decodeText(encodeText(text, charset), charset) === text;
}

function encodeLatin1(text: string): Buffer {
  // Buffer.from(text, 'latin1') keeps only the low byte of each code unit,
  // which would alias U+0141 onto 0x41; iconv-lite substitutes '?' instead, which canEncode can detect.
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0xff) return iconv.encode(text, 'latin1');
  }
  return Buffer.from(text, 'latin1');
}
