/**
 * Summarises a V8 .cpuprofile (node --cpu-prof) or .heapprofile (node
 * --heap-prof): self samples (CPU) or self bytes allocated (heap) grouped by
 * package (node_modules/NAME), by our own file (src/..., dist/src/...), by
 * node's internals (node:...), or by V8's pseudo-nodes ((garbage collector),
 * (program), (idle)); then the top functions. Total time per function is
 * also printed for CPU profiles (a function's own samples and those of
 * everything it called, counted once per sample even when recursive).
 *
 *   npx tsx bench/profile-summary.ts FILE.cpuprofile [--top 25]
 *   npx tsx bench/profile-summary.ts FILE.heapprofile [--top 25]
 *
 * Shares are of the busy samples: (idle) is left out of the denominator, so
 * the numbers say where the CPU the process used went.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface CpuNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: CpuNode[];
  samples: number[];
}

interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}

/** The group a frame's cost is charged to: a package, one of our files, node's internals, or a V8 pseudo-frame. */
export function groupOf(frame: CallFrame): string {
  const url = frame.url;
  if (url === '') return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return 'node:internal';
  const own = /\/(?:dist\/)?((?:src|sip2-simulator|bench)\/.*)$/.exec(url);
  if (own) return own[1]!.replace(/\.js$/, '.ts');
  return url;
}

function frameName(frame: CallFrame): string {
  const name = frame.functionName || '(anonymous)';
  if (frame.url === '') return name;
  const file = groupOf(frame);
  const short = frame.url.startsWith('node:') ? frame.url : file;
  return `${name} ${short}:${frame.lineNumber + 1}`;
}

function pct(part: number, whole: number): string {
  return `${((100 * part) / whole).toFixed(1).padStart(5)}%`;
}

function printTable(title: string, entries: Array<[string, number]>, whole: number, top: number, unit: string): void {
  process.stdout.write(`\n${title}\n`);
  for (const [name, value] of entries.sort((a, b) => b[1] - a[1]).slice(0, top))
    process.stdout.write(
      `  ${pct(value, whole)}  ${unit === '' ? '' : `${value.toFixed(0).padStart(8)} ${unit}  `}${name}\n`,
    );
}

function add(map: Map<string, number>, key: string, value: number): void {
  map.set(key, (map.get(key) ?? 0) + value);
}

function summariseCpu(profile: CpuProfile, top: number): void {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfCount = new Map<number, number>();
  for (const id of profile.samples) selfCount.set(id, (selfCount.get(id) ?? 0) + 1);

  const idle = [...selfCount].filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)');
  const idleSamples = idle.reduce((sum, [, n]) => sum + n, 0);
  const busy = profile.samples.length - idleSamples;

  const selfByGroup = new Map<string, number>();
  const selfByFunction = new Map<string, number>();
  const totalByFunction = new Map<string, number>();
  const totalByGroup = new Map<string, number>();
  for (const [id, count] of selfCount) {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') continue;
    add(selfByGroup, groupOf(node.callFrame), count);
    add(selfByFunction, frameName(node.callFrame), count);
    // Walk up the stack once; charge each distinct function and group once per sample.
    const seenFunctions = new Set<string>();
    const seenGroups = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (frame.functionName === '(root)') break;
      const name = frameName(frame);
      if (!seenFunctions.has(name)) {
        seenFunctions.add(name);
        add(totalByFunction, name, count);
      }
      const group = groupOf(frame);
      if (!seenGroups.has(group)) {
        seenGroups.add(group);
        add(totalByGroup, group, count);
      }
    }
  }
  process.stdout.write(
    `${profile.samples.length} samples, ${busy} busy (${pct(busy, profile.samples.length).trim()}), ${idleSamples} idle; shares below are of the busy samples\n`,
  );
  printTable('self time by package / file', [...selfByGroup], busy, top, '');
  printTable('self time by function', [...selfByFunction], busy, top, '');
  printTable('total time by package / file (self + callees)', [...totalByGroup], busy, top, '');
  printTable('total time by function (self + callees)', [...totalByFunction], busy, top, '');
}

function summariseHeap(root: HeapNode, top: number): void {
  const byGroup = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let whole = 0;
  const walk = (node: HeapNode) => {
    if (node.selfSize > 0) {
      whole += node.selfSize;
      add(byGroup, groupOf(node.callFrame), node.selfSize / 1024);
      add(byFunction, frameName(node.callFrame), node.selfSize / 1024);
    }
    for (const child of node.children) walk(child);
  };
  walk(root);
  process.stdout.write(`${(whole / 1024 / 1024).toFixed(1)} MB sampled allocations\n`);
  printTable('allocated bytes by package / file', [...byGroup], whole / 1024, top, 'KiB');
  printTable('allocated bytes by function', [...byFunction], whole / 1024, top, 'KiB');
}

function main(argv: string[]): number {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' } },
  });
  const top = Number(values.top);
  if (positionals.length !== 1 || !Number.isInteger(top) || top < 1) {
    process.stderr.write('usage: npx tsx bench/profile-summary.ts FILE.cpuprofile|FILE.heapprofile [--top N]\n');
    return 2;
  }
  const json = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as CpuProfile | { head: HeapNode };
  if ('head' in json) summariseHeap(json.head, top);
  else summariseCpu(json, top);
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main(process.argv.slice(2));
