import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { perTurn, streamLines, writeHeldLines, written } from '../../src/log-turn.js';

function recorder() {
  const writes: string[] = [];
  return {
    writes,
    write(lines: string) {
      writes.push(lines);
    },
  };
}

/** A stream whose reader takes nothing until told to: each write waits for `takeAll()`. */
function hangingReader() {
  const waiting: Array<() => void> = [];
  let taken = '';
  const stream = new Writable({
    highWaterMark: 16,
    write(chunk: Buffer, _encoding, done) {
      waiting.push(() => {
        taken += chunk.toString();
        done();
      });
    },
  });
  return {
    stream,
    taken: () => taken,
    takeAll() {
      while (waiting.length > 0) waiting.shift()!();
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

  it('hands the waiting lines over at once when asked (exit, the listening line), and only once', async () => {
    const out = recorder();
    const destination = perTurn(out);
    destination.write('{"last":1}\n');
    destination.write('{"last":2}\n');
    writeHeldLines();
    expect(out.writes).toEqual(['{"last":1}\n{"last":2}\n']);
    await nextTurn();
    expect(out.writes).toEqual(['{"last":1}\n{"last":2}\n']);
  });
});

describe('log lines to a stream (stdout)', () => {
  it('passes the lines on in order', async () => {
    const reader = hangingReader();
    const out = streamLines(reader.stream, 1024);
    out.write('{"n":1}\n');
    out.write('{"n":2}\n');
    reader.takeAll();
    await nextTurn();
    reader.takeAll();
    expect(reader.taken()).toBe('{"n":1}\n{"n":2}\n');
  });

  it('drops lines beyond the limit while the reader takes nothing, and passes them on again once it does', async () => {
    const reader = hangingReader();
    const out = streamLines(reader.stream, 100);
    const line = `${'x'.repeat(49)}\n`;
    for (let i = 0; i < 10; i++) out.write(line);
    // 50 bytes each: the third line finds 100 waiting and no more than that are taken in.
    expect(reader.stream.writableLength).toBe(150);
    for (let i = 0; i < 5; i++) {
      reader.takeAll();
      await nextTurn();
    }
    expect(reader.stream.writableLength).toBe(0);
    out.write('{"after":1}\n');
    for (let i = 0; i < 3; i++) {
      reader.takeAll();
      await nextTurn();
    }
    expect(reader.taken()).toBe(`${line}${line}${line}{"after":1}\n`);
  });

  it('keeps the process alive when the reader goes away (EPIPE): the lines have nowhere to go and are dropped', async () => {
    // A child logs through the real stdout into a pipe; the parent closes its end after the first chunk and
    // then tells the child (SIGUSR2), which logs on for 100 ms, so that lines surely meet the closed pipe.
    const source = pathToFileURL(fileURLToPath(new URL('../../src/log.ts', import.meta.url))).href;
    const script = `
      const { createLogger } = await import(${JSON.stringify(source)});
      const logger = createLogger({ level: 'info' });
      const timer = setInterval(() => { for (let i = 0; i < 50; i++) logger.info({ i }, 'a line'); }, 5);
      process.once('SIGUSR2', () => setTimeout(() => { clearInterval(timer); process.stderr.write('done\\n'); }, 100));
      setTimeout(() => { clearInterval(timer); process.stderr.write('no signal\\n'); }, 10_000).unref();
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
    const firstLine = await Promise.race([
      new Promise<string>((resolve) => child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString()))),
      closed.then(() => {
        throw new Error(`the child ended before logging: ${stderr}`);
      }),
    ]);
    child.stdout.destroy();
    child.kill('SIGUSR2');
    const code = await closed;
    expect(JSON.parse(firstLine.split('\n')[0]!)).toMatchObject({ level: 'info', msg: 'a line' });
    expect(stderr).toBe('done\n');
    expect(code).toBe(0);
  }, 20_000);

  it('after another failure (a full disk) drops that write only, and tries the next lines again', () => {
    // process.stdout stays writable after a failed write (Node never destroys it): a stand-in that fails once.
    const taken: string[] = [];
    const stdout = Object.assign(new EventEmitter(), { writableLength: 0, write: (_lines: string): boolean => true });
    let failNext = true;
    stdout.write = (lines: string) => {
      if (failNext) {
        failNext = false;
        stdout.emit('error', Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
        return false;
      }
      taken.push(lines);
      return true;
    };
    const out = streamLines(stdout as unknown as Writable, 1024);
    out.write('{"lost":1}\n');
    out.write('{"after":1}\n');
    stdout.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    out.write('{"reader gone":1}\n');
    expect(taken).toEqual(['{"after":1}\n']);
  });

  it('adds one error listener to a stream, however many loggers write to it', () => {
    const reader = hangingReader();
    const before = reader.stream.listenerCount('error');
    const first = streamLines(reader.stream, 1024);
    expect(streamLines(reader.stream, 1024)).toBe(first);
    expect(reader.stream.listenerCount('error')).toBe(before + 1);
  });
});

describe('waiting until a stream took what was written', () => {
  it('resolves once the reader took everything written before', async () => {
    const reader = hangingReader();
    reader.stream.write('{"n":1}\n');
    let done = false;
    const taken = written(reader.stream, 10_000).then(() => {
      done = true;
    });
    await nextTurn();
    expect(done).toBe(false);
    for (let i = 0; i < 3 && !done; i++) {
      reader.takeAll();
      await nextTurn();
    }
    await taken;
    expect(reader.taken()).toBe('{"n":1}\n');
  });

  it('gives up after the timeout when the reader hangs', async () => {
    const reader = hangingReader();
    reader.stream.write('{"n":1}\n');
    const started = performance.now();
    await written(reader.stream, 50);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(reader.taken()).toBe('');
  });
});
