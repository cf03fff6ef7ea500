/**
 * npm run bench:profile [-- --seconds 20] [--heap] [--dir DIR]
 *
 * Profiles the compiled gateway under B1's load: simulator at 0 ms, gateway
 * with the bench's environment (gatewayEnv + the lifted limits, pool 4, log
 * level info to a file) started with `node --cpu-prof`, one login, then
 * B1's closed loop of GET /core/PATRON (32 connections, one generated patron each) for a warm-up and
 * `--seconds`. With --heap, an allocation profile as well (bench/heap-sampler.mjs:
 * V8's sampling heap profiler counting freed objects too). The gateway is
 * stopped with SIGTERM so that node writes the profiles; each is then
 * summarised by bench/profile-summary.ts. The files stay in DIR (default a
 * new directory under /tmp) for Chrome DevTools or speedscope.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { B1_LOANS, patronPerWorker } from './b1-throughput.js';
import { generateLibrary } from './data.js';
import { httpLoop } from './driver.js';
import { gatewayEnv, installCleanup, runScript, startGateway, startSimulator } from './processes.js';
import { FULL } from './settings.js';

const USAGE = 'usage: npm run bench:profile [-- --seconds N] [--heap] [--dir DIR]\n';

/** SIGUSR2 makes bench/heap-sampler.mjs write the allocation profile; waits (at most 30 s) until it is there. */
async function writeHeapProfile(pid: number, file: string): Promise<void> {
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 30_000;
  while (!existsSync(file) && !existsSync(`${file}.error`)) {
    if (Date.now() > deadline) throw new Error(`no heap profile in ${file} after 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function main(argv: string[]): Promise<number> {
  let values: { seconds: string; heap?: boolean; dir?: string };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        seconds: { type: 'string', default: '20' },
        heap: { type: 'boolean' },
        dir: { type: 'string' },
      },
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const seconds = Number(values.seconds);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    process.stderr.write(`--seconds must be a positive number\n${USAGE}`);
    return 2;
  }
  const dir = resolve(values.dir ?? mkdtempSync(join(tmpdir(), 'paia-profile-')));
  installCleanup();
  mkdirSync(dir, { recursive: true });
  const nodeArgs = ['--cpu-prof', `--cpu-prof-dir=${dir}`];
  const env: Record<string, string> = { PAIA_SIP2_POOL_MIN: '4', PAIA_SIP2_POOL_MAX: '4' };
  if (values.heap) nodeArgs.push('--import', resolve('bench/heap-sampler.mjs'));

  const library = generateLibrary(FULL.b1Connections, B1_LOANS);
  const simulator = await startSimulator({ dataFile: library.file });
  try {
    const gatewayEnvironment = gatewayEnv(simulator.port, env);
    if (values.heap) gatewayEnvironment.BENCH_HEAP_PROFILE = join(dir, 'gateway.heapprofile');
    const gateway = await startGateway(gatewayEnvironment, nodeArgs);
    try {
      const result = await httpLoop({
        origin: gateway.url,
        path: '/core/',
        requestFor: await patronPerWorker(gateway.url, library),
        connections: FULL.b1Connections,
        warmupMs: FULL.b1GatewayWarmupMs,
        durationMs: seconds * 1000,
      });
      if (values.heap) await writeHeapProfile(gateway.pid, gatewayEnvironment.BENCH_HEAP_PROFILE!);
      process.stderr.write(
        `profile: ${result.completed} answers in ${seconds} s (${result.requestsPerSecond.toFixed(0)}/s), ${result.failures} failures\n`,
      );
    } finally {
      await gateway.stop();
    }
  } finally {
    await simulator.stop();
    library.remove();
  }
  for (const file of readdirSync(dir).filter((name) => /\.(cpu|heap)profile$/.test(name))) {
    const path = join(dir, file);
    process.stdout.write(`\n=== ${path}\n`);
    spawnSync(process.execPath, ['--import', 'tsx', 'bench/profile-summary.ts', path], { stdio: 'inherit' });
  }
  return 0;
}

runScript('profile', main);
