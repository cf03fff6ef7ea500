import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectTls } from 'node:tls';
import { Redis } from 'ioredis';
import { GenericContainer, getContainerRuntimeClient, type StartedTestContainer, Wait } from 'testcontainers';
import { trackChild } from './children.js';
import { freePort } from './free-port.js';

/**
 * A real Redis for the shared-state tests, in one of two forms behind one
 * interface:
 *
 * - startRedisServer(): the `redis-server` binary (Debian's redis-server
 *   package; .ci/run installs it) as a child process on 127.0.0.1 and a free
 *   port, in a temporary directory, with no persistence, killed when the test
 *   process exits. Always available where the tests run.
 * - startRedisContainer(): a `redis:7` container through testcontainers, for
 *   machines with a Docker engine (a developer's); dockerUnavailable() says
 *   why not, so the tests that use it are skipped with a reason.
 *
 * Neither keeps data across restart(): a restarted Redis is an empty Redis.
 * startRedisSentinelSet() starts a Redis Sentinel set-up of such servers (a
 * master, a replica, sentinels) for the failover test.
 */
export interface RedisServer {
  /** redis://127.0.0.1:<port>, or rediss:// when started with `tls`; without the password, if there is one. */
  readonly url: string;
  readonly port: number;
  /** Shuts Redis down (SIGTERM) and waits until it is gone; restart() brings it back. */
  stop(): Promise<void>;
  /** Kills Redis (SIGKILL: no goodbye to its clients) and waits until it is gone; restart() brings it back. */
  kill(): Promise<void>;
  /** Freezes Redis: connections stay open, nothing is answered (a hung server). */
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** Stops Redis if it runs and starts it again on the same port; resolves once it answers PING. */
  restart(): Promise<void>;
  /** Stops it for good and removes what it left (its directory, its container). */
  close(): Promise<void>;
}

/** How long Redis may take to answer PING after it was started. */
const READY_TIMEOUT_MS = 15_000;
/** Attempts at a free port: another process may take the one picked before redis-server binds it. */
const PORT_ATTEMPTS = 5;
const KEEP_OUTPUT_CHARS = 20_000;
/** How long a SIGTERM may take before SIGKILL follows. */
const STOP_TIMEOUT_MS = 5000;

const MISSING_BINARY =
  'redis-server is not installed, and the shared-state tests need a real Redis. ' +
  'Install it with `apt-get install redis-server` (Debian/Ubuntu; .ci/run does this when it is missing), ' +
  'or put a redis-server (Redis 6.2+ or Valkey) on the PATH.';

/** What startRedisServer() may turn on; without either, a plain Redis that asks for no password. */
export interface RedisServerOptions {
  /**
   * TLS only (`--port 0 --tls-port <port>`): the server presents `cert` with
   * `key` (PEM files, e.g. from makeTestCerts()); clients need no certificate
   * of their own. `ca` is what the helper trusts when it checks that Redis answers.
   */
  tls?: { cert: string; key: string; ca: string };
  /** `--requirepass`: every client must AUTH with this password first. */
  password?: string;
  /** Further redis-server arguments, e.g. ['--replicaof', '127.0.0.1', '6379']. */
  args?: string[];
}

/**
 * Thrown by startRedisServer({ tls }) when redis-server was built without TLS
 * (no BUILD_TLS): a reason to skip a TLS test, not a failure. Redis 6 and 7.0
 * know the tls-* directives only when built with TLS (config.c, `#ifdef
 * USE_OPENSSL`: "Bad directive"); Redis 7.2+ knows them always and says
 * "Failed finding TLS support" (server.c, initListeners). Any other failure fails the test.
 */
export class RedisWithoutTls extends Error {}
const WITHOUT_TLS = /'tls-[a-z-]+ [^\n]*'\s*\nBad directive|Failed finding TLS support/;

/** How the helper reaches a Redis it started: over TLS trusting this CA (PEM text), with this password. */
interface Reach {
  tlsCa?: string;
  password?: string;
}

