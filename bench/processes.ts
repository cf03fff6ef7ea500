import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withoutSettings } from '../src/config/load.js';
import { GATEWAY_NODE_FLAGS } from '../src/node-flags.js';
import { freePort } from '../test/helpers/free-port.js';
import { simulatorIls } from '../test/helpers/simulator.js';

/**
 * The processes a benchmark runs against: the SIP2 simulator, the gateway and
 * the hello-world server, each a separate node child on 127.0.0.1 with an
 * ephemeral port: the gateway and the simulator compiled (dist/), the
 * hello-world through `node --import tsx` (one process per child: the tsx
 * binary would fork a grandchild that a signal might miss).
 *
 * A child's stdout and stderr go to a file in a temporary directory (the
 * gateway logs one pino JSON line per request on stdout at `info`, as in
 * production, and a file costs the bench process nothing to drain). The
 * banner with the port is read from that file. The directory is removed at
 * exit.
 *
 * Every child is tracked: stop() sends SIGTERM, then SIGKILL after a bound;
 * at exit, on SIGINT/SIGTERM and on a crash of the bench every child still
 * running is killed, so no process outlives the bench.
 */

const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;
const KILL_TIMEOUT_MS = 2_000;

const children = new Set<ChildProcess>();
let logDir: string | null = null;
let cleanupInstalled = false;

function logDirectory(): string {
  logDir ??= mkdtempSync(join(tmpdir(), 'paia-bench-'));
  return logDir;
}

/** Kills every child still running with SIGKILL (synchronous: safe in an 'exit' handler) and removes the log directory. */
function killAllNow(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  children.clear();
  if (logDir !== null) {
    rmSync(logDir, { recursive: true, force: true });
    logDir = null;
  }
}

/** SIGTERM to every child, SIGKILL for those not gone within the bound. */
export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((child) => stopChild(child)));
  killAllNow();
}

/**
 * Runs a bench command's `main` with the command line's arguments and exits
 * with its code, or with 1 and the error (prefixed `name:`) if it throws;
 * every child is stopped first either way.
 */
export function runScript(name: string, main: (argv: string[]) => Promise<number>): void {
  main(process.argv.slice(2))
    .then(async (code) => {
      await stopAll();
      process.exit(code);
    })
    .catch(async (error: unknown) => {
      process.stderr.write(`${name}: ${(error as Error).stack ?? String(error)}\n`);
      await stopAll();
      process.exit(1);
    });
}

/**
 * Installs the handlers that keep children from outliving the bench:
 * process exit, SIGINT/SIGTERM (exit 130/143), uncaught errors (exit 1).
 */
export function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.once('exit', killAllNow);
  const onSignal = (signal: NodeJS.Signals, code: number) => {
    process.stderr.write(`\nbench: ${signal}: stopping ${children.size} child process(es)\n`);
    // A second signal kills at once.
    process.once(signal, () => {
      killAllNow();
      process.exit(code);
    });
    void stopAll().finally(() => process.exit(code));
  };
  process.once('SIGINT', () => onSignal('SIGINT', 130));
  process.once('SIGTERM', () => onSignal('SIGTERM', 143));
  const onCrash = (error: unknown) => {
    process.stderr.write(
      `bench: crashed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    void stopAll().finally(() => process.exit(1));
  };
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
}

function exitedPromise(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

function within(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([promise.then(() => true), timeout]).finally(() => clearTimeout(timer));
}

async function stopChild(child: ChildProcess): Promise<void> {
  const exited = exitedPromise(child);
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  if (await within(exited, STOP_TIMEOUT_MS)) return;
  child.kill('SIGKILL');
  if (!(await within(exited, KILL_TIMEOUT_MS)))
    process.stderr.write(`bench: child ${child.pid} did not exit after SIGKILL\n`);
}

export interface Started {
  readonly name: string;
  readonly pid: number;
  /** The banner matches, one per pattern, in order. */
  readonly banners: RegExpExecArray[];
  /** The last part of the child's output (for error messages). */
  tail(): string;
  /** SIGTERM, then SIGKILL after 5 s; resolves once the process is gone. */
  stop(): Promise<void>;
}

function readTail(file: string, chars = 4000): string {
  try {
    const text = readFileSync(file, 'utf8');
    return text.length > chars ? text.slice(-chars) : text;
  } catch {
    return '';
  }
}

/** `node --import tsx SCRIPT ARGS`: how the bench's own TypeScript (the hello-world) is run (one process, no tsx wrapper). */
function tsxCommand(script: string, args: string[]): string[] {
  return [process.execPath, '--import', 'tsx', script, ...args];
}

/**
 * `node dist/SCRIPT ARGS`: the gateway and the simulator run as production
 * runs them, compiled (`npm run build`, which `npm run bench` runs first):
 * through tsx they would carry its loader (about 39 MB of RSS) and its startup.
 */
function compiledCommand(script: string, args: string[], nodeArgs: readonly string[] = []): string[] {
  const path = join(REPO_ROOT, 'dist', script);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run build\` first (npm run bench does)`);
  return [process.execPath, ...nodeArgs, path, ...args];
}

