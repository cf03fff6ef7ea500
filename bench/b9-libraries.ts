import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { B1_LOANS, describe, type Measured, measureTranslated, median, spread } from './b1-throughput.js';
import { isolationRow, measureIsolation } from './b9-isolation.js';
import { type GeneratedLibrary, generateLibrary } from './data.js';
import { mapConcurrent } from './driver.js';
import {
  cpuSecondsOf,
  type Gateway,
  gatewayEnv,
  memoryOf,
  type Simulator,
  startGateway,
  startSimulator,
} from './processes.js';
import { mb, metOf, type Row } from './report.js';
import type { Settings } from './settings.js';

/**
 * B9: several libraries behind one gateway (issue 29). One compiled gateway
 * with `settings.b9Libraries` libraries (DE-001 ...), each with its own
 * `sip2.pool` of min = max = 2 against its own simulator process. Per round:
 * the time from spawning that gateway until /readyz answers 200 (every library
 * ready: the default `http.readyWhen`), its VmRSS after a rest, and its CPU per
 * `GET /core/PATRON` at one library under B1's closed loop (B1's patrons,
 * warm-up and window); then, over the same simulator, a fresh single-library
 * gateway with the same pool under the same load. CPU from /proc (utime +
 * stime), as B1 measures it; the ratio is median ÷ median of the rounds.
 * Then, on a fresh gateway with every library, B9 isolation (b9-isolation.ts).
 */

const START_TARGET_S = 10;
const MEMORY_TARGET_BYTES = 300 * 1024 * 1024;
const CPU_TARGET = 1;
const POOL = 2;
/** Simulators started at once: each one's start is mostly node's own, and the machine may have 2 cores. */
const SIMULATOR_STARTS = 4;
/** Bound on every library getting ready after the gateway's banner (the target is far below it). */
const READY_TIMEOUT_MS = 30_000;
const READY_POLL_MS = 20;

function libraryId(index: number): string {
  return `DE-${String(index + 1).padStart(3, '0')}`;
}

/** The configuration file: every library on its own simulator, the rest (host, terminal, URIs) from the environment. */
function writeConfig(dir: string, simulators: readonly Simulator[]): string {
  const file = join(dir, 'libraries.yaml');
  const lines = simulators.map(
    (simulator, index) =>
      `  ${libraryId(index)}:\n    sip2: { port: ${simulator.port}, pool: { min: ${POOL}, max: ${POOL} } }`,
  );
  writeFileSync(file, `libraries:\n${lines.join('\n')}\n`);
  return file;
}

/** /readyz until 200 (bounded); what it answered last. */
async function untilReady(gateway: Gateway): Promise<{ libraries?: Record<string, { status: string }> }> {
  const deadline = performance.now() + READY_TIMEOUT_MS;
  for (;;) {
    const response = await fetch(`${gateway.url}/readyz`, { signal: AbortSignal.timeout(5000) });
    const body = (await response.json()) as { libraries?: Record<string, { status: string }>; reasons?: string[] };
    if (response.status === 200) return body;
    if (performance.now() > deadline)
      throw new Error(
        `the gateway was not ready within ${READY_TIMEOUT_MS / 1000} s of its banner: ${(body.reasons ?? []).slice(0, 3).join('; ')}`,
      );
    await sleep(READY_POLL_MS);
  }
}

interface Round {
  /** Spawn to the banner, and to /readyz 200, in seconds. */
  bannerS: number;
  readyS: number;
  /** CPU seconds the gateway used until every library was ready. */
  startCpuS: number;
  /** Libraries /readyz listed as ready. */
  readyLibraries: number;
  rest: { rss: number; hwm: number };
  many: Measured;
  single: Measured;
}

/** The gateway with every library: its start, its memory at rest, then B1's load at library `measured`. */
async function measureMany(
  settings: Settings,
  configFile: string,
  simulators: readonly Simulator[],
  measured: number,
  library: GeneratedLibrary,
): Promise<Omit<Round, 'single'>> {
  const t0 = performance.now();
  const gateway = await startGateway(gatewayEnv(simulators[0]!.port, { PAIA_CONFIG: configFile }));
  try {
    const bannerS = (performance.now() - t0) / 1000;
    const body = await untilReady(gateway);
    const readyS = (performance.now() - t0) / 1000;
    const startCpuS = cpuSecondsOf(gateway.pid);
    const readyLibraries = Object.values(body.libraries ?? {}).filter((entry) => entry.status === 'ready').length;
    await sleep(settings.b9RestMs);
    const rest = memoryOf(gateway.pid);
    const many = await measureTranslated(settings, gateway, simulators[measured]!, library, `/${libraryId(measured)}`);
    return { bannerS, readyS, startCpuS, readyLibraries, rest, many };
  } finally {
    await gateway.stop();
  }
}