/** One command in RESP, so that a password is sent as it is whatever characters it holds. */
function resp(...words: string[]): string {
  return `*${words.length}\r\n${words.map((word) => `$${Buffer.byteLength(word)}\r\n${word}\r\n`).join('')}`;
}

/** Whether a Redis answers PING on 127.0.0.1:port within timeoutMs (after AUTH when it has a password). */
function answersPing(port: number, timeoutMs: number, reach: Reach = {}): Promise<boolean> {
  return new Promise((resolve) => {
    const socket =
      reach.tlsCa === undefined
        ? connect({ host: '127.0.0.1', port })
        : connectTls({ host: '127.0.0.1', port, ca: reach.tlsCa });
    const commands = reach.password === undefined ? [resp('PING')] : [resp('AUTH', reach.password), resp('PING')];
    let reply = '';
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('error', () => done(false));
    socket.once(reach.tlsCa === undefined ? 'connect' : 'secureConnect', () => socket.write(commands.join('')));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      reply += chunk;
      const lines = reply.split('\r\n').slice(0, -1);
      if (lines.length >= commands.length)
        done(lines.at(-1) === '+PONG' && lines.every((line) => line.startsWith('+')));
    });
  });
}

/**
 * Resolves once the server says it is ready and Redis answers PING on the
 * port; rejects after timeoutMs, or as soon as `gone` says the server exited.
 */
