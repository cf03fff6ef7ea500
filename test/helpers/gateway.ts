import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withoutSettings } from '../../src/config/load.js';
import { GATEWAY_NODE_FLAGS } from '../../src/node-flags.js';
import type { DialectName } from '../../src/sip2/dialect.js';
import { trackChild } from './children.js';
import { sourceEntry } from './entry-points.js';
import { simulatorIls } from './simulator.js';

/**
 * Runs the real gateway (`src/cli/main.ts serve`) as a separate process against a
 * SIP2 server (normally the simulator started by startSimulatorProcess), on
 * 127.0.0.1 and a free port, and resolves once it prints its listening line.
 *
 * The child is `node .test-build/<run>/src/cli/main.js serve` (the source bundled,
 * test/helpers/entry-points.ts), one process to signal; every child
 * still alive when the test process exits is killed.
 *
 * The environment is the test process's without any PAIA_* or PORT variable
 * (a developer's shell must not change what the tests see), plus the SIP2
 * settings below (the item cache and the account window off, a state.dir of its own), plus `env`.
 */

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The listening line: the base URL, base path included; `url` is without it. */
const LISTENING = /^paia-sip2 listening on (https?:\/\/127\.0\.0\.1:\d+)(?:\/\S*)?\s*$/m;
const START_TIMEOUT_MS = 15_000;
const KEEP_OUTPUT_CHARS = 200_000;

/** A built-in dialect (BUILTIN_DIALECTS). */
export type GatewayDialect = DialectName;

export interface GatewayProcessOptions {
  /** Port of the SIP2 server on 127.0.0.1; null: no sip2.host, the demo simulator runs embedded (as `npm start`). */
  sip2Port: number | null;
  /** sip2.dialect; must match the simulator's (with an embedded simulator: demo.dialect). */
  dialect: GatewayDialect;
  /** Further PAIA_* settings (they win over the defaults set here). */
  env?: Record<string, string>;
  /** Further command-line flags after `serve`, e.g. ['--workers', '2']. */
  args?: string[];
  /**
   * Run the compiled gateway as the container does (`node FLAGS dist/src/cli/main.js
   * serve`, with the heap flags of src/node-flags.ts) from `dir`, a directory laid out as the image is, instead of
   * the source (sourceEntry); under `prefix` if given (a command that ends
   * by exec-ing the rest, so the pid stays the gateway's).
   */
  compiled?: { dir: string; prefix?: string[] };
  /** Run src/cli/main.ts through tsx (`node --import tsx`), as a developer does, rather than the tests' build. */
  throughTsx?: boolean;
}

export interface GatewayExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface GatewayProcess {
  /** Base URL, e.g. http://127.0.0.1:41234 (https:// with http.tls; no trailing slash, no base path). */
  readonly url: string;
  readonly pid: number;
  /** Its state.dir (PAIA_STATE_DIR): start another gateway with it to restart this one with its sessions. */
  readonly stateDir: string;
  /** Everything the child wrote to stdout so far. */
  stdout(): string;
  /** Everything the child wrote to stderr so far (its log at the configured level). */
  stderr(): string;
  /** Signals the process (default SIGTERM) and resolves once it has exited. */
  kill(signal?: NodeJS.Signals): Promise<GatewayExit>;
  /** kill('SIGTERM') unless already gone; SIGKILL if it has not exited within 5 s. */
  stop(): Promise<void>;
}

/** The folder of this test process's state directories; removed when it exits. */
let stateRoot: string | undefined;

/**
 * A state.dir of its own for each gateway: gateways started in parallel must
 * never share one (the second would keep its sessions in memory only), and
 * the repository's own .paia-sip2 stays the developer's.
 */
function ownStateDir(): string {
  if (stateRoot === undefined) {
    const root = mkdtempSync(join(tmpdir(), 'paia-sip2-gateways-'));
    stateRoot = root;
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
  }
  return mkdtempSync(join(stateRoot, 'state-'));
}

