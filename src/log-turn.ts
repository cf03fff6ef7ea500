import { writeSync } from 'node:fs';

/**
 * A log destination that writes the lines logged during one turn of the event loop together, at the
 * end of that turn (setImmediate). Under load one system call then carries the access lines of every
 * answer finished in the turn instead of one call each (B1: about 7 % of the gateway's CPU per
 * request); when idle, a line still leaves in the turn it was logged in, so nothing waits for more
 * lines or for a timer. Lines still waiting when the process exits, or when the listening line is
 * printed, are written synchronously then (writeHeldLines).
 */

/** Where the lines go: pino's asynchronous stdout (a SonicBoom). */
export interface LineOutput {
  write(lines: string): unknown;
  /** Writes what the output itself still holds, synchronously (writeHeldLines). */
  flushSync(): void;
  readonly fd?: number | string | symbol;
}

/** How each destination writes what it holds at once: one per destination made (a process makes one or two). */
const writers = new Set<() => void>();
let exitHooked = false;

/**
 * Writes every destination's waiting lines synchronously, after what its output still held: on exit, and
 * before a line written to stdout beside the log (the listening line), which must come after the lines
 * logged before it.
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
  // Without waiting for the turn's end (at exit there is none): first what the output already had, then these.
  writers.add(() => {
    const lines = pending;
    pending = '';
    try {
      out.flushSync();
      if (lines === '') return;
      if (typeof out.fd === 'number') writeSync(out.fd, lines);
      else out.write(lines);
    } catch {
      // stdout is gone or not open yet: there is nowhere left to write them.
    }
  });
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
