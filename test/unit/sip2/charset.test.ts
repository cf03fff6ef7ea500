import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { CHARSETS, canEncode, decodeText, encodeText, isCharset } from '../../../src/sip2/charset.js';

describe('charsets', () => {
  it('are cp850, latin1 and utf-8', () => {
    expect([...CHARSETS]).toEqual(['cp850', 'latin1', 'utf-8']);
    expect(isCharset('cp850')).toBe(true);
    expect(isCharset('utf-8')).toBe(true);
    expect(isCharset('utf8')).toBe(false);
    expect(isCharset('UTF-8')).toBe(false);
    expect(isCharset('ascii')).toBe(false);
  });

  it('encode to the bytes of each code table', () => {
    expect([...encodeText('Aü£ñ░ß', 'cp850')]).toEqual([0x41, 0x81, 0x9c, 0xa4, 0xb0, 0xe1]);
    expect([...encodeText('Aü£ñß', 'latin1')]).toEqual([0x41, 0xfc, 0xa3, 0xf1, 0xdf]);
    expect([...encodeText('Aü東🦊', 'utf-8')]).toEqual([0x41, 0xc3, 0xbc, 0xe6, 0x9d, 0xb1, 0xf0, 0x9f, 0xa6, 0x8a]);
  });

  it("carry all-ASCII text (the fast path past the code tables) exactly as iconv-lite's tables do, in every charset", () => {
    const ascii = String.fromCharCode(...Array.from({ length: 128 }, (_, i) => i));
    for (const charset of CHARSETS) {
      expect(encodeText(ascii, charset)).toEqual(iconv.encode(ascii, charset));
      expect(decodeText(iconv.encode(ascii, charset), charset)).toBe(ascii);
      expect(canEncode(ascii, charset)).toBe(true);
    }
    // One byte above ASCII still goes through the table: 0x81 is ü in cp850, not U+0081.
    expect(decodeText(Buffer.from([0x41, 0x81]), 'cp850')).toBe('Aü');
    expect([...encodeText('Aü', 'cp850')]).toEqual([0x41, 0x81]);
  });

  it('decode those bytes back', () => {
    expect(decodeText(Buffer.from([0x41, 0x81, 0x9c, 0xa4, 0xb0, 0xe1]), 'cp850')).toBe('Aü£ñ░ß');
    expect(decodeText(Buffer.from([0x41, 0xfc, 0xa3, 0xf1, 0xdf]), 'latin1')).toBe('Aü£ñß');
    expect(decodeText(Buffer.from('Aü東🦊', 'utf8'), 'utf-8')).toBe('Aü東🦊');
  });

  it('latin1 never aliases a character above U+00FF onto its low byte', () => {
    // Buffer.from('Ł', 'latin1') would give 0x41 'A'
    expect([...encodeText('Ł', 'latin1')]).not.toEqual([0x41]);
    expect([...encodeText('ĀŁ€', 'latin1')]).toEqual([0x3f, 0x3f, 0x3f]);
    expect(canEncode('Łódź', 'latin1')).toBe(false);
    expect(canEncode('ÿ', 'latin1')).toBe(true);
  });

  it('canEncode tells which text each charset can carry', () => {
    expect(canEncode('', 'cp850')).toBe(true);
    expect(canEncode('Müller ░▒▓', 'cp850')).toBe(true);
    expect(canEncode('€', 'cp850')).toBe(false);
    expect(canEncode('山田', 'cp850')).toBe(false);
    expect(canEncode('?', 'cp850')).toBe(true);
    expect(canEncode('山田', 'latin1')).toBe(false);
    expect(canEncode('山田 🦊', 'utf-8')).toBe(true);
    expect(canEncode('\ud83e', 'utf-8')).toBe(false);
    expect(canEncode('a\udd8ab', 'utf-8')).toBe(false);
    expect(canEncode('\udd8a\ud83e', 'utf-8')).toBe(false);
  });
});