/** A single-library gateway with the same pool over the same simulator, under the same load. */
async function measureSingle(settings: Settings, simulator: Simulator, library: GeneratedLibrary): Promise<Measured> {
  const gateway = await startGateway(
    gatewayEnv(simulator.port, { PAIA_SIP2_POOL_MIN: String(POOL), PAIA_SIP2_POOL_MAX: String(POOL) }),
  );
  try {
    await untilReady(gateway);
    return await measureTranslated(settings, gateway, simulator, library);
  } finally {
    await gateway.stop();
  }
}

/** One round; odd rounds measure the single-library gateway first, so that neither side always meets a warmer simulator. */
async function round(
  settings: Settings,
  index: number,
  configFile: string,
  simulators: readonly Simulator[],
  measured: number,
  library: GeneratedLibrary,
): Promise<Round> {
  if (index % 2 === 1) {
    const single = await measureSingle(settings, simulators[measured]!, library);
    return { ...(await measureMany(settings, configFile, simulators, measured, library)), single };
  }
  const many = await measureMany(settings, configFile, simulators, measured, library);
  return { ...many, single: await measureSingle(settings, simulators[measured]!, library) };
}

export async function runB9(settings: Settings): Promise<Row[]> {
  const count = settings.b9Libraries;
  const measured = Math.floor(count / 2);
  const loadAtStart = os.loadavg()[0]!;
  // One patron per connection, as B1: every simulator reads the same file.
  const library = generateLibrary(settings.b1Connections, B1_LOANS);
  const dir = mkdtempSync(join(tmpdir(), 'paia-bench-b9-'));
  let started: Array<Simulator | Error> = [];
  try {
    const s0 = performance.now();
    started = await mapConcurrent(Array.from({ length: count }), SIMULATOR_STARTS, () =>
      startSimulator({ dataFile: library.file }),
    );
    const simulatorsS = (performance.now() - s0) / 1000;
    const failed = started.find((entry) => entry instanceof Error);
    if (failed !== undefined) throw failed;
    const simulators = started as Simulator[];
    const simulatorRss = simulators.reduce((sum, simulator) => sum + memoryOf(simulator.pid).rss, 0);
    const configFile = writeConfig(dir, simulators);

    const rounds: Round[] = [];
    for (let r = 0; r < settings.b9Rounds; r++)
      rounds.push(await round(settings, r, configFile, simulators, measured, library));
    const ids = { a: libraryId(measured - 1), b: libraryId(measured) };
    // Every client here is 127.0.0.1, where a consortium's have many addresses: A's calls held by its paused ILS
    // would otherwise fill the one address's connection cap (100) and refuse B's connections (503) for that reason.
    const gateway = await startGateway(
      gatewayEnv(simulators[0]!.port, { PAIA_CONFIG: configFile, PAIA_HTTP_MAX_CONNECTIONS_PER_ADDRESS: 'null' }),
    );
    let isolation: Row;
    try {
      await untilReady(gateway);
      isolation = isolationRow(
        await measureIsolation(settings, gateway, ids, simulators[measured - 1]!, library),
        ids,
        count,
      );
    } finally {
      await gateway.stop();
    }
    return [...rows(settings, rounds, { count, measured, simulatorsS, simulatorRss, loadAtStart }), isolation];
  } finally {
    await Promise.all(started.map((entry) => (entry instanceof Error ? undefined : entry.stop())));
    rmSync(dir, { recursive: true, force: true });
    library.remove();
  }
}

