import { createServer, type Server, type Socket } from 'node:net';
import pino, { type Logger } from 'pino';
import { type Charset, loadDialect } from '../../src/sip2/index.js';
import { ConformanceTally } from './conformance/tally.js';
import { type ControlledSimulator, type ControlServer, startControlServer } from './control.js';
import { Counters } from './counters.js';
import { DEFAULT_DATA_FILE, loadLibraryData } from './data.js';
import { Faults } from './faults.js';
import { Library } from './library.js';
import { defaultProfile, describeProfile, type Profile } from './profiles.js';
import { Session, type SessionConfig } from './session.js';
import { TrafficRecorder } from './traffic.js';

export interface SimulatorOptions {
  /** SIP2 listen address; default 127.0.0.1. */
  host?: string;
  /** SIP2 port; default 6001; 0 = ephemeral. */
  port?: number;
  /** A built-in dialect name (BUILTIN_DIALECTS: the files of config/dialects/) or a dialect file; default generic. */
  dialect?: string;
  /** Data file; default the demo data. */
  dataFile?: string;
  /** Wire charset; default the dialect's. */
  charset?: Charset;
  /** Initial latency and jitter faults. */
  latencyMs?: number;
  jitterMs?: number;
  /** Close connections without a message for this long; default 300; 0 = never. */
  idleTimeoutS?: number;
  /** AY/AZ on; default true. */
  errorDetection?: boolean;
  /** With error detection on, refuse (96) requests without AY/AZ; default false (they are answered, as real ACSs do). */
  strictChecksums?: boolean;
  /** Answer 96 to a message that breaks a conformance rule (conformance/rules.ts); default false (answered, and reported). */
  strictConformance?: boolean;
  /** Server profile (profiles.ts, parseProfile); default none. */
  profile?: Profile;
  /** Control endpoint port on 127.0.0.1 (0 = ephemeral); no control endpoint when undefined. */
  controlPort?: number;
  /** Control endpoint address: only 127.0.0.1 is accepted. */
  controlHost?: string;
  /** A logger to use (the gateway passes its own); otherwise pino on stderr at logLevel. */
  logger?: Logger;
  logLevel?: string;
  /** The clock (tests). */
  now?: () => Date;
}

/** A running simulator: what the control endpoint uses, its library, and stop(). */
export interface RunningSimulator extends ControlledSimulator {
  readonly controlPort?: number;
  readonly library: Library;
  readonly traffic: TrafficRecorder;
  stop(): Promise<void>;
}

export const DEFAULT_PORT = 6001;
export const DEFAULT_IDLE_TIMEOUT_S = 300;

