import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A Docker engine for the image tests: the one DOCKER_HOST names when it
 * answers, otherwise a private dockerd (Debian's docker.io package) on a
 * socket of its own, with its own data root, exec root and pidfile in a
 * temporary directory, so it touches no other engine on the machine:
 * `--iptables=false` (no firewall rules), `--bridge=none` (no docker0: the
 * containers share the host's network, `--network host`, and listen on
 * 127.0.0.1 only), overlay2. When no engine can be had (no dockerd, not root,
 * no overlay support) start() says why, in words for the skip line; that is
 * the environment, not a failure.
 */

/** How long dockerd may take to answer on its socket. */
const DAEMON_START_TIMEOUT_MS = 30_000;
/** How long a plain docker command (inspect, rm, version) may take. */
const COMMAND_TIMEOUT_MS = 60_000;
const KEEP_OUTPUT_CHARS = 4000;

export interface Engine {
  /** unix:///... or what DOCKER_HOST said. */
  readonly host: string;
  /** Whether the containers must use the host's network (the private daemon has no bridge). */
  readonly hostNetwork: boolean;
  /** Whether this is the private daemon (its images are ours to tag as we like). */
  readonly private: boolean;
  /** Runs `docker ...args` against this engine; rejects with its output when it fails or outlasts timeoutMs. */
  docker(args: string[], options?: { timeoutMs?: number }): Promise<string>;
  /** Runs any program with DOCKER_HOST set to this engine, as docker() does. */
  run(command: string, args: string[], options?: { timeoutMs?: number }): Promise<string>;
  /** Stops the private daemon and removes its directory; nothing for an engine we did not start. */
  close(): Promise<void>;
}

export type EngineOrReason = { engine: Engine } | { unavailable: string };

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { env, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error === null) resolve(stdout.trim());
        else {
          const why = error.killed ? `did not end within ${timeoutMs / 1000} s` : `failed (${error.code})`;
          const output = `${stdout}\n${stderr}`.trim().slice(-KEEP_OUTPUT_CHARS);
          // The code stays: ENOENT (no such program) is the environment's fault, a reason to skip.
          reject(Object.assign(new Error(`${command} ${args.join(' ')} ${why}:\n${output}`), { code: error.code }));
        }
      },
    );
  });
}

/** What the tests need to reach an engine the global setup started (test/image/setup.ts provides it). */
export interface EngineAddress {
  host: string;
  hostNetwork: boolean;
  private: boolean;
}

/** An engine at a known address; close() leaves it running (its owner stops it). */
export function attach(address: EngineAddress): Engine {
  return engineAt(address.host, address, async () => undefined);
}

function engineAt(host: string, options: Omit<EngineAddress, 'host'>, close: () => Promise<void>): Engine {
  const env = { ...process.env, DOCKER_HOST: host };
  return {
    host,
    ...options,
    docker: (args, { timeoutMs = COMMAND_TIMEOUT_MS } = {}) => run('docker', args, env, timeoutMs),
    run: (command, args, { timeoutMs = COMMAND_TIMEOUT_MS } = {}) => run(command, args, env, timeoutMs),
    close,
  };
}

/** Whether `docker version` gets an answer from the engine at host within 10 s. */
async function answers(host: string): Promise<boolean> {
  try {
    await run('docker', ['version', '--format', '{{.Server.Version}}'], { ...process.env, DOCKER_HOST: host }, 10_000);
    return true;
  } catch {
    return false;
  }
}

function onPath(binary: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && existsSync(join(dir, binary)));
}

async function stopDaemon(daemon: ChildProcess, directory: string): Promise<void> {
  if (daemon.exitCode === null && daemon.signalCode === null) {
    const exited = new Promise<void>((resolve) => daemon.once('exit', () => resolve()));
    daemon.kill('SIGTERM');
    const timer = setTimeout(() => daemon.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
  // The data root holds overlay mounts of containers that may outlive a killed daemon: unmount them first.
  await run(
    'sh',
    ['-c', `grep -o " ${directory}[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l`],
    process.env,
    10_000,
  ).catch(() => undefined);
  rmSync(directory, { recursive: true, force: true });
}

/** Starts the private dockerd; the reason it could not, or the engine. */
async function startPrivateDaemon(): Promise<EngineOrReason> {
  if (process.getuid?.() !== 0) return { unavailable: 'dockerd needs root, and the tests do not run as root' };
  if (!onPath('dockerd'))
    return { unavailable: 'no dockerd on the PATH (Debian: apt-get install docker.io; .ci/run installs it)' };
  if (!onPath('docker')) return { unavailable: 'no docker client on the PATH' };
  if (!readFileSync('/proc/filesystems', 'utf8').includes('overlay'))
    return { unavailable: 'the kernel has no overlay file system, which dockerd needs for overlay2' };
  const directory = mkdtempSync(join(tmpdir(), 'paia-image-docker-'));
  const socket = join(directory, 'docker.sock');
  mkdirSync(join(directory, 'data'));
  mkdirSync(join(directory, 'exec'));
  const log = join(directory, 'dockerd.log');
  const daemon = spawn(
    'dockerd',
    [
      '--host',
      `unix://${socket}`,
      '--data-root',
      join(directory, 'data'),
      '--exec-root',
      join(directory, 'exec'),
      '--pidfile',
      join(directory, 'docker.pid'),
      '--iptables=false',
      '--ip6tables=false',
      '--bridge=none',
      '--storage-driver',
      'overlay2',
    ],
    { stdio: ['ignore', openSync(log, 'a'), openSync(log, 'a')], detached: false },
  );
  // The daemon must not outlive the test run, whatever ends it.
  const kill = () => daemon.kill('SIGKILL');
  process.once('exit', kill);
  const host = `unix://${socket}`;
  const deadline = Date.now() + DAEMON_START_TIMEOUT_MS;
  while (Date.now() < deadline && daemon.exitCode === null) {
    if (await answers(host)) {
      const engine = engineAt(host, { hostNetwork: true, private: true }, async () => {
        process.off('exit', kill);
        await stopDaemon(daemon, directory);
      });
      return { engine };
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const output = existsSync(log) ? readFileSync(log, 'utf8').slice(-1500) : '';
  process.off('exit', kill);
  await stopDaemon(daemon, directory);
  return {
    unavailable: `the private dockerd did not answer within ${DAEMON_START_TIMEOUT_MS / 1000} s: ${output.trim().split('\n').slice(-3).join(' | ')}`,
  };
}

/** The engine DOCKER_HOST names if it answers, else a private dockerd; or why neither. */
export async function startEngine(): Promise<EngineOrReason> {
  const given = process.env.DOCKER_HOST;
  if (given !== undefined && given !== '' && (await answers(given))) {
    const env = { ...process.env, DOCKER_HOST: given };
    // An engine without a bridge network (one started as the private one is) can only give the host's.
    const bridge = await run('docker', ['network', 'inspect', 'bridge'], env, COMMAND_TIMEOUT_MS).then(
      () => true,
      () => false,
    );
    return { engine: engineAt(given, { hostNetwork: !bridge, private: false }, async () => undefined) };
  }
  return startPrivateDaemon();
}
