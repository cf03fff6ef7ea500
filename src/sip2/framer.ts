import { Sip2DecodeError } from './errors.js';

const CR = 0x0d;
const LF = 0x0a;

/**
 * Splits a TCP byte stream into SIP2 frames. A frame ends at CR; a LF right
 * after it (CRLF servers) or anywhere before a frame's first byte is dropped.
 * Chunks may hold part of a frame or several frames. Frames are returned
 * without their terminator. Pure: no sockets, so it is tested byte by byte.
 */
export class FrameDecoder {
  private pending: Buffer[] = [];
  private pendingLength = 0;
  private readonly maxFrameBytes: number;

  constructor(options: { maxFrameBytes?: number } = {}) {
    this.maxFrameBytes = options.maxFrameBytes ?? 256 * 1024;
  }

  /** Feeds a chunk; returns the frames it completed. Throws Sip2DecodeError on an oversized frame. */
  push(chunk: Uint8Array): Buffer[] {
    const frames: Buffer[] = [];
    let start = 0;
    for (;;) {
      const cr = chunk.indexOf(CR, start);
      if (cr === -1) break;
      const frame = this.take(chunk.subarray(start, cr));
      if (frame.length > 0) frames.push(frame);
      start = cr + 1;
    }
    if (start < chunk.length) this.keep(chunk.subarray(start));
    return frames;
  }

  /** Bytes received that do not yet form a frame (a connection closed now would lose them). */
  get bufferedBytes(): number {
    return this.pendingLength;
  }

  reset(): void {
    this.pending = [];
    this.pendingLength = 0;
  }

  private keep(part: Uint8Array): void {
    const trimmed = this.pendingLength === 0 ? stripLeadingLf(part) : part;
    if (trimmed.length === 0) return;
    if (this.pendingLength + trimmed.length > this.maxFrameBytes) {
      this.reset();
      throw new Sip2DecodeError(
        'frame-too-long',
        `a SIP2 message exceeded ${this.maxFrameBytes} bytes without a terminator`,
      );
    }
    this.pending.push(Buffer.from(trimmed));
    this.pendingLength += trimmed.length;
  }

  private take(tail: Uint8Array): Buffer {
    const head = this.pendingLength === 0 ? stripLeadingLf(tail) : tail;
    const total = this.pendingLength + head.length;
    if (total > this.maxFrameBytes) {
      this.reset();
      throw new Sip2DecodeError('frame-too-long', `a SIP2 message exceeded ${this.maxFrameBytes} bytes`);
    }
    const frame = this.pendingLength === 0 ? Buffer.from(head) : Buffer.concat([...this.pending, head], total);
    this.reset();
    return frame;
  }
}

function stripLeadingLf(bytes: Uint8Array): Uint8Array {
  let i = 0;
  while (i < bytes.length && bytes[i] === LF) i++;
  return i === 0 ? bytes : bytes.subarray(i);
}
