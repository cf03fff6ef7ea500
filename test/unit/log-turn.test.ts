import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { perTurn, writeHeldLines } from '../../src/log-turn.js';

function recorder() {
  const writes: string[] = [];
  const calls: string[] = [];
  return {
    writes,
    calls,
    write(lines: string) {
      writes.push(lines);
      calls.push('write');
    },
    flushSync() {
      calls.push('flushSync');
    },
  };
}

describe('the log destination that writes once per turn of the event loop', () => {
  it('writes the lines of one turn together, in order, at the end of that turn', async () => {
    const out = recorder();
    const destination = perTurn(out);
    destination.write('{"n":1}\n');
    destination.write('{"n":2}\n');
    destination.write('{"n":3}\n');
    expect(out.writes).toEqual([]);
    await nextTurn();
    expect(out.writes).toEqual(['{"n":1}\n{"n":2}\n{"n":3}\n']);
  });

  it('writes a line logged when idle within its own turn, not waiting for more', async () => {
    const out = recorder();
    const destination = perTurn(out);
    destination.write('{"n":1}\n');
    await nextTurn();
    destination.write('{"n":2}\n');
    await nextTurn();
    expect(out.writes).toEqual(['{"n":1}\n', '{"n":2}\n']);
  });

  it('writes the waiting lines synchronously at exit, after what the output still held, and only once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'log-turn-'));
    const fd = openSync(join(dir, 'out.log'), 'w');
    try {
      const out = { ...recorder(), fd };
      const destination = perTurn(out);
      destination.write('{"last":1}\n');
      destination.write('{"last":2}\n');
      writeHeldLines();
      expect(out.calls).toEqual(['flushSync']);
      expect(readFileSync(join(dir, 'out.log'), 'utf8')).toBe('{"last":1}\n{"last":2}\n');
      await nextTurn();
      expect(out.writes).toEqual([]);
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
