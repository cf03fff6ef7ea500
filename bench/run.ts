/**
 * npm run bench [-- --only B1,B3] [--quick] [--write]
 *
 * Runs the benchmarks (bench/README.md) one after another, each with its own
 * simulator and gateway child processes on 127.0.0.1, prints one table of
 * results from this run with the machine it ran on, and writes the same to
 * bench/RESULTS.md (a full run only, unless --write).
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { runB1 } from './b1-throughput.js';
import { runB2 } from './b2-fanout.js';
import { runB3 } from './b3-overhead.js';
import { runB4 } from './b4-memory.js';
import { runB5 } from './b5-flow.js';
import { runB6 } from './b6-shared-state.js';
import { runB7 } from './b7-floor.js';
import { runB8 } from './b8-visit.js';
import { runB9 } from './b9-libraries.js';
import { BENCHMARKS, type BenchmarkId, NEEDS, type Program } from './benchmarks.js';
import {
  gatewayNodeFlags,
  installCleanup,
  LIFTED_LIMITS,
  runScript,
  setGatewayNodeFlags,
  stopAll,
} from './processes.js';
import { machine, type Report, type Row, render, resultsFile } from './report.js';
import { FULL, QUICK, type Settings } from './settings.js';

const RUNS: Record<BenchmarkId, (settings: Settings) => Promise<Row[]>> = {
  B1: runB1,
  B2: runB2,
  B3: runB3,
  B4: runB4,
  B5: runB5,
  B6: runB6,
  B7: runB7,
  B8: runB8,
  B9: runB9,
};
const BENCHES: Record<string, { title: string; run: (settings: Settings) => Promise<Row[]> }> = Object.fromEntries(
  (Object.keys(BENCHMARKS) as BenchmarkId[]).map((id) => [id, { title: BENCHMARKS[id], run: RUNS[id] }]),
);

const USAGE = `usage: npm run bench [-- [--only B1,B3] [--quick] [--write] ["--node-flags=FLAGS"]]

Needs the gateway built (npm run bench builds it first) and, for some benchmarks, a further program:
${Object.entries(NEEDS)
  .map(
    ([id, programs]) => `  ${id}: ${programs.map((program) => `${program.command} (${program.install})`).join(', ')}`,
  )
  .join('\n')}
A benchmark whose program is missing is skipped, with the reason in its row.

  --only LIST  run only these benchmarks (${Object.keys(BENCHES).join(', ')})
  --quick      shorter durations and fewer samples (for working on the bench; not comparable)
  --write      write bench/RESULTS.md even for --only / --quick (a full run always writes it)
  --node-flags=FLAGS
               node options for every gateway instead of those it ships with (src/node-flags.ts;
               docs/operations.md, "Memory"), e.g. --node-flags= for node's defaults: to weigh memory against CPU`;

const RESULTS = new URL('./RESULTS.md', import.meta.url);

/** Whether `program` runs here (found on PATH). */
function installed(program: Program): boolean {
  return spawnSync(program.command, ['--version'], { stdio: 'ignore', timeout: 10_000 }).error === undefined;
}

async function main(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        only: { type: 'string' },
        quick: { type: 'boolean' },
        write: { type: 'boolean' },
        'node-flags': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const selected =
    values.only === undefined
      ? Object.keys(BENCHES)
      : values.only
          .split(',')
          .map((id) => id.trim().toUpperCase())
          .filter(Boolean);
  const unknown = selected.filter((id) => !(id in BENCHES));
  if (unknown.length > 0 || selected.length === 0) {
    process.stderr.write(`unknown benchmark ${unknown.join(', ') || '(none given)'}\n\n${USAGE}\n`);
    return 2;
  }
  const settings = values.quick ? QUICK : FULL;
  const nodeFlags = values['node-flags']?.split(/\s+/).filter(Boolean);
  const notAFlag = nodeFlags?.find((flag) => !flag.startsWith('--'));
  if (notAFlag !== undefined) {
    process.stderr.write(
      `--node-flags takes node options (--name=value), not ${JSON.stringify(notAFlag)}\n\n${USAGE}\n`,
    );
    return 2;
  }
  if (nodeFlags !== undefined) setGatewayNodeFlags(nodeFlags);
  installCleanup();

  const started = performance.now();
  const loadAtStart = os.loadavg()[0]!;
  const rows: Row[] = [];
  for (const id of selected) {
    const bench = BENCHES[id]!;
    const missing = (NEEDS[id as BenchmarkId] ?? []).filter((program) => !installed(program));
    if (missing.length > 0) {
      const why = missing.map((program) => `${program.command} is not installed (${program.install})`).join('; ');
      process.stderr.write(`bench: ${id} skipped: ${why}\n`);
      rows.push({ id, what: bench.title, result: 'skipped', target: '', met: 'n/a', notes: [`skipped: ${why}`] });
      continue;
    }
    process.stderr.write(`bench: ${id} ${bench.title} ...\n`);
    const t0 = performance.now();
    try {
      rows.push(...(await bench.run(settings)));
    } catch (error) {
      rows.push({
        id,
        what: bench.title,
        result: 'failed',
        target: '',
        met: 'INVALID',
        notes: [`the benchmark failed: ${(error as Error).message.split('\n')[0]}`],
      });
      process.stderr.write(`bench: ${id} failed: ${(error as Error).stack ?? String(error)}\n`);
      await stopAll();
    }
    process.stderr.write(`bench: ${id} done in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  }

  const args = [
    values.only !== undefined ? `--only ${selected.join(',')}` : '',
    values.quick ? '--quick' : '',
    nodeFlags !== undefined ? `"--node-flags=${nodeFlags.join(' ')}"` : '',
  ]
    .filter(Boolean)
    .join(' ');
  const report: Report = {
    command: `npm run bench${args ? ` -- ${args}` : ''}`,
    machine: machine(),
    rows,
    general: [
      `client limits lifted on every bench gateway: ${Object.entries(LIFTED_LIMITS)
        .map(([name, value]) => `${name}=${value}`)
        .join(
          ', ',
        )} (B4 also PAIA_AUTH_MAX_SESSIONS=100000); the account window (cache.accounts) off on every bench gateway but B4's and B8's`,
      `each gateway: \`node ${gatewayNodeFlags()
        .map((flag) => `${flag} `)
        .join(
          '',
        )}dist/src/cli/main.js serve\` (compiled by \`npm run build\`), generic dialect, log level info (one JSON line per request, written to a temporary file as a production log would be); simulator \`--log-level warn\`; driver, simulator and gateway share this machine`,
      `load average (1 min) at start ${loadAtStart.toFixed(2)}, at end ${os.loadavg()[0]!.toFixed(2)}, on ${os.cpus().length} cores: anything else running on the machine shows in the numbers`,
      ...(settings.quick
        ? ['--quick: shorter windows and fewer samples; numbers are not comparable with a full run']
        : []),
    ],
    runtimeS: (performance.now() - started) / 1000,
  };
  process.stdout.write(`\n${render(report)}\n`);

  // RESULTS.md holds the numbers of the gateway as shipped: a run with other node flags is written only when asked.
  const full = values.only === undefined && !values.quick && nodeFlags === undefined;
  if (full || values.write) {
    writeFileSync(RESULTS, resultsFile(report));
    process.stdout.write(`\nwritten to bench/RESULTS.md\n`);
  } else {
    process.stdout.write(`\nbench/RESULTS.md not written (partial or quick run; --write forces it)\n`);
  }
  return rows.some((row) => row.met === 'INVALID') ? 1 : 0;
}

runScript('bench', main);