async function waitForPing(
  port: number,
  timeoutMs: number,
  gone: () => string | null,
  announced: () => boolean = () => true,
  reach: Reach = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const exited = gone();
    if (exited !== null) throw new Error(exited);
    if (announced() && (await answersPing(port, 1000, reach))) return;
    if (Date.now() > deadline) throw new Error(`Redis on 127.0.0.1:${port} did not answer PING within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// ------------------------------------------------------------ redis-server as a child process

const directories = new Set<string>();
let cleanupInstalled = false;

/** A temporary directory for one redis-server, removed when the test process exits (if close() did not). */
function workDirectory(): string {
  if (!cleanupInstalled) {
    cleanupInstalled = true;
    process.once('exit', () => {
      for (const directory of directories) rmSync(directory, { recursive: true, force: true });
    });
  }
  const directory = mkdtempSync(join(tmpdir(), 'paia-redis-'));
  directories.add(directory);
  return directory;
}

interface RunningServer {
  child: ChildProcess;
  exited: Promise<void>;
  /** null while it runs; otherwise how it ended and what it said. */
  gone(): string | null;
}

/** The arguments that make the port a TLS-only port (no plain one) and set the password. */
function optionArgs(port: number, options: RedisServerOptions): string[] {
  const { tls, password } = options;
  const listen = tls
    ? [
        '--port',
        '0',
        '--tls-port',
        String(port),
        '--tls-cert-file',
        tls.cert,
        '--tls-key-file',
        tls.key,
        // Clients show no certificate: Redis needs no CA of its own (tls-ca-cert-file) for that.
        '--tls-auth-clients',
        'no',
      ]
    : ['--port', String(port)];
  return password === undefined ? listen : [...listen, '--requirepass', password];
}

/** Starts redis-server on the port and resolves once it answers PING; rejects with its output if it exits first. */
async function spawnRedis(port: number, directory: string, options: RedisServerOptions = {}): Promise<RunningServer> {
  mkdirSync(directory, { recursive: true });
  const reach: Reach = {
    ...(options.tls ? { tlsCa: readFileSync(options.tls.ca, 'utf8') } : {}),
    ...(options.password === undefined ? {} : { password: options.password }),
  };
  const args = [
    '--bind',
    '127.0.0.1',
    ...optionArgs(port, options),
    // No RDB snapshots, no append-only file: nothing survives a restart, nothing is written to disk.
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    directory,
    '--daemonize',
    'no',
    // Notice level: its "Ready to accept connections" tells that this process, not another one, holds the port.
    '--loglevel',
    'notice',
    ...(options.args ?? []),
  ];
  return spawnServer(args, port, directory, reach, 'Ready to accept connections').catch((error: Error) => {
    if (options.tls && WITHOUT_TLS.test(error.message)) {
      throw new RedisWithoutTls(`redis-server was built without TLS support:\n${error.message}`);
    }
    throw error;
  });
}

/**
 * Runs redis-server with these arguments (a server or, with --sentinel, a sentinel) and resolves once it has
 * printed `announcement` and answers PING on the port; rejects with its output if it exits first.
 */
async function spawnServer(
  args: string[],
  port: number,
  directory: string,
  reach: Reach,
  announcement: string,
): Promise<RunningServer> {
  const child = spawn('redis-server', args, { cwd: directory, stdio: ['ignore', 'pipe', 'pipe'] });
  trackChild(child);
  let output = '';
  const keep = (chunk: string) => {
    output = (output + chunk).slice(-KEEP_OUTPUT_CHARS);
  };
  child.stdout!.setEncoding('utf8').on('data', keep);
  child.stderr!.setEncoding('utf8').on('data', keep);
  let ended: string | null = null;
  const exited = new Promise<void>((resolve) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      ended = error.code === 'ENOENT' ? MISSING_BINARY : `redis-server could not be started: ${error.message}`;
      resolve();
    });
    child.once('exit', (code, signal) => {
      ended ??= `redis-server on port ${port} exited (code ${code}, signal ${signal})\n--- its output:\n${output}`;
      resolve();
    });
  });
  const announced = () => output.includes(announcement);
  await waitForPing(port, READY_TIMEOUT_MS, () => ended, announced, reach).catch((error: Error) => {
    child.kill('SIGKILL');
    throw error;
  });
  return { child, exited, gone: () => ended };
}

/** Signals a server (SIGTERM by default) and resolves once it has exited; SIGKILL if it has not within 5 s. */
async function stopProcess(server: RunningServer, name: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (server.gone() !== null) return;
  server.child.kill('SIGCONT'); // a paused server acts on SIGTERM only once it runs again
  server.child.kill(name);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), STOP_TIMEOUT_MS);
  });
  if ((await Promise.race([server.exited, late])) === 'late') {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  clearTimeout(timer);
}

/**
 * Starts redis-server on 127.0.0.1 and a free port (another one if that is
 * taken meanwhile). Rejects with a message naming `apt-get install
 * redis-server` when the binary is missing, and with RedisWithoutTls when
 * `tls` is asked of a redis-server built without it.
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const directory = workDirectory();
  let port = 0;
  let current: RunningServer | undefined;
  for (let attempt = 1; current === undefined; attempt += 1) {
    port = await freePort();
    try {
      current = await spawnRedis(port, directory, options);
    } catch (error) {
      const collided = /Address already in use/i.test((error as Error).message);
      if (!collided || attempt >= PORT_ATTEMPTS) throw error;
    }
  }

  let server = current;
  const signal = (name: NodeJS.Signals) => stopProcess(server, name);
  return {
    url: `${options.tls ? 'rediss' : 'redis'}://127.0.0.1:${port}`,
    port,
    stop: () => signal('SIGTERM'),
    kill: () => signal('SIGKILL'),
    pause: async () => {
      server.child.kill('SIGSTOP');
    },
    resume: async () => {
      server.child.kill('SIGCONT');
    },
    restart: async () => {
      await signal('SIGTERM');
      server = await spawnRedis(port, directory, options);
    },
    close: async () => {
      await signal('SIGTERM');
      rmSync(directory, { recursive: true, force: true });
      directories.delete(directory);
    },
  };
}

// ------------------------------------------------------------ Redis Sentinel: a master, a replica and sentinels

/**
 * A Redis Sentinel set-up of real processes on 127.0.0.1: a master, one
 * replica and `sentinels` sentinels (`redis-server --sentinel`: Debian's
 * redis-sentinel is a symlink to redis-server, so the redis-server package
 * is enough), with failover timeouts short enough for a test.
 */
