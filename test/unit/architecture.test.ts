/**
 * The layering of src/, read from the import statements themselves: which
 * folder may import which (ARCHITECTURE.md draws the same picture), sip2's
 * public surface (index.ts) as the only way into it from outside, no import
 * loops (in src/ and in the simulator), Config read only where the
 * configuration is turned into parts, and the environment read only where
 * the configuration is loaded. The tables are in test/helpers/layers.ts,
 * which the drift test (test/unit/docs/drift.test.ts) holds ARCHITECTURE.md to.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ALSO_ALLOWED, CONFIG_LOADERS, ENV_READERS, MAY_IMPORT, SHARED, SIMULATOR_ENTRIES } from '../helpers/layers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');
const SIMULATOR = join(ROOT, 'sip2-simulator', 'src');

interface Module {
  file: string;
  folder: string;
  imports: string[];
}

/** A module's code without its comments (which may name process.env to say where a default comes from). */
const codeOf = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const IMPORT =
  /^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

/** Every .ts file under `dir`, with its relative imports resolved to paths relative to `base`. */
function importsOf(dir: string, base: string): Module[] {
  return sourceFiles(dir).map((path) => {
    const text = readFileSync(path, 'utf8');
    const imports: string[] = [];
    for (const match of text.matchAll(IMPORT)) {
      const target = match[1] ?? match[2] ?? match[3]!;
      if (!target.startsWith('.')) continue;
      imports.push(relative(base, resolve(dirname(path), target)).replace(/\.js$/, '.ts'));
    }
    const file = relative(base, path);
    return { file, folder: file.includes('/') ? file.split('/')[0]! : '.', imports };
  });
}

const folderOf = (file: string) => (file.includes('/') ? file.split('/')[0]! : file);

describe('architecture', () => {
  const all = importsOf(SRC, SRC);

  it('every folder imports only the folders below it', () => {
    const broken: string[] = [];
    for (const module of all) {
      const allowed = MAY_IMPORT[module.folder];
      if (allowed === undefined) continue;
      for (const target of module.imports) {
        const folder = folderOf(target);
        if (folder === module.folder || SHARED.includes(target)) continue;
        if (folder.startsWith('..')) {
          if (!(SIMULATOR_ENTRIES[module.folder] ?? []).includes(target)) broken.push(`${module.file} -> ${target}`);
          continue;
        }
        if (!allowed.includes(folder) && !(ALSO_ALLOWED[module.folder] ?? []).includes(target))
          broken.push(`${module.file} -> ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('lets the simulator reach into src/sip2/ only (the codec and message types) and src/package-root.ts, never the gateway', () => {
    const reaching = importsOf(SIMULATOR, ROOT).flatMap((module) =>
      module.imports
        .filter(
          (target) => target.startsWith('src/') && !target.startsWith('src/sip2/') && target !== 'src/package-root.ts',
        )
        .map((target) => `${module.file} -> ${target}`),
    );
    expect(reaching).toEqual([]);
  });

  it('reaches src/sip2/ from outside (the other folders, the simulator) only through its public surface, src/sip2/index.ts', () => {
    const outside = [...importsOf(SRC, ROOT), ...importsOf(SIMULATOR, ROOT)].filter(
      (module) => !module.file.startsWith('src/sip2/'),
    );
    const bypassing = outside.flatMap((module) =>
      module.imports
        .filter((target) => target.startsWith('src/sip2/') && target !== 'src/sip2/index.ts')
        .map((target) => `${module.file} -> ${target}`),
    );
    expect(bypassing).toEqual([]);
  });

  it('has no import loops, in the gateway or the simulator', () => {
    const everything = [...importsOf(SRC, ROOT), ...importsOf(SIMULATOR, ROOT)];
    const graph = new Map(
      everything.map((module) => [module.file, module.imports.filter((target) => target.endsWith('.ts'))]),
    );
    const loops: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        loops.push([...path.slice(path.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'visiting');
      for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    expect(loops).toEqual([]);
  });

  it('reads Config only in config/ and gateway/ (the command line loads it and hands it on)', () => {
    const readers = all
      .filter((module) => module.imports.some((target) => target.startsWith('config/')))
      .map((module) => module.file)
      .filter((file) => !['config', 'gateway'].includes(folderOf(file)) && !CONFIG_LOADERS.includes(file));
    expect(readers).toEqual([]);
  });

  it('reads process.env only in config/ and the listed entry points: the loader reads the environment once', () => {
    const readers = sourceFiles(SRC)
      .filter((path) => /\bprocess\.env\b/.test(codeOf(readFileSync(path, 'utf8'))))
      .map((path) => relative(SRC, path))
      .filter((file) => folderOf(file) !== 'config' && !ENV_READERS.includes(file));
    expect(readers).toEqual([]);
  });
});