function childEnv(options: GatewayProcessOptions): NodeJS.ProcessEnv {
  const sip2 =
    options.sip2Port === null
      ? { PAIA_DEMO_DIALECT: options.dialect }
      : { ...simulatorIls(options.sip2Port), PAIA_SIP2_DIALECT: options.dialect };
  return {
    ...withoutSettings(process.env),
    ...sip2,
    PAIA_HTTP_HOST: '127.0.0.1',
    PAIA_HTTP_PORT: '0',
    PAIA_LOG_LEVEL: 'warn',
    // Tests count what reaches the ILS and inject faults per message; the item cache and the account window have their own tests.
    PAIA_CACHE_ITEMS_ENABLED: 'false',
    PAIA_CACHE_ACCOUNTS_ENABLED: 'false',
    ...(options.env?.PAIA_STATE_DIR === undefined ? { PAIA_STATE_DIR: ownStateDir() } : {}),
    ...options.env,
  };
}

/** Starts the gateway; rejects (with the child's stdout and stderr) if it does not listen within 15 s. */
export function startGatewayProcess(options: GatewayProcessOptions): Promise<GatewayProcess> {
  const env = childEnv(options);
  if (env.PAIA_HTTP_HOST !== '127.0.0.1') throw new Error('the test gateway listens on 127.0.0.1 only');
  const { compiled } = options;
  const [file, ...args] = compiled
    ? [
        ...(compiled.prefix ?? []),
        process.execPath,
        ...GATEWAY_NODE_FLAGS,
        'dist/src/cli/main.js',
        'serve',
        ...(options.args ?? []),
      ]
    : [process.execPath, ...sourceEntry('src/cli/main.ts', options.throughTsx), 'serve', ...(options.args ?? [])];
  const child = spawn(file!, args, { cwd: compiled?.dir ?? REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  trackChild(child);

  let stdout = '';
  let stderr = '';
  const keep = (text: string) => (text.length > KEEP_OUTPUT_CHARS ? text.slice(-KEEP_OUTPUT_CHARS / 2) : text);
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    stderr = keep(stderr + chunk);
  });

  let running = true;
  const exited = new Promise<GatewayExit>((resolve) => {
    child.once('exit', (code, signal) => {
      running = false;
      resolve({ code, signal });
    });
  });

  const kill = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<GatewayExit> => {
    if (running) child.kill(signal);
    return exited;
  };
  const stop = async (): Promise<void> => {
    if (!running) return;
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const forced = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), 5000)));
    if ((await Promise.race([exited, forced])) === 'timeout') {
      child.kill('SIGKILL');
      await exited;
    }
    clearTimeout(timer);
  };

  return new Promise<GatewayProcess>((resolve, reject) => {
    let settled = false;
    const sip2 =
      options.sip2Port === null
        ? `embedded simulator, dialect ${options.dialect}`
        : `sip2 127.0.0.1:${options.sip2Port}, dialect ${options.dialect}`;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      const overrides = Object.entries(options.env ?? {})
        .map(([name, value]) => `${name}=${value}`)
        .join(' ');
      reject(
        new Error(
          `paia-sip2 gateway did not start (${sip2}): ${why}\n--- command: ${[file, ...args].join(' ')}${overrides ? ` with ${overrides}` : ''}` +
            `\n--- stdout:\n${stdout}\n--- stderr:\n${stderr}`,
        ),
      );
    };
    const timer = setTimeout(() => fail(`no listening line within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
    child.once('error', (error) => fail(error.message));
    void exited.then(({ code, signal }) => fail(`exited early (code ${code}, signal ${signal})`));
    child.stdout!.on('data', (chunk: string) => {
      stdout = keep(stdout + chunk);
      const match = LISTENING.exec(stdout);
      if (match && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve({
          url: match[1]!,
          pid: child.pid!,
          stateDir: env.PAIA_STATE_DIR!,
          stdout: () => stdout,
          stderr: () => stderr,
          kill,
          stop,
        });
      }
    });
  });
}
