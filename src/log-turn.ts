import type { Writable } from 'node:stream';

/**
 * A log destination that writes the lines logged during one turn of the event loop together, at the
 * end of that turn (setImmediate). Under load one system call then carries the access lines of every
 * answer finished in the turn instead of one call each (B1: about 7 % of the gateway's CPU per
 * request); when idle, a line still leaves in the turn it was logged in, so nothing waits for more
 * lines or for a timer. Lines still waiting when the process exits, or when the listening line is
 * printed, are handed over then (writeHeldLines).
 */

/** Where the lines go (streamLines: stdout). */
export interface LineOutput {
  write(lines: string): void;
}

/** How each destination hands over what it holds at once: one per destination made (a process makes one or two). */
const writers = new Set<() => void>();
let exitHooked = false;

/**
 * Hands every destination's waiting lines to its output now: on exit, and before a line written to
 * stdout beside the log (the listening line), which must come after the lines logged before it.
 */
export function writeHeldLines(): void {
  for (const write of writers) write();
}

export function perTurn(out: LineOutput): { write(line: string): void } {
  let pending = '';
  const flush = () => {
    const lines = pending;
    pending = '';
    if (lines !== '') out.write(lines);
  };
  writers.add(flush);
  if (!exitHooked) {
    exitHooked = true;
    process.once('exit', writeHeldLines);
  }
  return {
    write(line: string) {
      if (pending === '') setImmediate(flush);
      pending += line;
    },
  };
}

/** Errors that say the reader is gone for good: nothing written to the stream will be read again. */
const READER_GONE = new Set(['EPIPE', 'ECONNRESET', 'ERR_STREAM_DESTROYED']);
/** One output per stream, whatever the number of loggers writing to it: one error listener each. */
const outputs = new WeakMap<Writable, LineOutput>();

/**
 * Lines to a stream as Node opened it, stdout: a file or a terminal takes them synchronously, a pipe or
 * a socket (journald, a container runtime) without blocking, what it cannot take at once waiting in
 * memory. No thread pool is involved: pino's asynchronous destination handed every write to one, and
 * waking its thread cost about 12 % of the gateway's CPU per request writing to a file (B1) and 5 %
 * writing to a pipe. If the stream stops taking lines (a reader that hangs), lines beyond `limitBytes`
 * waiting are dropped rather than filling memory. If the reader went away (EPIPE), the log has nowhere
 * left to go and later lines are dropped instead of crashing the process; another failure (a full disk)
 * loses the lines of that write, and the next ones are tried again.
 */
export function streamLines(stream: Writable, limitBytes: number): LineOutput {
  const known = outputs.get(stream);
  if (known !== undefined) return known;
  let readerGone = false;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (READER_GONE.has(error.code ?? '')) readerGone = true;
  });
  const output: LineOutput = {
    write(lines: string) {
      if (readerGone || stream.writableLength > limitBytes) return;
      stream.write(lines);
    },
  };
  outputs.set(stream, output);
  return output;
}

/**
 * Resolves once what was written to `stream` before is out, or after `timeoutMs`: a process that exits
 * right after writing to a pipe would otherwise lose what the pipe had not taken yet, and a reader that
 * hangs must not keep it alive.
 */
export function written(stream: NodeJS.WritableStream, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    stream.write('', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