export interface RedisSentinelSet {
  /** The name the sentinels monitor the master by. */
  readonly masterName: string;
  /** The sentinels' addresses, "127.0.0.1:p1,127.0.0.1:p2,...", as PAIA_STATE_REDIS_SENTINELS takes them. */
  readonly sentinels: string;
  /** The port of the master the sentinels name now. */
  masterPort(): Promise<number>;
  /**
   * Resolves once the replica has every write the master took so far: a write of its own, then WAIT for one
   * replica (Redis replicates in order, so what came before is there too).
   */
  replicated(): Promise<void>;
  /** Kills the current master (SIGKILL, no goodbye) and resolves with its port; the sentinels then promote the replica. */
  killMaster(): Promise<number>;
  /** Resolves once the sentinels name a master other than `oldPort` that says it is one; rejects after timeoutMs. */
  promoted(oldPort: number, timeoutMs: number): Promise<number>;
  close(): Promise<void>;
}

/** Sentinel's timings for a test: the master counts as down after 1 s without an answer; a failover that stalls is retried soon. */
const DOWN_AFTER_MS = 1000;
const FAILOVER_TIMEOUT_MS = 3000;

/** One short-lived client of a server or sentinel the helper started; every command bounded. */
function client(port: number, password: string | undefined): Redis {
  return new Redis({
    host: '127.0.0.1',
    port,
    ...(password === undefined ? {} : { password }),
    lazyConnect: true,
    enableOfflineQueue: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 2000,
    commandTimeout: 5000,
  });
}

async function ask<T>(port: number, password: string | undefined, command: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = client(port, password);
  redis.on('error', () => {});
  try {
    return await command(redis);
  } finally {
    redis.disconnect();
  }
}

/** Waits (polling every 100 ms) until `check` holds; rejects with `what` after timeoutMs. */
async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The passwords of a Sentinel set-up: of the master and replica (requirepass, masterauth), and of the sentinels. */
export interface SentinelPasswords {
  redis?: string;
  sentinel?: string;
}

/** Starts one sentinel watching the master (port retried like the servers'). */
async function startSentinel(
  directory: string,
  masterName: string,
  masterPort: number,
  quorum: number,
  passwords: SentinelPasswords,
) {
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const home = join(directory, `sentinel-${port}`);
    mkdirSync(home, { recursive: true });
    // Sentinel rewrites its configuration file (what it learns of replicas and other sentinels): one file each.
    const conf = join(home, 'sentinel.conf');
    writeFileSync(
      conf,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        'daemonize no',
        `dir ${home}`,
        `sentinel monitor ${masterName} 127.0.0.1 ${masterPort} ${quorum}`,
        `sentinel down-after-milliseconds ${masterName} ${DOWN_AFTER_MS}`,
        `sentinel failover-timeout ${masterName} ${FAILOVER_TIMEOUT_MS}`,
        `sentinel parallel-syncs ${masterName} 1`,
        // Quoted: a password is taken as written. Sentinels use their own requirepass with each other too.
        ...(passwords.redis === undefined
          ? []
          : [`sentinel auth-pass ${masterName} ${JSON.stringify(passwords.redis)}`]),
        ...(passwords.sentinel === undefined ? [] : [`requirepass ${JSON.stringify(passwords.sentinel)}`]),
        '',
      ].join('\n'),
    );
    const reach = passwords.sentinel === undefined ? {} : { password: passwords.sentinel };
    try {
      const running = await spawnServer([conf, '--sentinel'], port, home, reach, 'Sentinel ID is');
      return { port, running };
    } catch (error) {
      if (!/Address already in use/i.test((error as Error).message) || attempt >= PORT_ATTEMPTS) throw error;
    }
  }
}

