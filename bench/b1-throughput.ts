import { type GeneratedLibrary, generateLibrary } from './data.js';
import { type HttpLoopOptions, httpLoop, httpPool, type LoopResult, mapConcurrent } from './driver.js';
import { login } from './paia.js';
import {
  counterDelta,
  cpuSecondsOf,
  gatewayEnv,
  type Simulator,
  startGateway,
  startHello,
  startLayer,
  startSimulator,
} from './processes.js';
import { counts, metOf, ms, perSecond, type Row } from './report.js';
import type { Settings } from './settings.js';

/**
 * B1: CPU per request of the gateway relative to the raw relay, the floor of
 * any HTTP-to-SIP2 relay on Hono and Node (bench/relay-server.mjs raw: plain
 * sockets, the 63 encoded, the 64's name read by a regular expression).
 * Gateway: GET /core/PATRON, each connection its own patron (generated data),
 * so every request is translated into a SIP2 63 of its own: identical reads
 * in flight at once share one round trip, and 32 connections asking for one
 * patron would mostly share (simulator at 0 ms, pool 4). The raw relay
 * answers the same requests over the same simulator. A bare Hono hello-world
 * (bench/hello-server.ts) is measured beside them, for information. All under
 * the same closed loop (32 connections); CPU seconds of the serving process in
 * the measured window come from /proc, divided by the answers completed in it.
 *
 * A fresh process is measured after a warm-up long enough for V8's JIT to
 * settle (a fresh gateway's CPU per request falls from ~1 ms to ~0.3 ms over
 * its first ~5 s under load; the hello-world settles within 1 s). Each round
 * measures a fresh hello-world, a fresh simulator + gateway and a fresh
 * simulator + process of each layer (the raw relay among them), one at a
 * time; the result is median(gateway µs/request) ÷ median(raw relay µs/request).
 */

/** Gateway CPU per request ÷ the raw relay's (issue 26). */
const TARGET = 2;
const POOL = '4';
/** Loans of each generated patron: GET /core/PATRON reads none of them, the 64 only counts them. */
export const B1_LOANS = 2;

/** CPU seconds used by each process (pid) and by the bench process itself during the measured window. */
class WindowCpu {
  private start = new Map<string, number>();
  readonly used = new Map<string, number>();
  private driverStart = process.cpuUsage();
  constructor(private readonly pids: Record<string, number>) {}
  open = () => {
    for (const [name, pid] of Object.entries(this.pids)) this.start.set(name, cpuSecondsOf(pid));
    this.driverStart = process.cpuUsage();
  };
  close = () => {
    for (const [name, pid] of Object.entries(this.pids))
      this.used.set(name, cpuSecondsOf(pid) - (this.start.get(name) ?? 0));
    const driver = process.cpuUsage(this.driverStart);
    this.used.set('driver', (driver.user + driver.system) / 1e6);
  };
  /** µs of CPU per answer of the named process in the window. */
  perRequestUs(name: string, result: LoopResult): number {
    return ((this.used.get(name) ?? Number.NaN) * 1e6) / Math.max(1, result.completed);
  }
  describe(result: LoopResult): string {
    return [...this.used]
      .map(
        ([name, seconds]) =>
          `${name} ${(seconds / result.durationS).toFixed(2)} cores, ${this.perRequestUs(name, result).toFixed(0)} µs/req`,
      )
      .join('; ');
  }
}

