import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Charset } from '../../../src/sip2/charset.js';
import { checksum } from '../../../src/sip2/checksum.js';
import { type Decoded, decodeFrame, encodeMessage } from '../../../src/sip2/codec.js';
import { Sip2DecodeError } from '../../../src/sip2/errors.js';
import { FrameDecoder } from '../../../src/sip2/framer.js';
import { anyMessageArb, CHARSETS, inChunks, MESSAGE_CODES } from './arbitraries.js';

/**
 * Whatever bytes arrive, the framer and the decoder either return a result or
 * throw Sip2DecodeError: never a TypeError, RangeError or the like, which
 * would escape the connection's error handling.
 */

interface Outcome {
  decoded: Decoded[];
  errors: Sip2DecodeError[];
}

/** Feeds bytes through a FrameDecoder and decodeFrame; rethrows anything that is not a Sip2DecodeError. */
function run(
  bytes: Uint8Array,
  chunkSizes: readonly number[],
  options: { charset: Charset; errorDetection: boolean },
  maxFrameBytes?: number,
): Outcome {
  const outcome: Outcome = { decoded: [], errors: [] };
  const decoder = new FrameDecoder(maxFrameBytes === undefined ? {} : { maxFrameBytes });
  const guard = (fn: () => void) => {
    try {
      fn();
    } catch (error) {
      if (!(error instanceof Sip2DecodeError)) throw error;
      expect(error.code).toBe('SIP2_DECODE');
      expect(typeof error.reason).toBe('string');
      outcome.errors.push(error);
    }
  };
  inChunks(bytes, chunkSizes, (chunk) => {
    guard(() => {
      for (const frame of decoder.push(chunk)) guard(() => outcome.decoded.push(decodeFrame(frame, options)));
    });
    return [];
  });
  return outcome;
}

const optionsArb = fc.record({ charset: fc.constantFrom(...CHARSETS), errorDetection: fc.boolean() });
const chunksArb = fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 10 });
const maxFrameArb = fc.option(fc.integer({ min: 1, max: 300 }), { nil: undefined });

/** Bytes that SIP2 gives meaning to, so random input reaches past the first checks. */
const interestingByte = fc.oneof(
  fc.integer({ min: 0, max: 255 }),
  fc.constantFrom(0x0d, 0x0a, 0x7c, 0x00, 0x41, 0x59, 0x5a, 0x20, 0x4e),
  fc.integer({ min: 0x30, max: 0x39 }),
  fc.integer({ min: 0x80, max: 0xff }),
);

describe('FrameDecoder + decodeFrame never throw anything but Sip2DecodeError', () => {
  it('on random bytes', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 400 }),
        chunksArb,
        optionsArb,
        maxFrameArb,
        (bytes, chunks, options, max) => {
          run(bytes, chunks, options, max);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('on random bytes rich in CR, LF, |, digits and A/Y/Z', () => {
    fc.assert(
      fc.property(
        fc.array(interestingByte, { maxLength: 400 }).map((b) => Uint8Array.from(b)),
        chunksArb,
        optionsArb,
        maxFrameArb,
        (bytes, chunks, options, max) => {
          run(bytes, chunks, options, max);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('on a catalogue code, random text and a valid checksum (so the body is really parsed)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...MESSAGE_CODES, '41', '50', '00'),
        fc.array(interestingByte, { maxLength: 200 }),
        fc.option(fc.integer({ min: 0, max: 9 }), { nil: undefined }),
        optionsArb,
        (code, body, sequence, options) => {
          const head = Buffer.concat([
            Buffer.from(code, 'latin1'),
            Uint8Array.from(body.filter((b) => b !== 0x0d && b !== 0x0a)),
            Buffer.from(sequence === undefined ? 'AZ' : `AY${sequence}AZ`, 'latin1'),
          ]);
          const frame = Buffer.concat([head, Buffer.from(checksum(head), 'latin1')]);
          run(Buffer.concat([frame, Buffer.from('\r')]), [frame.length + 1], options);
        },
      ),
      { numRuns: 1000 },
    );
  });

  const mutation = fc.oneof(
    fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }),
    fc.record({ kind: fc.constant('set' as const), at: fc.nat(), byte: interestingByte }),
    fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
    fc.record({
      kind: fc.constant('insert' as const),
      at: fc.nat(),
      bytes: fc.array(interestingByte, { minLength: 1, maxLength: 4 }),
    }),
    fc.record({ kind: fc.constant('bar' as const), at: fc.nat() }),
    fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 8 }) }),
  );
  type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

  function mutate(bytes: Buffer, m: Mutation): Buffer {
    const at = bytes.length === 0 ? 0 : m.at % (bytes.length + 1);
    switch (m.kind) {
      case 'flip': {
        const out = Buffer.from(bytes);
        if (at < out.length) out[at] = out[at]! ^ m.xor;
        return out;
      }
      case 'set': {
        const out = Buffer.from(bytes);
        if (at < out.length) out[at] = m.byte;
        return out;
      }
      case 'truncate':
        return bytes.subarray(0, at);
      case 'insert':
        return Buffer.concat([bytes.subarray(0, at), Uint8Array.from(m.bytes), bytes.subarray(at)]);
      case 'bar':
        return Buffer.concat([bytes.subarray(0, at), Buffer.from('|'), bytes.subarray(at)]);
      case 'delete':
        return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + m.count)]);
    }
  }

  it.each(CHARSETS)('on mutations of valid %s frames (flipped bytes, truncation, inserted |, deletions)', (charset) => {
    fc.assert(
      fc.property(
        anyMessageArb(charset),
        fc.boolean(),
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        chunksArb,
        fc.constantFrom<Charset>(...CHARSETS),
        fc.boolean(),
        (message, errorDetection, mutations, chunks, decodeAs, decodeWithDetection) => {
          let bytes = encodeMessage(message, { charset, errorDetection, sequence: 1 });
          for (const m of mutations) bytes = mutate(bytes, m);
          run(bytes, chunks, { charset: decodeAs, errorDetection: decodeWithDetection });
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('error detection catches every single changed byte', () => {
  it.each(CHARSETS)('in %s (messages other than 96/97)', (charset) => {
    fc.assert(
      fc.property(
        anyMessageArb(charset).filter((m) => m.code !== '96' && m.code !== '97'),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (message, atSeed, xor) => {
          const wire = encodeMessage(message, { charset, errorDetection: true, sequence: 7 });
          const frame = wire.subarray(0, -1);
          const at = atSeed % frame.length;
          const changed = frame[at]! ^ xor;
          // a new CR or LF is a framing change, and a case change of a checksum hex letter is allowed
          fc.pre(changed !== 0x0d && changed !== 0x0a);
          fc.pre(!(at >= frame.length - 4 && (frame[at]! | 0x20) === (changed | 0x20)));
          const corrupt = Buffer.from(frame);
          corrupt[at] = changed;
          let thrown: unknown;
          try {
            decodeFrame(corrupt, { charset, errorDetection: true });
          } catch (error) {
            thrown = error;
          }
          expect(thrown).toBeInstanceOf(Sip2DecodeError);
          expect(['bad-checksum', 'missing-checksum', 'nul-byte']).toContain((thrown as Sip2DecodeError).reason);
        },
      ),
      { numRuns: 500 },
    );
  });
});
