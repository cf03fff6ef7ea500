import { describe, expect, it } from 'vitest';
import { decodeFrame } from '../../../src/sip2/codec.js';
import { FrameDecoder } from '../../../src/sip2/framer.js';
import { expectDecodeError } from './expect-error.js';

const bytes = (s: string) => Buffer.from(s, 'latin1');
const texts = (frames: Buffer[]) => frames.map((frame) => frame.toString('latin1'));

/** Feeds the chunks in order and returns every frame, as latin1 text. */
function feed(decoder: FrameDecoder, ...chunks: (string | Uint8Array)[]): string[] {
  return chunks.flatMap((chunk) => texts(decoder.push(typeof chunk === 'string' ? bytes(chunk) : chunk)));
}

const LOGIN = '9300CNscclient|COclientpwd|CPcirc|AY0AZF1E5';
const LOGIN_RESPONSE = '941AY0AZFDFD';

describe('FrameDecoder', () => {
  it('splits on CR and strips the terminator', () => {
    const decoder = new FrameDecoder();
    expect(feed(decoder, `${LOGIN_RESPONSE}\r`)).toEqual([LOGIN_RESPONSE]);
    expect(decoder.bufferedBytes).toBe(0);
  });

  it('returns nothing until the CR arrives, and counts the buffered bytes', () => {
    const decoder = new FrameDecoder();
    expect(feed(decoder, '941AY0')).toEqual([]);
    expect(decoder.bufferedBytes).toBe(6);
    expect(feed(decoder, 'AZFDFD')).toEqual([]);
    expect(decoder.bufferedBytes).toBe(12);
    expect(feed(decoder, '\r')).toEqual([LOGIN_RESPONSE]);
    expect(decoder.bufferedBytes).toBe(0);
  });

  it('accepts CRLF terminators', () => {
    const decoder = new FrameDecoder();
    expect(feed(decoder, `${LOGIN_RESPONSE}\r\n`, `${LOGIN}\r\n`)).toEqual([LOGIN_RESPONSE, LOGIN]);
    expect(decoder.bufferedBytes).toBe(0);
  });

  it('drops the LF of a CRLF that arrives in the next chunk', () => {
    const decoder = new FrameDecoder();
    expect(feed(decoder, `${LOGIN_RESPONSE}\r`)).toEqual([LOGIN_RESPONSE]);
    expect(feed(decoder, '\n')).toEqual([]);
    expect(decoder.bufferedBytes).toBe(0);
    expect(feed(decoder, '\n941AY1AZFDFC\r')).toEqual(['941AY1AZFDFC']);
  });

  it('drops stray LFs before a frame, even several and across chunks', () => {
    const decoder = new FrameDecoder();
    expect(feed(decoder, '\n\n', '\n96', 'AZFEF6\r')).toEqual(['96AZFEF6']);
  });

  it("keeps a LF inside a frame (it is the message's byte, not a terminator)", () => {
    const decoder = new FrameDecoder();
    expect(feed(decoder, '64 \nX\r')).toEqual(['64 \nX']);
    expect(feed(decoder, '24', '\nX\r')).toEqual(['24\nX']);
  });

  it('returns several frames from one chunk, in order', () => {
    const decoder = new FrameDecoder();
    expect(feed(decoder, `${LOGIN}\r${LOGIN_RESPONSE}\r\n97AZFEF5\r96AZFEF6`)).toEqual([
      LOGIN,
      LOGIN_RESPONSE,
      '97AZFEF5',
    ]);
    expect(decoder.bufferedBytes).toBe(8);
    expect(feed(decoder, '\r')).toEqual(['96AZFEF6']);
  });

  it('skips empty frames', () => {
    const decoder = new FrameDecoder();
    expect(feed(decoder, '\r\r\n\r')).toEqual([]);
    expect(feed(decoder, `\r${LOGIN_RESPONSE}\r\r\r\n\r\n97AZFEF5\r`)).toEqual([LOGIN_RESPONSE, '97AZFEF5']);
    expect(feed(decoder, '\n', '\r', '\n')).toEqual([]);
    expect(decoder.bufferedBytes).toBe(0);
  });

  it('finds the same frame whatever byte it is split at', () => {
    const wire = bytes(`${LOGIN}\r`);
    for (let cut = 0; cut <= wire.length; cut++) {
      const decoder = new FrameDecoder();
      expect(feed(decoder, wire.subarray(0, cut), wire.subarray(cut)), `cut at ${cut}`).toEqual([LOGIN]);
      expect(decoder.bufferedBytes).toBe(0);
    }
  });

  it('finds two CRLF frames whatever pair of bytes they are split at', () => {
    const wire = bytes(`${LOGIN_RESPONSE}\r\n${LOGIN}\r\n`);
    for (let a = 0; a <= wire.length; a++) {
      for (let b = a; b <= wire.length; b++) {
        const decoder = new FrameDecoder();
        const frames = feed(decoder, wire.subarray(0, a), wire.subarray(a, b), wire.subarray(b));
        expect(frames, `cuts at ${a}, ${b}`).toEqual([LOGIN_RESPONSE, LOGIN]);
        expect(decoder.bufferedBytes).toBe(0);
      }
    }
  });

  it('reassembles a frame fed one byte at a time', () => {
    const decoder = new FrameDecoder();
    const wire = bytes(`${LOGIN}\r\n${LOGIN_RESPONSE}\r`);
    const frames: string[] = [];
    for (const byte of wire) frames.push(...feed(decoder, Uint8Array.of(byte)));
    expect(frames).toEqual([LOGIN, LOGIN_RESPONSE]);
  });

  it('reassembles a multi-byte UTF-8 character split across chunks', () => {
    const message = Buffer.from('1803000120261121    172931AB660|AJcáliz 東京 🦊|', 'utf8');
    // every cut, including those that fall inside 'á' (2 bytes), '東' (3 bytes) and '🦊' (4 bytes)
    for (let cut = 1; cut < message.length; cut++) {
      const decoder = new FrameDecoder();
      const frames = [
        ...decoder.push(message.subarray(0, cut)),
        ...decoder.push(Buffer.concat([message.subarray(cut), Buffer.from('\r')])),
      ];
      expect(frames).toHaveLength(1);
      expect(frames[0]).toEqual(message);
      const decoded = decodeFrame(frames[0]!, { charset: 'utf-8', errorDetection: false });
      if (decoded.kind !== 'message' || decoded.message.code !== '18') throw new Error('not an 18');
      expect(decoded.message.titleIdentifier).toBe('cáliz 東京 🦊');
    }
  });

  it('accepts plain Uint8Array chunks', () => {
    const decoder = new FrameDecoder();
    const frames = decoder.push(new Uint8Array([0x39, 0x37, 0x0d]));
    expect(frames).toHaveLength(1);
    expect(Buffer.isBuffer(frames[0])).toBe(true);
    expect(frames[0]!.toString('latin1')).toBe('97');
  });

  it('returns frames that do not share memory with the chunk (socket buffers get reused)', () => {
    const decoder = new FrameDecoder();
    const chunk = bytes(`${LOGIN_RESPONSE}\r`);
    const [frame] = decoder.push(chunk);
    chunk.fill(0x58);
    expect(frame!.toString('latin1')).toBe(LOGIN_RESPONSE);

    const partial = bytes('941AY0');
    decoder.push(partial);
    partial.fill(0x58);
    expect(texts(decoder.push(bytes('AZFDFD\r')))).toEqual([LOGIN_RESPONSE]);
  });

  it('reset() discards a partial frame', () => {
    const decoder = new FrameDecoder();
    decoder.push(bytes('9300CNsccl'));
    decoder.reset();
    expect(decoder.bufferedBytes).toBe(0);
    expect(feed(decoder, `${LOGIN_RESPONSE}\r`)).toEqual([LOGIN_RESPONSE]);
  });

  describe('frame size limit', () => {
    it('accepts a frame of exactly maxFrameBytes', () => {
      const decoder = new FrameDecoder({ maxFrameBytes: 12 });
      expect(feed(decoder, `${LOGIN_RESPONSE}\r`)).toEqual([LOGIN_RESPONSE]);
      expect(feed(decoder, '941AY0', 'AZFDFD', '\r')).toEqual([LOGIN_RESPONSE]);
    });

    it('does not count stray LFs before the frame', () => {
      const decoder = new FrameDecoder({ maxFrameBytes: 12 });
      expect(feed(decoder, '\n\n\n', `\n${LOGIN_RESPONSE}\r\n`)).toEqual([LOGIN_RESPONSE]);
    });

    it('refuses a terminated frame one byte too long, in one chunk', () => {
      const decoder = new FrameDecoder({ maxFrameBytes: 11 });
      expectDecodeError(() => decoder.push(bytes(`${LOGIN_RESPONSE}\r`)), 'frame-too-long');
    });

    it('refuses a terminated frame one byte too long, over several chunks', () => {
      const decoder = new FrameDecoder({ maxFrameBytes: 11 });
      expect(feed(decoder, '941AY0AZFDF')).toEqual([]);
      expectDecodeError(() => decoder.push(bytes('D\r')), 'frame-too-long');
    });

    it('refuses an unterminated frame as soon as it outgrows the limit', () => {
      const decoder = new FrameDecoder({ maxFrameBytes: 11 });
      expectDecodeError(() => decoder.push(bytes(LOGIN_RESPONSE)), 'frame-too-long');

      const slow = new FrameDecoder({ maxFrameBytes: 11 });
      expect(feed(slow, '941AY0', 'AZFDF')).toEqual([]);
      expectDecodeError(() => slow.push(bytes('D')), 'frame-too-long');
    });

    it('has a default limit, and the error does not echo the bytes', () => {
      const decoder = new FrameDecoder();
      const junk = Buffer.alloc(256 * 1024, 0x41);
      expect(decoder.push(junk)).toEqual([]);
      const error = expectDecodeError(() => decoder.push(bytes('A')), 'frame-too-long');
      expect(error.message).not.toContain('AAAA');
    });

    it('is usable again after refusing a frame', () => {
      const decoder = new FrameDecoder({ maxFrameBytes: 12 });
      expectDecodeError(() => decoder.push(bytes('x'.repeat(20))), 'frame-too-long');
      expect(decoder.bufferedBytes).toBe(0);
      expect(feed(decoder, `${LOGIN_RESPONSE}\r`)).toEqual([LOGIN_RESPONSE]);
    });
  });
});
