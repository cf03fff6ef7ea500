import { connect, type Socket } from 'node:net';

export interface RawFrame {
  /** The bytes exactly as received, terminator included. */
  raw: Buffer;
  /** Without the terminator. */
  frame: Buffer;
}

/** Opens a TCP connection; resolves once it is connected, rejects if it cannot be. */
export function openSocket(port: number, host = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
  });
}

/**
 * The socket plumbing of the test SIP2 clients: collects what arrives and
 * hands it out as CR-terminated frames, every wait bounded. It does not read
 * the frames: RawSip2Client decodes them with the project's codec, the text
 * client by the 3M layout, and the two must stay apart.
 */
export class FrameSocket {
  private buffer = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  private ended = false;
  readonly closed: Promise<void>;

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake();
    });
    this.closed = new Promise((resolve) => {
      socket.once('close', () => {
        this.ended = true;
        this.wake();
        resolve();
      });
    });
    // A reset by the peer is seen as the close that follows it.
    socket.on('error', () => {});
  }

  get isClosed(): boolean {
    return this.ended;
  }

  /** Bytes received and not yet taken as a frame. */
  get pending(): Buffer {
    return this.buffer;
  }

  writeRaw(bytes: Buffer | string): void {
    this.socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes);
  }

  /** The next CR-terminated frame (a LF right after the CR belongs to it); rejects on timeout or close. */
  async nextFrame(timeoutMs = 5000): Promise<RawFrame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // A CRLF server's LF that arrived after its frame was taken.
      while (this.buffer[0] === 0x0a) this.buffer = this.buffer.subarray(1);
      const cr = this.buffer.indexOf(0x0d);
      if (cr !== -1) {
        const end = this.buffer[cr + 1] === 0x0a ? cr + 2 : cr + 1;
        const raw = this.buffer.subarray(0, end);
        this.buffer = this.buffer.subarray(end);
        return { raw: Buffer.from(raw), frame: Buffer.from(raw.subarray(0, cr)) };
      }
      if (this.ended)
        throw new Error(`connection closed (pending bytes: ${JSON.stringify(this.buffer.toString('latin1'))})`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no SIP2 frame within ${timeoutMs} ms`);
      await this.waitForData(left);
    }
  }

  /** Resolves true if anything arrives (or the socket closes) within ms, false otherwise. */
  async somethingWithin(ms: number): Promise<boolean> {
    if (this.buffer.length > 0 || this.ended) return true;
    await this.waitForData(ms);
    return this.buffer.length > 0 || this.ended;
  }

  close(): void {
    this.socket.destroy();
  }

  private waitForData(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.waiters.push(done);
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
}