/** Starts the SIP2 server (and the control endpoint when controlPort is given). */
export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const host = options.host ?? '127.0.0.1';
  const controlHost = options.controlHost ?? '127.0.0.1';
  if (options.controlPort !== undefined && controlHost !== '127.0.0.1') {
    throw new Error(`the control endpoint binds to 127.0.0.1 only (asked for ${controlHost})`);
  }
  if (options.strictChecksums && options.errorDetection === false) {
    throw new Error('strictChecksums needs error detection on');
  }
  const logger =
    options.logger ??
    pino({ name: 'sip2-simulator', level: options.logLevel ?? 'info' }, pino.destination({ dest: 2, sync: true }));
  const dialect = loadDialect(options.dialect ?? 'generic');
  const dataFile = options.dataFile ?? DEFAULT_DATA_FILE;
  const library = new Library(loadLibraryData(dataFile), options.now ? { now: options.now } : {});
  const flagIdleTimeoutS = options.idleTimeoutS ?? DEFAULT_IDLE_TIMEOUT_S;
  const idleMsFor = (profile: Profile) => Math.round((profile.idleTimeoutS ?? flagIdleTimeoutS) * 1000);
  // Mutable here only: a profile switch changes the idle time-out and the profile every session reads.
  const config: { -readonly [K in keyof SessionConfig]: SessionConfig[K] } & { profile: Profile } = {
    dialect,
    charset: options.charset ?? dialect.charset,
    errorDetection: options.errorDetection ?? true,
    strictChecksums: options.strictChecksums ?? false,
    idleTimeoutMs: idleMsFor(options.profile ?? defaultProfile()),
    profile: options.profile ?? defaultProfile(),
    strictConformance: options.strictConformance ?? false,
  };
  const faults = new Faults({ latencyMs: options.latencyMs ?? 0, jitterMs: options.jitterMs ?? 0 });
  const counters = new Counters();
  const conformance = new ConformanceTally(logger);
  const traffic = new TrafficRecorder();
  const sessions = new Set<Session>();
  /**
   * Connections accepted while every worker is busy (workers profile). They
   * are paused from the start (pauseOnConnect), so nothing they send is read
   * or answered until a worker takes them, as with a pre-forking server
   * whose connection waits in the kernel's accept queue.
   */
  const waiting: Socket[] = [];

  const serve = (socket: Socket) => {
    const session = new Session(socket, { config, library, faults, counters, logger, conformance, traffic }, (s) => {
      sessions.delete(s);
      serveWaiting();
    });
    sessions.add(session);
    socket.resume();
  };
  const hasFreeWorker = () => config.profile.workers === null || sessions.size < config.profile.workers;
  /** Hands waiting connections to free workers, oldest first. One whose client already closed reads EOF and ends at once. */
  const serveWaiting = () => {
    while (waiting.length > 0 && hasFreeWorker() && !stopped) {
      const socket = waiting.shift()!;
      socket.removeAllListeners('close');
      if (socket.destroyed) continue;
      serve(socket);
    }
  };
  const onConnection = (socket: Socket) => {
    if (waiting.length === 0 && hasFreeWorker()) return serve(socket);
    logger.info(
      { waiting: waiting.length + 1, workers: config.profile.workers },
      'no free worker: connection waits unread',
    );
    socket.on('error', () => {});
    socket.once('close', () => {
      const at = waiting.indexOf(socket);
      if (at !== -1) waiting.splice(at, 1);
    });
    waiting.push(socket);
  };

  // A refused port is a closed listener: each listening period gets its own net.Server,
  // while open connections (owned by their sessions) live on.
  let listener: Server | null = null;
  let port = options.port ?? DEFAULT_PORT;
  const listen = async (): Promise<void> => {
    const server = createServer({ pauseOnConnect: true }, onConnection);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (error) => logger.error({ err: error }, 'listener error'));
    const address = server.address();
    if (address && typeof address === 'object') port = address.port;
    listener = server;
  };
  const unlisten = async (): Promise<void> => {
    const server = listener;
    listener = null;
    if (!server) return;
    // close() stops accepting at once; its callback waits for the connections, so do not wait for it.
    server.close();
    await new Promise((resolve) => setImmediate(resolve));
  };
  // Listener changes are serialized so rapid on/off toggles end in the requested state.
  let listenerChange: Promise<void> = Promise.resolve();
  const syncListener = (): Promise<void> => {
    listenerChange = listenerChange
      .catch(() => {})
      .then(async () => {
        const refuse = faults.state.refuseConnections;
        if (refuse && listener) {
          await unlisten();
          logger.info('fault: refusing connections (listener closed)');
        } else if (!refuse && !listener && !stopped) {
          await listen();
          logger.info({ port }, 'listening again');
        }
      });
    return listenerChange;
  };

  let stopped = false;
  await listen();
  logger.info(
    {
      host,
      port,
      dialect: dialect.name,
      charset: config.charset,
      errorDetection: config.errorDetection,
      strictChecksums: config.strictChecksums,
      strictConformance: config.strictConformance,
      profile: describeProfile(config.profile) || 'none',
    },
    'SIP2 listener up',
  );

  const disconnectAll = (): number => {
    const count = sessions.size + waiting.length;
    for (const socket of waiting.splice(0)) socket.destroy();
    for (const session of [...sessions]) session.destroy('disconnect requested');
    return count;
  };

  const simulator: RunningSimulator & { controlPort?: number } = {
    host,
    get port() {
      return port;
    },
    library,
    faults,
    counters,
    conformance,
    traffic,
    dialect,
    config,
    connectionCount: () => sessions.size,
    waitingCount: () => waiting.length,
    profile: () => ({ ...config.profile }),
    setProfile(profile) {
      config.profile = { ...profile };
      config.idleTimeoutMs = idleMsFor(profile);
      logger.info({ profile: describeProfile(profile) || 'none' }, 'profile changed');
      serveWaiting();
      return { ...config.profile };
    },
    async setFaults(patch) {
      const state = faults.apply(patch);
      logger.info({ faults: state }, 'faults changed');
      await syncListener();
      return faults.state;
    },
    async clearFaults() {
      faults.clear();
      logger.info('faults cleared');
      await syncListener();
      return faults.state;
    },
    async reset() {
      library.reload(loadLibraryData(dataFile));
      counters.reset();
      faults.clear();
      await syncListener();
      logger.info('data reloaded, counters and faults cleared');
    },
    setStrictConformance(on) {
      config.strictConformance = on;
      logger.info({ strictConformance: on }, 'conformance mode changed');
    },
    disconnectAll,
    async stop() {
      if (stopped) return;
      stopped = true;
      await listenerChange.catch(() => {});
      await unlisten();
      disconnectAll();
      await control?.close();
      logger.info('stopped');
      logger.flush?.();
    },
  };

  let control: ControlServer | undefined;
  if (options.controlPort !== undefined) {
    try {
      control = await startControlServer(simulator, { host: controlHost, port: options.controlPort, logger });
    } catch (error) {
      await simulator.stop();
      throw error;
    }
    simulator.controlPort = control.port;
  }
  return simulator;
}
