import { type ChildProcess, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Charset } from '../../src/sip2/charset.js';
import { type Decoded, decodeFrame, type EncodeOptions, encodeMessage } from '../../src/sip2/codec.js';
import type { DialectName } from '../../src/sip2/dialect.js';
import type { Sip2Message } from '../../src/sip2/spec.js';
import { trackChild } from './children.js';
import { sourceEntry } from './entry-points.js';
import { FrameSocket, openSocket } from './frame-socket.js';

/**
 * Runs the SIP2 simulator as a real separate process (the CLI, exactly as
 * `npm run simulator` does) and drives its control endpoint. Also a raw SIP2
 * socket client for tests that need to see exact bytes.
 *
 * The child is `node .test-build/<run>/sip2-simulator/src/main.js` (the source
 * bundled, test/helpers/entry-points.ts): exactly one process to signal.
 */

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * What a gateway in front of a standalone simulator must be told (with
 * sip2.host set the gateway has no demo values): the demo library's terminal
 * account and institution (sip2-simulator/data/demo.json), and item and
 * edition URIs on the demo's loopback address. Every helper that starts a
 * gateway against a simulator process uses these.
 */
const SIMULATOR_SETTINGS: Readonly<Record<string, string>> = {
  PAIA_SIP2_TERMINAL_USER: 'paia',
  PAIA_SIP2_TERMINAL_PASSWORD: 'paia-secret',
  PAIA_SIP2_TERMINAL_LOCATION: 'MAIN',
  PAIA_SIP2_INSTITUTION: 'DEMO',
  PAIA_PAIA_ITEM_URI: 'http://127.0.0.1:8080/item/{barcode}',
  PAIA_PAIA_EDITION_URI: 'http://127.0.0.1:8080/title/{title}',
};

/** SIMULATOR_SETTINGS with the simulator's address: a gateway's environment for the simulator on 127.0.0.1:`port`. */
export function simulatorIls(port: number): Record<string, string> {
  return { PAIA_SIP2_HOST: '127.0.0.1', PAIA_SIP2_PORT: String(port), ...SIMULATOR_SETTINGS };
}

const BANNER = /^sip2-simulator listening on (\S+):(\d+)$/m;
const CONTROL_BANNER = /^sip2-simulator control on 127\.0\.0\.1:(\d+)$/m;
const START_TIMEOUT_MS = 15_000;

export interface SimulatorProcessOptions {
  /** A built-in dialect (BUILTIN_DIALECTS). */
  dialect?: DialectName;
  errorDetection?: boolean;
  idleTimeoutS?: number;
  latencyMs?: number;
  /** --profile terms (one flag per string), e.g. 'koha,workers=2'. */
  profile?: string | string[];
  /** A data file instead of the demo data. */
  dataFile?: string;
  /** Any further CLI flags. */
  extraArgs?: string[];
  /** SIP2 port; default 0 (ephemeral). */
  port?: number;
  /** Run the compiled simulator (`node dist/sip2-simulator/src/main.js`) from this directory, laid out as the image is. */
  compiledIn?: string;
  /** Run it as `paia-sip2 simulator` (the gateway's command line) instead of `npm run simulator`. */
  asGatewayCommand?: boolean;
}

interface FaultsState {
  latencyMs: number;
  jitterMs: number;
  refuseConnections: boolean;
  dropMidReply: boolean | number;
  hang: boolean | number;
  corruptChecksums: boolean | number;
  garbage: boolean | number;
  rejectMessage: string | null;
  listCount: number | false;
}

interface ProfileState {
  /** The active terms ("" = no profile). */
  profile: string;
  workers: number | null;
  /** In force: the profile's or --idle-timeout-s. */
  idleTimeoutS: number;
  fines: string;
  bv: boolean | null;
  bh: boolean | null;
  pad: boolean;
  scStatusFirst: boolean;
  ids: 'exact' | 'folded';
  counts: 'exact' | 'folio' | 'blank' | 'zero';
  unavailableHolds: 'pending' | 'closed';
  /** The 98's BX; null: every message supported. */
  bx: string | null;
}

export interface CountersState {
  received: Record<string, number>;
  executed: Record<string, number>;
}