/**
 * Starts the master, its replica (in sync before the sentinels start) and the sentinels, and resolves once every
 * sentinel knows the replica and the other sentinels: only then can they agree that the master is down and
 * promote the replica. Three sentinels (quorum 2) as in production; one (quorum 1) is enough to fail over.
 */
export async function startRedisSentinelSet(
  options: { sentinels?: number; passwords?: SentinelPasswords } = {},
): Promise<RedisSentinelSet> {
  const count = options.sentinels ?? 3;
  const passwords = options.passwords ?? {};
  const masterName = 'paia-test-master';
  const redisPassword = passwords.redis;
  const sentinelPassword = passwords.sentinel;
  // No delay before a full sync to a replica (the default waits 5 s for more replicas to join); each data server
  // asks the same password of clients as of its replica (masterauth), for either may be the master.
  const data = {
    ...(redisPassword === undefined ? {} : { password: redisPassword }),
    args: ['--repl-diskless-sync-delay', '0', ...(redisPassword === undefined ? [] : ['--masterauth', redisPassword])],
  };
  const first = await startRedisServer(data);
  const second = await startRedisServer({
    ...data,
    args: [...data.args, '--replicaof', '127.0.0.1', String(first.port)],
  });
  const servers = new Map([first, second].map((server) => [server.port, server]));
  const inSync = async () =>
    /master_link_status:up/.test(await ask(second.port, redisPassword, (redis) => redis.info('replication')));
  await until(inSync, READY_TIMEOUT_MS, 'the replica was not in sync with the master');
  const directory = workDirectory();
  const quorum = Math.floor(count / 2) + 1;
  const sentinels = await Promise.all(
    Array.from({ length: count }, () => startSentinel(directory, masterName, first.port, quorum, passwords)),
  );
  const sentinelPort = sentinels[0]!.port;
  const knows = async (port: number) => {
    const [replicas, others] = await ask(port, sentinelPassword, (redis) =>
      Promise.all([
        redis.call('SENTINEL', 'REPLICAS', masterName) as Promise<unknown[]>,
        redis.call('SENTINEL', 'SENTINELS', masterName) as Promise<unknown[]>,
      ]),
    );
    return replicas.length === 1 && others.length === count - 1;
  };
  // Sentinels find each other by hello messages on the master, every 2 s.
  await until(
    async () => (await Promise.all(sentinels.map(({ port }) => knows(port)))).every(Boolean),
    20_000,
    'the sentinels did not find the replica and each other',
  );

  const masterPort = async () => {
    const [, port] = (await ask(sentinelPort, sentinelPassword, (redis) =>
      redis.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName),
    )) as [string, string];
    return Number(port);
  };
  return {
    masterName,
    sentinels: sentinels.map(({ port }) => `127.0.0.1:${port}`).join(','),
    masterPort,
    replicated: async () => {
      const acknowledged = await ask(await masterPort(), redisPassword, async (redis) => {
        await redis.set('paia-test:replication-mark', String(Date.now()));
        return redis.wait(1, 5000);
      });
      if (acknowledged < 1) throw new Error('the replica did not acknowledge the writes within 5 s');
    },
    killMaster: async () => {
      const port = await masterPort();
      await servers.get(port)?.kill();
      return port;
    },
    promoted: async (oldPort, timeoutMs) => {
      let now = oldPort;
      await until(
        async () => {
          now = await masterPort();
          return now !== oldPort && (await ask(now, redisPassword, (redis) => redis.role()))[0] === 'master';
        },
        timeoutMs,
        `the sentinels did not promote the replica of ${oldPort}`,
      );
      return now;
    },
    close: async () => {
      await Promise.all(sentinels.map(({ running }) => stopProcess(running)));
      await Promise.all([first.close(), second.close()]);
      rmSync(directory, { recursive: true, force: true });
      directories.delete(directory);
    },
  };
}

// ------------------------------------------------------------ Redis in a container (testcontainers)

