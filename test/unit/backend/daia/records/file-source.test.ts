/**
 * A record mapping file as the gateway keeps it (src/backend/daia/records/
 * file-source.ts): read at start (a file that cannot serve throws), re-read
 * when its size, modification time or inode change, swapped whole, broken
 * lines named in the log by file and line, a file that disappears or
 * breaks at run time leaving the last good mapping and one log line.
 * check() is what the timer calls; the tests call it themselves.
 */
import { mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FileRecordSource, MAX_LINES_NAMED } from '../../../../../src/backend/daia/records/file-source.js';
import { RecordMappingError } from '../../../../../src/backend/daia/records/mapping.js';
import { createLogger } from '../../../../../src/log.js';

const dir = mkdtempSync(join(tmpdir(), 'paia-records-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;
const sources: FileRecordSource[] = [];
afterEach(() => {
  for (const source of sources.splice(0)) source.close();
});

/** A new file with `text`, a source over it, and the log lines it writes. */
function open(text: string, maxItemsPerRecord?: number) {
  serial += 1;
  const path = join(dir, `records-${serial}.csv`);
  writeFileSync(path, text);
  const lines: Array<{ level: string; msg: string }> = [];
  const logger = createLogger({
    level: 'info',
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as { level: string; msg: string }) },
  });
  const source = new FileRecordSource({ path, logger, checkIntervalMs: 60_000, maxItemsPerRecord });
  sources.push(source);
  return { path, source, warnings: () => lines.filter((line) => line.level === 'warn').map((line) => line.msg) };
}

/** Rewrites the file so that a check sees a change even within one mtime tick (a new modification time). */
function rewrite(path: string, text: string, seconds: number): void {
  writeFileSync(path, text);
  const when = new Date(Date.now() + seconds * 1000);
  utimesSync(path, when, when);
}

describe('a record mapping file', () => {
  it('serves at once and names its broken lines at start, by file and line, the rest serving', async () => {
    const { path, source, warnings } = open('biblionumber,barcode\n1,a\nbroken\n2,b\n');
    expect(await source.barcodesOf('1')).toEqual(['a']);
    expect(await source.barcodesOf('2')).toEqual(['b']);
    expect(await source.barcodesOf('3')).toEqual([]);
    expect(warnings()).toEqual([
      `record mapping ${path}: 1 line left out, the rest serves: ${path}:3 has one field only, needs a record id and a barcode separated by ","`,
    ]);
  });

  it(`names at most ${MAX_LINES_NAMED} broken lines in one log line, and counts the rest`, () => {
    const broken = Array.from({ length: MAX_LINES_NAMED + 5 }, () => 'x').join('\n');
    const { path, warnings } = open(`r,b\n${broken}\n`);
    const [line] = warnings();
    expect(line).toContain(`${path}:2 has one field only`);
    expect(line).toContain(`${path}:${MAX_LINES_NAMED + 1} has one field only`);
    expect(line).not.toContain(`${path}:${MAX_LINES_NAMED + 2} `);
    expect(line).toMatch(/; and 5 more$/);
  });

  it('is an error at start when it cannot be read or none of it can serve', () => {
    expect(() => new FileRecordSource({ path: join(dir, 'missing.csv') })).toThrow(
      new RecordMappingError(`cannot read the record mapping ${join(dir, 'missing.csv')}: no such file`),
    );
    const path = join(dir, 'garbage.json');
    writeFileSync(path, '{"r": ["a"]');
    expect(() => new FileRecordSource({ path })).toThrow(/the record mapping .*garbage\.json is not valid JSON/);
  });

  it('is re-read when it changes: a request sees the old mapping or the new one; broken lines of the new one are named', async () => {
    const { path, source, warnings } = open('1,a\n');
    await source.check();
    expect(await source.barcodesOf('1')).toEqual(['a']);
    rewrite(path, '1,a\n1,c\n2,b\nbad\n', 5);
    const before = source.barcodesOf('1');
    await source.check();
    expect(await before).toEqual(['a']);
    expect(await source.barcodesOf('1')).toEqual(['a', 'c']);
    expect(await source.barcodesOf('2')).toEqual(['b']);
    expect(warnings()).toEqual([
      `record mapping ${path}: 1 line left out, the rest serves: ${path}:4 has one field only, needs a record id and a barcode separated by ","`,
    ]);
  });

  it('picks up a new file renamed over the old one (a new inode)', async () => {
    const { path, source } = open('1,a\n');
    const next = `${path}.new`;
    writeFileSync(next, '1,z\n');
    renameSync(next, path);
    await source.check();
    expect(await source.barcodesOf('1')).toEqual(['z']);
  });

  it('keeps the last good mapping when the file disappears or breaks, logs that once, and serves the file again once it is good', async () => {
    const { path, source, warnings } = open('1,a\n');
    rmSync(path);
    await source.check();
    await source.check();
    expect(await source.barcodesOf('1')).toEqual(['a']);
    expect(warnings()).toEqual([
      `cannot read the record mapping ${path}: no such file; the last good mapping (1 record) keeps serving until the file is good again`,
    ]);
    rewrite(path, 'nothing usable\n', 10);
    await source.check();
    await source.check();
    expect(await source.barcodesOf('1')).toEqual(['a']);
    expect(warnings()).toHaveLength(2);
    expect(warnings()[1]).toMatch(
      /the record mapping .* has no usable record id and barcode in 1 entry: line 1 has one field only.*; the last good mapping \(1 record\) keeps serving/,
    );
    rewrite(path, '1,b\n', 20);
    await source.check();
    expect(await source.barcodesOf('1')).toEqual(['b']);
    expect(warnings()).toHaveLength(2);
  });

  it('keeps at most maxItemsPerRecord copies of a record', async () => {
    const { source } = open('r,1\nr,2\nr,3\n', 2);
    expect(await source.barcodesOf('r')).toEqual(['1', '2']);
  });
});