interface SimulatorState {
  dialect: string;
  charset: string;
  errorDetection: boolean;
  strictChecksums: boolean;
  connections: number;
  /** Connections accepted but waiting for a worker. */
  waiting: number;
  profile: ProfileState;
  faults: FaultsState;
  counters: CountersState;
}

export interface SimulatorProcess {
  readonly host: string;
  readonly port: number;
  readonly controlPort: number;
  /** Everything the child wrote to stderr so far (its log). */
  readonly stderr: string;
  setFaults(partial: Partial<FaultsState>): Promise<FaultsState>;
  /** PUT /profile: replaces the profile ('' = none); rejects on a 400. */
  setProfile(terms: string): Promise<ProfileState>;
  clearFaults(): Promise<FaultsState>;
  reset(): Promise<void>;
  counters(): Promise<CountersState>;
  state(): Promise<SimulatorState>;
  disconnectAll(): Promise<number>;
  /** POST /desk/holds: a hold placed at the circulation desk, not over SIP2; rejects when the library refuses it. */
  deskHold(
    patron: string,
    target: { item: string } | { title: string },
  ): Promise<{ hold: string; queuePosition: number }>;
  /** Signals the process and waits until it has exited. */
  kill(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Starts the simulator again with the same options on the same SIP2 and control ports. */
  restart(): Promise<void>;
  /** kill('SIGTERM') unless already gone. */
  stop(): Promise<void>;
}

interface Spawned {
  child: ChildProcess;
  host: string;
  port: number;
  controlPort: number;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function argsFor(options: SimulatorProcessOptions, port: number, controlPort: number): string[] {
  const [source, compiled, command] = options.asGatewayCommand
    ? (['src/cli/main.ts', 'dist/src/cli/main.js', ['simulator']] as const)
    : (['sip2-simulator/src/main.ts', 'dist/sip2-simulator/src/main.js', []] as const);
  const args = [
    ...(options.compiledIn === undefined ? sourceEntry(source) : [compiled]),
    ...command,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--control-port',
    String(controlPort),
  ];
  if (options.dialect) args.push('--dialect', options.dialect);
  if (options.errorDetection !== undefined) args.push('--error-detection', options.errorDetection ? 'on' : 'off');
  if (options.idleTimeoutS !== undefined) args.push('--idle-timeout-s', String(options.idleTimeoutS));
  if (options.latencyMs !== undefined) args.push('--latency-ms', String(options.latencyMs));
  for (const terms of typeof options.profile === 'string' ? [options.profile] : (options.profile ?? []))
    args.push('--profile', terms);
  if (options.dataFile !== undefined) args.push('--data', options.dataFile);
  args.push(...(options.extraArgs ?? []));
  return args;
}

async function spawnSimulator(args: string[], cwd = REPO_ROOT): Promise<Spawned> {
  const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  trackChild(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    stderr += chunk;
    if (stderr.length > 200_000) stderr = stderr.slice(-100_000);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
    });
  });
  return new Promise<Spawned>((resolve, reject) => {
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(
        new Error(
          `sip2-simulator did not start: ${why}\n--- command: node ${args.join(' ')}\n--- stdout:\n${stdout}\n--- stderr:\n${stderr}`,
        ),
      );
    };
    const timer = setTimeout(() => fail(`no banner within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
    child.once('error', (error) => fail(error.message));
    void exited.then(({ code, signal }) => fail(`exited early (code ${code}, signal ${signal})`));
    child.stdout!.on('data', (chunk: string) => {
      stdout += chunk;
      const banner = BANNER.exec(stdout);
      const control = CONTROL_BANNER.exec(stdout);
      if (banner && control && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve({
          child,
          host: banner[1]!,
          port: Number(banner[2]),
          controlPort: Number(control[1]),
          stderr: () => stderr,
          exited,
        });
      }
    });
  });
}

/** A control call that takes longer is a hung simulator: the test fails with that, not with its own timeout. */
const CONTROL_TIMEOUT_MS = 10_000;

/** Starts the simulator CLI on 127.0.0.1 with a control endpoint; resolves once both banners are out. */
export async function startSimulatorProcess(options: SimulatorProcessOptions = {}): Promise<SimulatorProcess> {
  let current = await spawnSimulator(argsFor(options, options.port ?? 0, 0), options.compiledIn);
  let running = true;
  const watch = (spawned: Spawned) =>
    void spawned.exited.then(() => {
      if (spawned === current) running = false;
    });
  watch(current);

  const control = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`http://127.0.0.1:${current.controlPort}${path}`, {
      method,
      signal: AbortSignal.timeout(CONTROL_TIMEOUT_MS),
      ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
    });
    const json = (await response.json()) as T & { error?: string };
    if (!response.ok) throw new Error(`control ${method} ${path}: ${response.status} ${json.error ?? ''}`);
    return json;
  };

  const kill = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (!running) return current.exited;
    current.child.kill(signal);
    const result = await current.exited;
    running = false;
    return result;
  };

  return {
    get host() {
      return current.host;
    },
    get port() {
      return current.port;
    },
    get controlPort() {
      return current.controlPort;
    },
    get stderr() {
      return current.stderr();
    },
    setFaults: (partial) => control<FaultsState>('PUT', '/faults', partial),
    setProfile: (terms) => control<ProfileState>('PUT', '/profile', { profile: terms }),
    clearFaults: () => control<FaultsState>('DELETE', '/faults'),
    reset: async () => {
      await control('POST', '/reset');
    },
    counters: () => control<CountersState>('GET', '/counters'),
    state: () => control<SimulatorState>('GET', '/state'),
    disconnectAll: async () => (await control<{ disconnected: number }>('POST', '/disconnect')).disconnected,
    deskHold: (patron, target) => control('POST', '/desk/holds', { patron, ...target }),
    kill,
    restart: async () => {
      await kill('SIGTERM');
      current = await spawnSimulator(argsFor(options, current.port, current.controlPort), options.compiledIn);
      running = true;
      watch(current);
    },
    stop: async () => {
      await kill('SIGTERM');
    },
  };
}

