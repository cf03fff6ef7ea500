/**
 * Docs that cannot drift: the documentation is held to the code it
 * describes, by reading files only. Links and anchors resolve; sections named
 * in comments exist; every file of src/ is named in its folder's README and
 * every file a README names exists; ARCHITECTURE.md says what the
 * architecture test enforces; and the lists of benchmarks, dialects, metrics
 * and settings are the code's, in both directions.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BENCHMARKS } from '../../../bench/benchmarks.js';
import { configSettings, envNameOf } from '../../../src/config/index.js';
import { RENAMED_SETTINGS } from '../../../src/config/renamed.js';
import { GatewayMetrics } from '../../../src/metrics/gateway.js';
import { GROUP_METRIC_NAMES } from '../../../src/metrics/group.js';
import { BUILTIN_DIALECTS } from '../../../src/sip2/dialect.js';
import { ALSO_ALLOWED, MAY_IMPORT, SHARED } from '../../helpers/layers.js';
import { anchors, codeSpans, headings, linkTargets, proseLines, rows, section } from '../../helpers/markdown.js';

/** A file's name, not a setting's path. */
const FILE_NAME = /\.(json|ya?ml|ts|m?js|md|ini|csv|xml|conf|txt)$/;

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** Every file under a folder of the repository (relative paths), recursively. */
function filesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

/** The Markdown this test reads: the front door, the pages, and every README. */
const DOCS = [
  'README.md',
  'ARCHITECTURE.md',
  'CHANGELOG.md',
  'bench/README.md',
  'sip2-simulator/README.md',
  ...filesUnder('docs').filter((file) => file.endsWith('.md')),
  ...filesUnder('src').filter((file) => file.endsWith('/README.md')),
];

/** The pages a sysadmin or developer reads today (not the CHANGELOG, which tells what was). */
const CURRENT_DOCS = DOCS.filter((file) => file !== 'CHANGELOG.md');

/** Where code and configuration name a doc's section in words (`docs/operations.md, "Memory"`). */
const SOURCES = [
  ...['src', 'sip2-simulator/src', 'bench', 'config', 'deploy', 'test'].flatMap(filesUnder),
  'Dockerfile',
  'compose.yaml',
  ...DOCS,
].filter(
  (file) =>
    /\.(ts|mjs|yaml|md|service)$|Dockerfile$/.test(file) &&
    !file.endsWith('RESULTS.md') &&
    file !== 'test/unit/docs/drift.test.ts',
);

/** The variable docs/dialects.md misspells on purpose, to show that the gateway names the right one. */
const MISSPELT_EXAMPLE = 'PAIA_SIP2_TERMINAL_PASWORD';