export interface Measured {
  result: LoopResult;
  cpu: WindowCpu;
  /** µs of CPU of the serving process per answer. */
  us: number;
  /** Gateway only: 63s the simulator received during the loop (warm-up included), and the answers of the loop. */
  translated?: { sent: number; answers: number };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** (max − min) ÷ median, as a percentage: how far fresh processes of one kind differ. */
export function spread(values: readonly number[]): string {
  return `${((100 * (Math.max(...values) - Math.min(...values))) / median(values)).toFixed(0)}%`;
}

async function measureHello(settings: Settings): Promise<Measured> {
  const hello = await startHello();
  try {
    const cpu = new WindowCpu({ hello: hello.pid });
    const result = await httpLoop({
      origin: hello.url,
      path: '/',
      connections: settings.b1Connections,
      warmupMs: settings.b1HelloWarmupMs,
      durationMs: settings.b1WindowMs,
      onWindowStart: cpu.open,
      onWindowEnd: cpu.close,
    });
    return { result, cpu, us: cpu.perRequestUs('hello', result) };
  } finally {
    await hello.stop();
  }
}

/**
 * Logs every patron of `library` in; worker w then asks for patron w's GET /core (B1, B9, bench/profile.ts).
 * `base`: the library's path on a gateway with several libraries (B9).
 */
export async function patronPerWorker(
  gatewayUrl: string,
  library: GeneratedLibrary,
  base = '',
): Promise<NonNullable<HttpLoopOptions['requestFor']>> {
  const http = httpPool(gatewayUrl, 8);
  let tokens: Array<string | Error>;
  try {
    tokens = await mapConcurrent(library.patrons, 8, (patron) => login(http, patron.barcode, patron.password, base));
  } finally {
    await http.close();
  }
  const failed = tokens.find((token) => token instanceof Error);
  if (failed !== undefined) throw failed;
  return (worker) => ({
    path: `${base}/core/${library.patrons[worker]!.barcode}`,
    headers: { authorization: `Bearer ${tokens[worker] as string}` },
  });
}

/** A fresh generated library (one patron per connection) and a fresh simulator on it, for `run`; both gone afterwards. */
async function withFreshSimulator<T>(
  settings: Settings,
  run: (library: GeneratedLibrary, simulator: Simulator) => Promise<T>,
): Promise<T> {
  const library = generateLibrary(settings.b1Connections, B1_LOANS);
  try {
    const simulator = await startSimulator({ dataFile: library.file });
    try {
      return await run(library, simulator);
    } finally {
      await simulator.stop();
    }
  } finally {
    library.remove();
  }
}

/** B1's load on a gateway or layer relay: its warm-up, then the measured window, the CPU of `cpu`'s processes in it. */
function serverLoop(
  settings: Settings,
  origin: string,
  requestFor: NonNullable<HttpLoopOptions['requestFor']>,
  cpu: WindowCpu,
): Promise<LoopResult> {
  return httpLoop({
    origin,
    path: '/core/',
    requestFor,
    connections: settings.b1Connections,
    warmupMs: settings.b1GatewayWarmupMs,
    durationMs: settings.b1WindowMs,
    onWindowStart: cpu.open,
    onWindowEnd: cpu.close,
  });
}

/** The pool size of every B1 gateway and layer relay. */
function poolEnv(simulator: Simulator): NodeJS.ProcessEnv {
  return gatewayEnv(simulator.port, { PAIA_SIP2_POOL_MIN: POOL, PAIA_SIP2_POOL_MAX: POOL });
}

/**
 * B1's load on a running gateway over `simulator`, whose data is `library`: the patrons log in, then the
 * warm-up and the measured window; CPU per answer of the gateway, and the 63s the simulator received.
 * `base`: the library's path on a gateway with several libraries (B9).
 */
export async function measureTranslated(
  settings: Settings,
  gateway: { url: string; pid: number },
  simulator: Simulator,
  library: GeneratedLibrary,
  base = '',
): Promise<Measured> {
  const requestFor = await patronPerWorker(gateway.url, library, base);
  const cpu = new WindowCpu({ gateway: gateway.pid, simulator: simulator.pid });
  const before = await simulator.counters();
  const result = await serverLoop(settings, gateway.url, requestFor, cpu);
  const sent = counterDelta(before, await simulator.counters())['63'] ?? 0;
  const answers = Object.values(result.outcomes).reduce((sum, n) => sum + n, 0);
  return { result, cpu, us: cpu.perRequestUs('gateway', result), translated: { sent, answers } };
}

function measureGateway(settings: Settings): Promise<Measured> {
  return withFreshSimulator(settings, async (library, simulator) => {
    const gateway = await startGateway(poolEnv(simulator));
    try {
      return await measureTranslated(settings, gateway, simulator, library);
    } finally {
      await gateway.stop();
    }
  });
}

/**
 * B1's gateway taken apart: the SIP2 path layer by layer without the HTTP layer above it
 * (bench/relay-server.mjs), then the HTTP layer without the SIP2 path below it (bench/http-layer-server.mjs).
 */
const LAYERS = [
  ['raw', 'a raw relay (Hono, plain sockets, the 63 encoded, the 64 read by a regular expression)'],
  ['conn', 'a relay over Sip2Connection (+ the connection and the codec, no pool)'],
  ['pool', "+ the gateway's Sip2Pool"],
  ['backend', '+ Sip2Backend.patron() (shared reads, the PatronRecord)'],
  ['http', 'the HTTP layer alone (the whole gateway, its patron() answering at once)'],
] as const;

/**
 * CPU per request of one layer (fresh simulator and layer process, the gateway's warm-up and window):
 * what each part costs, and the floor of any relay on Hono.
 */
function measureLayer(settings: Settings, layer: (typeof LAYERS)[number][0]): Promise<Measured> {
  return withFreshSimulator(settings, async (library, simulator) => {
    const server = await startLayer(layer, poolEnv(simulator));
    try {
      const cpu = new WindowCpu({ [layer]: server.pid });
      // The HTTP layer checks tokens as the gateway does; the relays take the barcode alone.
      const requestFor =
        layer === 'http'
          ? await patronPerWorker(server.url, library)
          : (worker: number) => ({ path: `/core/${library.patrons[worker]!.barcode}` });
      const result = await serverLoop(settings, server.url, requestFor, cpu);
      return { result, cpu, us: cpu.perRequestUs(layer, result) };
    } finally {
      await server.stop();
    }
  });
}

/**
 * What the target leaves, from the layers' medians: the raw relay is the floor, and the gateway may cost
 * TARGET times it; the rest of the gateway (connection, codec, pool, backend, and the HTTP layer beyond the
 * one hello-world's worth of HTTP serving the raw relay already includes) must fit in what is left above it.
 */
function budget(rawUs: number, httpUs: number, helloUs: number): string {
  return `what the target leaves: ${TARGET} × raw relay = ${(TARGET * rawUs).toFixed(0)} µs per request, ${((TARGET - 1) * rawUs).toFixed(0)} µs above the raw relay for the connection, codec, pool and backend and for the HTTP layer, which alone costs ${(httpUs - helloUs).toFixed(0)} µs above the hello-world (${httpUs.toFixed(0)} − ${helloUs.toFixed(1)})`;
}

export function describe(round: number, kind: string, m: Measured): string {
  const r = m.result;
  return `${kind} #${round + 1}: ${m.us.toFixed(0)} µs/req, ${perSecond(r.requestsPerSecond)} (p50 ${ms(r.p50)}, p99 ${ms(r.p99)}); CPU ${m.cpu.describe(r)}; statuses ${counts(r.outcomes)}`;
}

export async function runB1(settings: Settings): Promise<Row[]> {
  const hellos: Measured[] = [];
  const gateways: Measured[] = [];
  // Where the gateway's CPU per request goes, layer by layer (notes only): one fresh process of each per round,
  // as noisy as the gateway itself, so their medians are compared.
  const layers = new Map<(typeof LAYERS)[number][0], Measured[]>(LAYERS.map(([mode]) => [mode, []]));
  for (let round = 0; round < settings.b1Rounds; round++) {
    hellos.push(await measureHello(settings));
    gateways.push(await measureGateway(settings));
    for (const [mode] of LAYERS) layers.get(mode)!.push(await measureLayer(settings, mode));
  }
  const gatewayUs = median(gateways.map((m) => m.us));
  const helloUs = median(hellos.map((m) => m.us));
  const raws = layers.get('raw')!;
  const rawUs = median(raws.map((m) => m.us));
  const httpUs = median(layers.get('http')!.map((m) => m.us));
  const ratio = gatewayUs / rawUs;
  const helloRatio = gatewayUs / helloUs;
  const failures = (list: Measured[]) => list.reduce((sum, m) => sum + m.result.failures, 0);
  // A request whose 63 was shared with another's would cost less than a translated one: B1 counts only the latter.
  const allTranslated = gateways.every((m) => (m.translated?.sent ?? 0) >= (m.translated?.answers ?? 1));
  const valid =
    failures(gateways) === 0 &&
    failures(raws) === 0 &&
    failures(hellos) === 0 &&
    gateways.every((m) => m.result.completed > 0) &&
    raws.every((m) => m.result.completed > 0) &&
    allTranslated;
  const notes = [
    `result = median gateway CPU per GET /core/PATRON ÷ median raw relay CPU per GET /core/PATRON (the floor of any HTTP-to-SIP2 relay on Hono and Node), µs of the serving process (/proc utime+stime) per answer in its window: ${gatewayUs.toFixed(0)} ÷ ${rawUs.toFixed(0)}; for information, ÷ median hello-world CPU per GET /: ${gatewayUs.toFixed(0)} ÷ ${helloUs.toFixed(1)} = ${helloRatio.toFixed(1)}`,
    `per fresh process: gateway ${gateways.map((m) => m.us.toFixed(0)).join(', ')} µs/req (spread ${spread(gateways.map((m) => m.us))} of the median); raw relay ${raws.map((m) => m.us.toFixed(0)).join(', ')} µs/req (spread ${spread(raws.map((m) => m.us))}); hello ${hellos.map((m) => m.us.toFixed(1)).join(', ')} µs/req (spread ${spread(hellos.map((m) => m.us))})`,
    `every request translated: ${gateways
      .map((m) => `${m.translated?.sent ?? 0} SIP2 63s for ${m.translated?.answers ?? 0} answers`)
      .join(
        ', ',
      )} (each of the ${settings.b1Connections} connections asks for its own patron, so no two identical reads are ever in flight at once)`,
    `throughput (median): gateway ${perSecond(median(gateways.map((m) => m.result.requestsPerSecond)))}, raw relay ${perSecond(median(raws.map((m) => m.result.requestsPerSecond)))}, hello-world ${perSecond(median(hellos.map((m) => m.result.requestsPerSecond)))}`,
    `layers (median of a fresh process each per round, same load): ${LAYERS.map(([mode, what]) => {
      const runs = layers.get(mode)!;
      const us = median(runs.map((m) => m.us));
      const failed = failures(runs);
      return `${what}: ${us.toFixed(0)} µs/req (${(us / rawUs).toFixed(2)} × raw, ${(us / helloUs).toFixed(1)} × hello; ${runs.map((m) => m.us.toFixed(0)).join(', ')}${failed > 0 ? `; ${failed} failed answers` : ''})`;
    }).join(
      '; ',
    )}; the whole gateway: ${gatewayUs.toFixed(0)} µs/req (${ratio.toFixed(2)} × raw, ${helloRatio.toFixed(1)} × hello)`,
    budget(rawUs, httpUs, helloUs),
    ...gateways.map((m, i) => describe(i, 'gateway', m)),
    ...raws.map((m, i) => describe(i, 'raw relay', m)),
    ...hellos.map((m, i) => describe(i, 'hello', m)),
    `driver: ${settings.b1Connections} connections; ${settings.b1Rounds} rounds, each a fresh hello-world (${settings.b1HelloWarmupMs / 1000} s warm-up + ${settings.b1WindowMs / 1000} s) then a fresh simulator + gateway (${settings.b1GatewayWarmupMs / 1000} s warm-up + ${settings.b1WindowMs / 1000} s), then each of the ${LAYERS.length} layers (the raw relay first) the same way; gateway pool min=max=${POOL}, simulator 0 ms`,
  ];
  if (!valid) {
    notes.push(
      `INVALID: ${failures(gateways)} non-200 gateway answers, ${failures(raws)} non-200 raw relay answers, ${failures(hellos)} non-200 hello answers${allTranslated ? '' : '; fewer SIP2 63s than answers (requests shared a round trip)'}`,
    );
  }
  return [
    {
      id: 'B1',
      what: 'CPU per translated GET /core/PATRON ÷ raw relay CPU per request (× hello-world for information)',
      result: `${ratio.toFixed(2)} (${gatewayUs.toFixed(0)} µs ÷ ${rawUs.toFixed(0)} µs); × hello ${helloRatio.toFixed(1)}`,
      target: `<= ${TARGET}`,
      met: metOf(ratio <= TARGET, valid),
      notes,
    },
  ];
}