/**
 * Starts `command` with stdout+stderr to a log file and waits (bounded)
 * until every banner pattern matches the output.
 */
async function startChild(
  name: string,
  command: string[],
  env: NodeJS.ProcessEnv,
  banners: RegExp[],
): Promise<Started> {
  installCleanup();
  const file = join(logDirectory(), `${name}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}.log`);
  const fd = openSync(file, 'w');
  let child: ChildProcess;
  try {
    const [file, ...args] = command;
    child = spawn(file!, args, {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', fd, fd],
    });
  } finally {
    closeSync(fd);
  }
  children.add(child);
  child.once('exit', () => children.delete(child));
  const exited = exitedPromise(child);
  let exitedEarly = false;
  void exited.then(() => (exitedEarly = true));
  let spawnError: Error | null = null;
  child.once('error', (error) => (spawnError = error));

  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // not there yet
    }
    const matches = banners.map((pattern) => pattern.exec(text));
    if (matches.every((match) => match !== null)) {
      return {
        name,
        pid: child.pid!,
        banners: matches as RegExpExecArray[],
        tail: () => readTail(file),
        stop: () => stopChild(child),
      };
    }
    const why =
      spawnError !== null
        ? `spawn failed: ${(spawnError as Error).message}`
        : exitedEarly
          ? `exited early (code ${child.exitCode}, signal ${child.signalCode})`
          : Date.now() > deadline
            ? `no banner within ${START_TIMEOUT_MS / 1000} s`
            : null;
    if (why !== null) {
      await stopChild(child);
      throw new Error(
        `${name} did not start: ${why}\n--- command: ${command.join(' ')}\n--- output:\n${readTail(file)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// ------------------------------------------------------------ simulator

export interface SimulatorOptions {
  latencyMs?: number;
  dataFile?: string;
}

export interface Simulator extends Started {
  readonly port: number;
  readonly controlPort: number;
  /** GET /counters: SIP2 requests received per message code since start. */
  counters(): Promise<Record<string, number>>;
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const args = ['--host', '127.0.0.1', '--port', '0', '--control-port', '0', '--log-level', 'warn'];
  if (options.latencyMs !== undefined) args.push('--latency-ms', String(options.latencyMs));
  if (options.dataFile !== undefined) args.push('--data', options.dataFile);
  const started = await startChild(
    `simulator${options.latencyMs ? `-${options.latencyMs}ms` : ''}`,
    compiledCommand('sip2-simulator/src/main.js', args),
    { ...process.env },
    [/^sip2-simulator listening on 127\.0\.0\.1:(\d+)$/m, /^sip2-simulator control on 127\.0\.0\.1:(\d+)$/m],
  );
  const port = Number(started.banners[0]![1]);
  const controlPort = Number(started.banners[1]![1]);
  return {
    ...started,
    port,
    controlPort,
    counters: async () => {
      const response = await fetch(`http://127.0.0.1:${controlPort}/counters`, { signal: AbortSignal.timeout(5000) });
      if (!response.ok) throw new Error(`simulator control GET /counters: ${response.status}`);
      const json = (await response.json()) as { received: Record<string, number> };
      return json.received;
    },
  };
}

/** What one call sent: per message code, after minus before. */
export function counterDelta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const delta: Record<string, number> = {};
  for (const [code, count] of Object.entries(after)) {
    const diff = count - (before[code] ?? 0);
    if (diff !== 0) delta[code] = diff;
  }
  return delta;
}

// ------------------------------------------------------------ gateway

/** Node options for the gateways: those it ships with (src/node-flags.ts), unless `--node-flags` gives others. */
let nodeFlagsForGateway: readonly string[] = GATEWAY_NODE_FLAGS;

export function setGatewayNodeFlags(flags: readonly string[]): void {
  nodeFlagsForGateway = [...flags];
}

export function gatewayNodeFlags(): readonly string[] {
  return nodeFlagsForGateway;
}

/** Client limits lifted for every gateway the bench starts (a load test is not a brute-force attack). */
export const LIFTED_LIMITS: Readonly<Record<string, string>> = {
  PAIA_AUTH_MAX_LOGINS_PER_SECOND: '100000',
  PAIA_AUTH_REQUESTS_PER_MINUTE: '1000000',
  PAIA_AUTH_MAX_SESSIONS_PER_PATRON: '10000',
};

