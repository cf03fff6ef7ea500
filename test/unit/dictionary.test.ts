import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Dictionary } from '../../src/dictionary.js';

describe('Dictionary', () => {
  it('gets, has and deletes what was set, and lists the keys in now', () => {
    const table = new Dictionary<number>();
    table.set('a', 1);
    table.set('b', 2);
    table.set('a', 3);
    expect(table.get('a')).toBe(3);
    expect(table.has('b')).toBe(true);
    table.delete('b');
    table.delete('never there');
    expect(table.has('b')).toBe(false);
    expect(table.get('b')).toBeUndefined();
    expect(table.keys()).toEqual(['a']);
  });

  it('treats the names of Object.prototype as keys like any other', () => {
    const table = new Dictionary<string>();
    expect(table.has('constructor')).toBe(false);
    expect(table.get('toString')).toBeUndefined();
    table.set('__proto__', 'p');
    table.set('constructor', 'c');
    expect(table.get('__proto__')).toBe('p');
    expect(table.keys().sort()).toEqual(['__proto__', 'constructor']);
    table.delete('__proto__');
    expect(table.has('__proto__')).toBe(false);
  });

  it('lets deleted entries die young: churned through a table in the old generation, they are not promoted', () => {
    // A child with --expose-gc: 200 values of about 8 KB each go in and out while other keys come and go,
    // then two scavenges. A Map here promotes all 200 (about 1.6 MB) through its replaced tables.
    const source = pathToFileURL(fileURLToPath(new URL('../../src/dictionary.ts', import.meta.url))).href;
    const script = `
      import v8 from 'node:v8';
      const { Dictionary } = await import(${JSON.stringify(source)});
      const old = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'old_space').space_used_size;
      const table = new Dictionary();
      table.set('seed', {});
      gc(); gc();
      const before = old();
      for (let round = 0; round < 200; round++) {
        table.set('k' + round, new Array(1000).fill(round));
        for (let i = 0; i < 3; i++) { table.set('o' + round + '-' + i, i); table.delete('o' + round + '-' + i); }
        table.delete('k' + round);
      }
      gc({ type: 'minor' }); gc({ type: 'minor' });
      process.stdout.write(String(old() - before));
    `;
    const promoted = Number(
      execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], {
        encoding: 'utf8',
        timeout: 20_000,
      }),
    );
    expect(promoted).toBeLessThan(400 * 1024);
  });
});