// ------------------------------------------------------------ a raw SIP2 client for tests

/**
 * A bare socket speaking SIP2 through the project's codec, without any of the
 * client's retry logic: tests see exactly what the simulator sends.
 */
export class RawSip2Client extends FrameSocket {
  private sequence = 0;

  private constructor(
    socket: Socket,
    readonly wire: { charset: Charset; errorDetection: boolean },
  ) {
    super(socket);
  }

  static async connect(
    port: number,
    wire: { charset?: Charset; errorDetection?: boolean } = {},
    host = '127.0.0.1',
  ): Promise<RawSip2Client> {
    return new RawSip2Client(await openSocket(port, host), {
      charset: wire.charset ?? 'cp850',
      errorDetection: wire.errorDetection ?? true,
    });
  }

  /** Encodes a message (next AY, 0-9 wrapping, unless given) and writes it; returns the bytes sent. */
  send(message: Sip2Message, options: Partial<EncodeOptions> = {}): Buffer {
    const sequence = options.sequence ?? this.sequence;
    this.sequence = (sequence + 1) % 10;
    const bytes = encodeMessage(message, { ...this.wire, sequence, ...options });
    this.socket.write(bytes);
    return bytes;
  }

  /** The next frame, decoded with this client's wire options. */
  async next(timeoutMs = 5000): Promise<Decoded & { raw: Buffer }> {
    const { raw, frame } = await this.nextFrame(timeoutMs);
    return { ...decodeFrame(frame, this.wire), raw };
  }

  /** Sends and returns the decoded answer, which must be a catalogue message. */
  async request<M extends Sip2Message = Sip2Message>(
    message: Sip2Message,
    options: Partial<EncodeOptions> = {},
  ): Promise<M & { raw: Buffer; sequence: number | null }> {
    this.send(message, options);
    const decoded = await this.next();
    if (decoded.kind !== 'message') throw new Error(`unexpected message ${decoded.code}`);
    return Object.assign(decoded.message as M, { raw: decoded.raw, sequence: decoded.sequence });
  }

  /** 93 login with the demo terminal account (or the given one); returns whether 941 came back. */
  async login(user = 'paia', password = 'paia-secret'): Promise<boolean> {
    const response = await this.request({
      code: '93',
      uidAlgorithm: '0',
      pwdAlgorithm: '0',
      loginUserId: user,
      loginPassword: password,
    });
    if (response.code !== '94') throw new Error(`expected 94, got ${response.code}`);
    return response.ok;
  }
}