/** The gateway's environment: the bench's without PAIA_* and PORT, the SIP2 target, the lifted limits, then `extra`. */
export function gatewayEnv(sip2Port: number, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...withoutSettings(process.env),
    ...simulatorIls(sip2Port),
    PAIA_SIP2_DIALECT: 'generic',
    PAIA_HTTP_HOST: '127.0.0.1',
    PAIA_HTTP_PORT: '0',
    ...LIFTED_LIMITS,
    // Each benchmark measures translated calls: a patron's repeated reads must reach the ILS. B4 and B8 turn the window on.
    PAIA_CACHE_ACCOUNTS_ENABLED: 'false',
    // Sessions are not kept across restarts: by default they would go to .paia-sip2 in the working directory,
    // and every later bench gateway would start with all the sessions of the earlier ones (B4 counts them).
    PAIA_STATE_DIR: 'off',
    ...extra,
  };
}

export interface Gateway extends Started {
  /** e.g. http://127.0.0.1:41234 */
  readonly url: string;
}

/**
 * nodeArgs: flags for node itself, before the script (bench/profile.ts passes --cpu-prof and --heap-prof),
 * after those of `--node-flags`.
 */
export async function startGateway(env: NodeJS.ProcessEnv, nodeArgs: readonly string[] = []): Promise<Gateway> {
  if (env.PAIA_HTTP_HOST !== '127.0.0.1') throw new Error('the bench gateway listens on 127.0.0.1 only');
  const flags = [...nodeFlagsForGateway, ...nodeArgs];
  const started = await startChild('gateway', compiledCommand('src/cli/main.js', ['serve'], flags), env, [
    /^paia-sip2 listening on (http:\/\/127\.0\.0\.1:\d+)(?:\/\S*)?\s*$/m,
  ]);
  return { ...started, url: started.banners[0]![1]! };
}

// ------------------------------------------------------------ hello-world server

export async function startHello(): Promise<Started & { url: string }> {
  const started = await startChild('hello', tsxCommand('bench/hello-server.ts', []), { ...process.env }, [
    /^hello listening on (http:\/\/127\.0\.0\.1:\d+)\s*$/m,
  ]);
  return { ...started, url: started.banners[0]![1]! };
}

// ------------------------------------------------------------ B1's layers

/**
 * One of B1's layers over the compiled gateway, with a gateway's environment (gatewayEnv):
 * bench/relay-server.mjs in one of its modes, or ('http') bench/http-layer-server.mjs, the gateway itself
 * with an ILS that answers at once.
 */
export async function startLayer(
  layer: 'raw' | 'conn' | 'pool' | 'backend' | 'http',
  env: NodeJS.ProcessEnv,
): Promise<Started & { url: string }> {
  if (env.PAIA_HTTP_HOST !== '127.0.0.1') throw new Error('the bench layers listen on 127.0.0.1 only');
  if (!existsSync(join(REPO_ROOT, 'dist', 'src', 'gateway', 'index.js')))
    throw new Error('dist/ is missing: run `npm run build` first (npm run bench does)');
  const script = layer === 'http' ? ['http-layer-server.mjs'] : ['relay-server.mjs', layer];
  const command = [process.execPath, ...nodeFlagsForGateway, join(REPO_ROOT, 'bench', script[0]!), ...script.slice(1)];
  const started = await startChild(`layer-${layer}`, command, env, [
    /^(?:relay|paia-sip2) listening on (http:\/\/127\.0\.0\.1:\d+)(?:\/\S*)?\s*$/m,
  ]);
  return { ...started, url: started.banners[0]![1]! };
}

// ------------------------------------------------------------ redis

/** redis-server (Debian's package; `.ci/run` installs it) on loopback, without persistence. */
export async function startRedis(): Promise<Started & { url: string }> {
  const port = await freePort();
  const dir = mkdtempSync(join(logDirectory(), 'redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
  const started = await startChild('redis', ['redis-server', ...args], { ...process.env }, [
    /Ready to accept connections/,
  ]);
  return { ...started, url: `redis://127.0.0.1:${port}` };
}

// ------------------------------------------------------------ memory

export interface Memory {
  /** Resident set size now, bytes. */
  rss: number;
  /** Peak resident set size, bytes. */
  hwm: number;
}

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a process has used so far, from /proc/PID/stat (Linux; USER_HZ 100). */
export function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold blanks: fields are counted after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** VmRSS and VmHWM of a process from /proc/PID/status (Linux). */
export function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status);
    if (!match) throw new Error(`no ${name} in /proc/${pid}/status`);
    return Number(match[1]) * 1024;
  };
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}