/** The image of startRedisContainer(); PAIA_TEST_REDIS_IMAGE picks another (e.g. valkey/valkey:8). */
const REDIS_IMAGE = process.env.PAIA_TEST_REDIS_IMAGE ?? 'redis:7';
const CONTAINER_START_TIMEOUT_MS = 120_000;

/** null when a container runtime (Docker, Podman ...) answers; otherwise why not, in words for the skip line. */
async function dockerUnavailable(): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const slow = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve('no container runtime answered within 10 s'), 10_000);
  });
  try {
    return await Promise.race([
      getContainerRuntimeClient().then(
        () => null,
        (error: Error) => `no Docker engine is reachable (${error.message})`,
      ),
      slow,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * PAIA_TEST_DOCKER_NETWORK=host: the engine has no bridge network (the image tests' private dockerd,
 * test/image/engine.ts, runs with --bridge=none), so the container shares the host's network and Redis
 * itself listens on 127.0.0.1 and the port picked here.
 */
const HOST_NETWORK = process.env.PAIA_TEST_DOCKER_NETWORK === 'host';

/**
 * Publishes the Redis port on the host's loopback only (testcontainers binds
 * all interfaces), on a port picked here so that a restart keeps it.
 */
class LoopbackRedisContainer extends GenericContainer {
  constructor(
    image: string,
    private readonly hostPort: number,
  ) {
    super(image);
    const listen = HOST_NETWORK ? ['--bind', '127.0.0.1', '--port', String(hostPort)] : [];
    this.withCommand(['redis-server', '--save', '', '--appendonly', 'no', ...listen])
      .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
      .withStartupTimeout(CONTAINER_START_TIMEOUT_MS);
    if (HOST_NETWORK) this.withNetworkMode('host');
    else this.withExposedPorts(6379);
  }

  protected override async beforeContainerCreated(): Promise<void> {
    if (!HOST_NETWORK)
      this.hostConfig.PortBindings = { '6379/tcp': [{ HostIp: '127.0.0.1', HostPort: String(this.hostPort) }] };
  }
}

/** Starts a Redis container (a local Docker engine) published on 127.0.0.1 and a free port. */
async function startRedisContainer(): Promise<RedisServer> {
  const hostPort = await freePort();
  const container: StartedTestContainer = await new LoopbackRedisContainer(REDIS_IMAGE, hostPort).start();
  const port = HOST_NETWORK ? hostPort : container.getMappedPort(6379);
  const engine = await getContainerRuntimeClient();
  const docker = engine.container.getById(container.getId());
  const running = async () => (await docker.inspect()).State.Running;
  const ready = () => waitForPing(port, READY_TIMEOUT_MS, () => null);
  await ready();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: async () => {
      if (await running()) await docker.stop({ t: 10 });
    },
    kill: async () => {
      if (await running()) await docker.kill({ signal: 'SIGKILL' });
    },
    pause: async () => {
      await docker.pause();
    },
    resume: async () => {
      await docker.unpause();
    },
    restart: async () => {
      if ((await docker.inspect()).State.Paused) await docker.unpause();
      // The engine's restart, not testcontainers': that one waits for the log line again (a wait that can miss
      // a restarted container's line and hang) and, when its wait fails, removes the container, so the next
      // test finds it gone. Answering PING is what "back" means here. The port binding is fixed (see
      // LoopbackRedisContainer): the container comes back on the same port.
      await docker.restart({ t: 0 });
      await ready();
    },
    close: async () => {
      await container.stop({ remove: true, timeout: 0 });
    },
  };
}

/** How each kind of Redis is started, for tests that run against both; `unavailable` is the skip reason. */
export interface RedisKind {
  name: string;
  start: () => Promise<RedisServer>;
  unavailable: string | null;
}

/** The local redis-server (always) and the container (only where a Docker engine answers). */
export async function redisKinds(): Promise<RedisKind[]> {
  return [
    { name: 'redis-server', start: startRedisServer, unavailable: null },
    { name: `container ${REDIS_IMAGE}`, start: startRedisContainer, unavailable: await dockerUnavailable() },
  ];
}