function rows(
  settings: Settings,
  rounds: readonly Round[],
  run: { count: number; measured: number; simulatorsS: number; simulatorRss: number; loadAtStart: number },
): Row[] {
  const failures = rounds.reduce((sum, r) => sum + r.many.result.failures + r.single.result.failures, 0);
  // A request whose 63 was shared with another's would cost less than a translated one, as in B1.
  const translated = rounds.every((r) =>
    [r.many, r.single].every(
      (m) => m.result.completed > 0 && (m.translated?.sent ?? 0) >= (m.translated?.answers ?? 1),
    ),
  );
  const allReady = rounds.every((r) => r.readyLibraries === run.count);
  const valid = failures === 0 && translated && allReady;
  const readyS = Math.max(...rounds.map((r) => r.readyS));
  const rss = Math.max(...rounds.map((r) => r.rest.rss));
  const manyUs = median(rounds.map((r) => r.many.us));
  const singleUs = median(rounds.map((r) => r.single.us));
  const ratio = manyUs / singleUs;
  const id = libraryId(run.measured);
  const seconds = (values: number[]) => values.map((value) => `${value.toFixed(2)} s`).join(', ');
  const invalid = valid
    ? []
    : [
        `INVALID: ${failures} non-200 answers; ${allReady ? 'every library ready' : `ready libraries per round ${rounds.map((r) => r.readyLibraries).join(', ')} of ${run.count}`}${translated ? '' : '; fewer SIP2 63s than answers (requests shared a round trip) or no answers'}`,
      ];
  const setup = `one compiled gateway with ${run.count} libraries (DE-001 … ${libraryId(run.count - 1)}, a configuration file), each sip2.pool min=max=${POOL} against its own simulator process (${run.count} simulators, started ${SIMULATOR_STARTS} at a time in ${run.simulatorsS.toFixed(1)} s, together ${mb(run.simulatorRss)} RSS); ${rounds.length} round(s), each a fresh gateway; load average (1 min) at the start of B9 ${run.loadAtStart.toFixed(2)}, at its end ${os.loadavg()[0]!.toFixed(2)}, on ${os.cpus().length} cores`;
  return [
    {
      id: 'B9 start',
      what: `${run.count} libraries, each a pool of ${POOL} to its own simulator: spawn to /readyz 200 (every library ready)`,
      result: `${readyS.toFixed(2)} s`,
      target: `< ${START_TARGET_S} s`,
      met: metOf(readyS < START_TARGET_S, valid),
      notes: [
        `result = the slowest round's time from spawning the gateway to the first /readyz 200 (polled every ${READY_POLL_MS} ms), rounds: ${seconds(rounds.map((r) => r.readyS))}; to its "listening" banner: ${seconds(rounds.map((r) => r.bannerS))}; gateway CPU until ready: ${seconds(rounds.map((r) => r.startCpuS))}`,
        setup,
        ...invalid,
      ],
    },
    {
      id: 'B9 memory',
      what: `VmRSS of the gateway with ${run.count} libraries at rest`,
      result: mb(rss),
      target: `< ${mb(MEMORY_TARGET_BYTES)}`,
      met: metOf(rss < MEMORY_TARGET_BYTES, valid),
      notes: [
        `result = the largest VmRSS of the rounds (/proc/PID/status) ${settings.b9RestMs / 1000} s after every library was ready, before any call: ${rounds.map((r) => mb(r.rest.rss)).join(', ')} (VmHWM then: ${rounds.map((r) => mb(r.rest.hwm)).join(', ')})`,
      ],
    },
    {
      id: 'B9 CPU per call',
      what: `gateway CPU per GET /core/PATRON at one of ${run.count} libraries ÷ on a single-library gateway`,
      result: `${ratio.toFixed(2)} (${manyUs.toFixed(0)} µs ÷ ${singleUs.toFixed(0)} µs)`,
      target: `<= ${CPU_TARGET.toFixed(1)}`,
      met: metOf(ratio <= CPU_TARGET, valid),
      notes: [
        `result = median gateway CPU (/proc utime+stime) per answer at library ${id} of the ${run.count} (${rounds.map((r) => r.many.us.toFixed(0)).join(', ')} µs) ÷ median on a fresh single-library gateway with the same pool over the same simulator, measured beside it in each round, alternately after and before it (${rounds.map((r) => r.single.us.toFixed(0)).join(', ')} µs); B1's closed loop (${settings.b1Connections} connections, one patron each, ${settings.b1GatewayWarmupMs / 1000} s warm-up + ${settings.b1WindowMs / 1000} s window), the other libraries idle`,
        `noise: fresh gateways of one kind differ by ${spread(rounds.map((r) => r.many.us))} (${run.count} libraries) and ${spread(rounds.map((r) => r.single.us))} (single) of their median here (B1's spread between fresh processes is the yardstick for what this bench can tell apart); per round: ${rounds.map((r) => (r.many.us / r.single.us).toFixed(2)).join(', ')}`,
        ...rounds.flatMap((r, i) => [
          describe(i, `${run.count} libraries, at ${id}`, r.many),
          describe(i, 'single library', r.single),
        ]),
        ...invalid,
      ],
    },
  ];
}