describe('links and anchors', () => {
  it('every relative link in the docs names a file that exists, and every #anchor a heading of it', () => {
    const broken: string[] = [];
    for (const doc of DOCS) {
      for (const target of linkTargets(read(doc))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const file = path === '' ? doc : relative(ROOT, resolve(ROOT, dirname(doc), decodeURIComponent(path)));
        if (file.startsWith('..') || !existsSync(join(ROOT, file))) broken.push(`${doc}: ${target} (no such file)`);
        else if (anchor !== undefined && file.endsWith('.md') && !anchors(read(file)).has(anchor))
          broken.push(`${doc}: ${target} (no heading with that anchor in ${file})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every section named in words (`docs/x.md, "Heading"`, `README "Heading"`) is a heading of that file', () => {
    const broken: string[] = [];
    for (const file of SOURCES) {
      const text = read(file).replace(/\n\s*(\*|\/\/|#)?\s*/g, ' ');
      for (const match of text.matchAll(/\b((?:[\w.-]+\/)*[\w.-]+\.md|README),? "([^"]+)"/g)) {
        const named = match[1] === 'README' ? 'README.md' : match[1]!;
        // The repository's own docs; the shared design notes and the specification live outside it.
        if (!/(^|\/)(README|ARCHITECTURE|CHANGELOG)\.md$|^docs\//.test(named)) continue;
        const target = [named, join(dirname(file), named)].find((path) => existsSync(join(ROOT, path)));
        const titles = target ? headings(read(target)).map(({ text }) => text.replace(/`/g, '')) : [];
        if (!titles.some((title) => title.startsWith(match[2]!))) broken.push(`${file}: ${match[0]}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('the folder READMEs', () => {
  const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);

  it('every src/ folder has a README, and it names every file under it; ARCHITECTURE.md names the files of src/ itself', () => {
    const unnamed: string[] = [];
    for (const folder of folders) {
      const readme = `src/${folder}/README.md`;
      if (!existsSync(join(ROOT, readme))) {
        unnamed.push(`${readme} is missing`);
        continue;
      }
      const text = read(readme);
      /** Whether the README names this text as a word of its own (`routes/mount.ts` names `mount.ts` too). */
      const names = (name: string) => new RegExp(`(?<![\\w.-])${name.replace(/\./g, '\\.')}(?![\\w-])`).test(text);
      for (const file of filesUnder(`src/${folder}`).filter((path) => path.endsWith('.ts'))) {
        const inFolder = relative(`src/${folder}`, file);
        const base = inFolder.split('/').at(-1)!;
        // A file is named by its path in the folder or by its own name; an index.ts by its folder's name.
        const ok = names(inFolder) || (base === 'index.ts' ? names(basename(dirname(file))) : names(base));
        if (!ok) unnamed.push(`${readme} does not name ${inFolder}`);
      }
    }
    const architecture = new Set(codeSpans(read('ARCHITECTURE.md')));
    for (const entry of readdirSync(join(ROOT, 'src')).filter((name) => name.endsWith('.ts')))
      if (!architecture.has(`src/${entry}`)) unnamed.push(`ARCHITECTURE.md does not name src/${entry}`);
    expect(unnamed).toEqual([]);
  });

  it('every source file a README or ARCHITECTURE.md names exists', () => {
    const missing: string[] = [];
    const sources = filesUnder('src');
    for (const doc of [
      'ARCHITECTURE.md',
      'docs/architecture.md',
      ...folders.map((folder) => `src/${folder}/README.md`),
    ]) {
      const here = dirname(doc);
      for (const name of codeSpans(read(doc)).filter((span) => /^[\w./-]+\.ts$/.test(span))) {
        const found = name.includes('/')
          ? [join(here, name), join('src', name), name].some((path) => existsSync(join(ROOT, path)))
          : sources.some((path) => path.endsWith(`/${name}`));
        if (!found) missing.push(`${doc} names ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('figures in the code', () => {
  it('src/ states no microsecond costs in comments: they go stale; the bench measures them (bench/README.md)', () => {
    const stated = filesUnder('src')
      .filter((file) => file.endsWith('.ts'))
      .flatMap((file) =>
        (read(file).match(/[\d.]+\s*(?:µs|microseconds?)\b/g) ?? []).map((figure) => `${file}: ${figure}`),
      );
    expect(stated).toEqual([]);
  });
});

describe('ARCHITECTURE.md', () => {
  const table = rows(read('ARCHITECTURE.md')).filter((cells) => /^`(src|sip2-simulator)\//.test(cells[0] ?? ''));
  const cellOf = (name: string) => table.find((cells) => cells[0] === `\`${name}\``)?.[2];

  it('calls exactly the shared modules of the architecture test "anyone"', () => {
    const shared = table
      .filter((cells) => /^`src\/[\w-]+\.ts`$/.test(cells[0]!) && /^anyone\b/.test(cells[2] ?? ''))
      .map((cells) => cells[0]!.slice('`src/'.length, -1));
    expect(shared.sort()).toEqual([...SHARED].sort());
  });

  it('gives every folder the imports the architecture test allows, and no other', () => {
    for (const [folder, allowed] of Object.entries(MAY_IMPORT)) {
      const cell = cellOf(`src/${folder}/`);
      expect(cell, `ARCHITECTURE.md has no row for src/${folder}/`).toBeDefined();
      // "sip2, auth, backend, `http/defaults.ts`"; "config, http, ..., and the simulator (demo mode)"; "no other folder (packages: ...)".
      const items = cell!
        .replace(/\([^)]*\)/g, '')
        .split(/,|\band\b/)
        .map((item) => item.trim().replace(/`/g, ''))
        .filter((item) => item !== '' && item !== 'no other folder' && item !== 'the simulator');
      const folders = items.filter((item) => !item.endsWith('.ts'));
      const modules = items.filter((item) => item.endsWith('.ts'));
      expect(folders.sort(), `may import of src/${folder}/`).toEqual([...allowed].sort());
      expect(modules.sort(), `single modules src/${folder}/ may import`).toEqual(
        [...(ALSO_ALLOWED[folder] ?? [])].sort(),
      );
    }
  });

  it('has a row for each folder the architecture test knows, and no other', () => {
    const documented = table.map((cells) => cells[0]!).filter((name) => /^`src\/\w+\/`$/.test(name));
    expect(documented.map((name) => name.slice('`src/'.length, -2)).sort()).toEqual(Object.keys(MAY_IMPORT).sort());
  });
});

describe('the lists the docs keep', () => {
  const ids = Object.keys(BENCHMARKS);

  it('name the benchmarks bench/benchmarks.ts defines: all in bench/README.md and docs/benchmarks.md, none other anywhere', () => {
    const tabled = rows(section(read('bench/README.md'), 'What each benchmark measures')).map((cells) => cells[0]);
    expect(tabled.filter((cell) => /^B\d+$/.test(cell ?? ''))).toEqual(ids);
    const page = read('docs/benchmarks.md');
    expect([...new Set(page.match(/\bB\d+\b/g))].sort()).toEqual([...ids].sort());
    const wrong: string[] = [];
    // The demo data's call numbers (`GM 4711 M363 B9`) are no benchmarks.
    for (const doc of CURRENT_DOCS.filter((file) => !['docs/api.md', 'sip2-simulator/README.md'].includes(file))) {
      const text = read(doc);
      for (const id of text.match(/\bB\d+\b/g) ?? []) if (!ids.includes(id)) wrong.push(`${doc}: ${id}`);
      // "B1-B5" for the benchmarks as a whole is how a list goes stale.
      for (const [range, last] of text.matchAll(/\bB1 ?(?:-|–|\.\.|to) ?(B\d+)\b/g))
        if (last !== ids.at(-1)) wrong.push(`${doc}: ${range}`);
    }
    expect(wrong).toEqual([]);
  });

  it('give a row to every built-in dialect of src/sip2/dialect.ts in each dialect table of docs/dialects.md, and to no other', () => {
    const page = section(read('docs/dialects.md'), 'Dialects');
    const tables = page.split(/\n(?=\| dialect \|)/).slice(1);
    expect(tables.length).toBeGreaterThanOrEqual(2);
    for (const table of tables) {
      const names = rows(table.split('\n\n')[0]!).map((cells) => cells[0]);
      expect(names.slice(1)).toEqual([...BUILTIN_DIALECTS]);
    }
  });

  it('document every metric a gateway registers, and name none it does not', () => {
    const registered = [
      ...new GatewayMetrics({ defaultMetrics: false }).registry.getMetricsAsArray().map(({ name }) => name),
      // With workers, a scrape also says how many of them it reached.
      ...GROUP_METRIC_NAMES,
    ];
    const tabled = rows(section(read('docs/operations.md'), 'Metrics')).flatMap((cells) =>
      [...(cells[0] ?? '').matchAll(/`(paia_\w+)`/g)].map((match) => match[1]!),
    );
    expect([...tabled].sort()).toEqual([...registered].sort());
    const unknown = CURRENT_DOCS.flatMap((doc) =>
      [
        ...proseLines(read(doc))
          .join('\n')
          .matchAll(/\bpaia_[a-z0-9_]+/g),
      ]
        .map((match) => match[0])
        .filter((name) => !registered.includes(name))
        .map((name) => `${doc}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });

  describe('settings', () => {
    const settings = configSettings();
    const paths = settings.map((setting) => setting.path);
    const page = read('docs/configuration.md');

    /** The settings a row's first cell names: `a.b.c` in full, `.d` beside the last full one. */
    function documentedPaths(): string[] {
      const found: string[] = [];
      for (const cells of rows(section(page, 'Every setting'))) {
        let parent = '';
        for (const name of [...(cells[0] ?? '').matchAll(/`([\w.]+)`/g)].map((match) => match[1]!)) {
          const path = name.startsWith('.') ? `${parent}${name}` : name;
          parent = path.slice(0, path.lastIndexOf('.'));
          found.push(path);
        }
      }
      return found;
    }

    it('has a row in docs/configuration.md for every setting of the schema, and none for a setting it lacks', () => {
      const documented = documentedPaths();
      // An optional section (http.tls) is documented by its settings.
      const expected = settings
        .filter((setting) => !(setting.kind === 'section' && paths.some((path) => path.startsWith(`${setting.path}.`))))
        .map((setting) => setting.path);
      expect([...documented].sort()).toEqual([...expected].sort());
    });

    it('names in the configuration page every variable that does not follow the naming rule', () => {
      const exceptions = settings.filter((setting) => setting.env !== envNameOf(setting.path));
      for (const setting of exceptions) expect(page, setting.path).toContain(setting.env);
    });

    it('name in the docs only settings, sections and PAIA_* variables that exist', () => {
      // The deprecated names of renamed settings still work for a release, so the docs may name them.
      const sections = new Set(
        [...paths, ...RENAMED_SETTINGS.map((renamed) => renamed.from)].flatMap((path) =>
          path.split('.').map((_, i, all) => all.slice(0, i + 1).join('.')),
        ),
      );
      const variables = new Set([
        ...settings.map((setting) => setting.env),
        ...settings.filter((setting) => setting.secret).map((setting) => `${setting.env}_FILE`),
        // Variables that are no setting (PAIA_CONFIG, the doctor's password, the tests' image ...), as the code reads them.
        ...['src', 'sip2-simulator/src', 'test/helpers']
          .flatMap(filesUnder)
          .flatMap((file) => read(file).match(/\bPAIA_[A-Z0-9_]+/g) ?? []),
      ]);
      const top = new Set(paths.map((path) => path.split('.')[0]));
      const wrong: string[] = [];
      for (const doc of CURRENT_DOCS) {
        const text = read(doc);
        for (const span of codeSpans(text)) {
          // `sip2.pool.max`, `auth.clients[].secretEnv`: the setting part must exist (`demo.json` is a file).
          const path = /^([a-z]\w*(?:\.[a-zA-Z]\w*)+)/.exec(span)?.[1];
          if (path && top.has(path.split('.')[0]) && !sections.has(path) && !FILE_NAME.test(span))
            wrong.push(`${doc}: ${span}`);
        }
        for (const name of text.match(/\bPAIA_[A-Z0-9_]*[A-Z0-9]\b/g) ?? [])
          if (!variables.has(name) && name !== MISSPELT_EXAMPLE) wrong.push(`${doc}: ${name}`);
      }
      expect(wrong).toEqual([]);
    });
  });
});
