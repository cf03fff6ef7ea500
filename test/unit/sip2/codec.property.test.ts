import { deepStrictEqual, strictEqual } from 'node:assert/strict';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Charset } from '../../../src/sip2/charset.js';
import { decodeFrame, encodeMessage } from '../../../src/sip2/codec.js';
import { FrameDecoder } from '../../../src/sip2/framer.js';
import type { MessageCode } from '../../../src/sip2/spec.js';
import { CHARSETS, inChunks, MESSAGE_CODES, messageArb } from './arbitraries.js';

/**
 * encode . decode = id for every message of the catalogue, in every charset,
 * with error detection on and off, through a FrameDecoder fed in random chunks.
 */

const NO_SEQUENCE = new Set<string>(['96', '97']);

function roundTrip(code: MessageCode, charset: Charset, errorDetection: boolean, numRuns: number): void {
  fc.assert(
    fc.property(
      messageArb(code, charset),
      fc.integer({ min: 0, max: 9 }),
      fc.constantFrom('\r' as const, '\r\n' as const),
      fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1, maxLength: 20 }),
      fc.boolean(),
      // node:assert in this loop, not expect: as strict (prototypes and undefined properties count), in half the time.
      (message, sequence, terminator, chunkSizes, strayLf) => {
        const options = { charset, errorDetection };
        const wire = encodeMessage(message, { ...options, sequence, terminator });
        strictEqual(wire.subarray(-terminator.length).toString('latin1'), terminator);

        const expected = {
          kind: 'message',
          message,
          sequence: errorDetection && !NO_SEQUENCE.has(code) ? sequence : null,
          checksummed: errorDetection,
        };
        // straight from the bytes
        deepStrictEqual(decodeFrame(wire.subarray(0, wire.length - terminator.length), options), expected);

        // through the framer: the message three times, in random chunks, perhaps after a stray LF
        const stream = Buffer.concat([Buffer.from(strayLf ? '\n' : ''), wire, wire, wire]);
        const decoder = new FrameDecoder();
        const frames = inChunks(stream, chunkSizes, (chunk) => decoder.push(chunk));
        strictEqual(frames.length, 3);
        strictEqual(decoder.bufferedBytes, 0);
        for (const frame of frames) deepStrictEqual(decodeFrame(frame, options), expected);
      },
    ),
    { numRuns },
  );
}

const VARIANTS = CHARSETS.flatMap(
  (charset) =>
    [
      [charset, true],
      [charset, false],
    ] as const,
);

describe.each(MESSAGE_CODES)('message %s: encode then decode gives the same typed message', (code) => {
  it.each(VARIANTS)('in %s, error detection %s', (charset, errorDetection) => {
    roundTrip(code, charset, errorDetection, 200);
  });
});

describe('the round trip carries what it should', () => {
  it('the generated values really include non-ASCII, long values and unknown fields', () => {
    // guards the property above against arbitraries that quietly lost their reach
    const samples = fc.sample(messageArb('64', 'utf-8'), { numRuns: 300, seed: 42 });
    const values = samples.flatMap((m) => Object.values(m).filter((v): v is string => typeof v === 'string'));
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the Latin-1 range, NUL included
    expect(values.some((v) => /[^\x00-\xff]/.test(v))).toBe(true);
    expect(values.some((v) => /[\u{1f300}-\u{1faff}]/u.test(v))).toBe(true);
    expect(values.some((v) => v.length >= 230)).toBe(true);
    expect(values.every((v) => v.length <= 255)).toBe(true);
    expect(samples.some((m) => (m.extra?.length ?? 0) > 0)).toBe(true);
    expect(samples.some((m) => m.extra === undefined)).toBe(true);
    // optional fields are sometimes there and sometimes not; repeatable ones come several at a time
    expect(samples.some((m) => 'homeAddress' in m)).toBe(true);
    expect(samples.some((m) => !('homeAddress' in m))).toBe(true);
    expect(samples.some((m) => m.code === '64' && (m.chargedItems?.length ?? 0) > 1)).toBe(true);
    expect(samples.some((m) => m.code === '64' && m.holdItemsCount === null)).toBe(true);
    expect(samples.some((m) => m.code === '64' && m.transactionDate === null)).toBe(true);
    const cp850 = fc.sample(messageArb('64', 'cp850'), { numRuns: 300, seed: 42 });
    expect(cp850.some((m) => /[\u2500-\u25ff]/.test(m.code === '64' ? m.personalName : ''))).toBe(true);
  });
});
