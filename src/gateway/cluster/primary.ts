import cluster, { type Worker } from 'node:cluster';
import type { Config } from '../../config/index.js';
import type { Logger } from '../../log.js';
import { demoStarter, type EmbeddedSimulator } from '../demo.js';
import type { Serving } from '../index.js';
import type { Sip2Target } from '../sip2.js';
import { type FromWorker, isFromWorker, type ToWorker } from './messages.js';

/**
 * The primary process of `serve --workers N` (http.workers): it serves no
 * HTTP itself. It forks N workers (node:cluster re-runs the same command;
 * src/cli/main.ts sends a worker to src/cli/serve.ts's serveWorker), hands
 * each the configuration it validated, and waits until all of them listen on
 * the one port node:cluster shares among them. Then it supervises: a worker
 * that dies is replaced after a delay that doubles while the replacements
 * keep dying (a crash loop does not spin); a stop asks every worker to
 * drain and waits for all of them.
 *
 * Demo mode (no sip2.host): the embedded simulator runs here, once, and every
 * worker's SIP2 pool connects to it, so all workers see one library.
 *
 * http.port 0 (tests): node:cluster binds the listener once, in this process,
 * for the first worker that listens, and gives later workers listening on
 * port 0 the same socket; the port is the same as long as one worker holds
 * it. Once every worker has died the socket is closed, so a replacement is
 * told the port that was bound, not 0 (see portForNewWorker).
 */

/** A worker that has not reported listening within this is killed (it counts as a start failure). */
const START_BOUND_MS = 60_000;
/** A worker that ran this long before dying was no crash loop: its replacement starts after the first delay again. */
const STABLE_MS = 60_000;
/** Restart delays: the first, doubled per crash in a row, up to the last. */
const RESTART_DELAY_MS = { first: 500, max: 30_000 } as const;
/** How long past http.shutdownTimeoutMs (which each worker keeps itself) a stop waits before it kills what is left. */
const KILL_GRACE_MS = 5_000;

/** The delay before the replacement of a worker that died, after `crashes` crashes in a row (1 for the first). */
export function restartDelayMs(crashes: number): number {
  return Math.min(RESTART_DELAY_MS.first * 2 ** Math.max(0, crashes - 1), RESTART_DELAY_MS.max);
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** One of the N places a worker runs in; its replacements keep its number. */
interface Slot {
  /** 1..N, as the logs name it. */
  readonly number: number;
  worker: Worker | null;
  exited: Promise<Exit>;
  /** The http.port the current worker was told. */
  port: number;
  listening: boolean;
  startedAt: number;
  /** Deaths in a row, each within STABLE_MS of its start. */
  crashes: number;
  /** Why the current worker could not start, as it said (or the primary found). */
  failure: string | null;
  startTimer: NodeJS.Timeout | undefined;
  restartTimer: NodeJS.Timeout | undefined;
}

const describeExit = ({ code, signal }: Exit) => (signal ? `signal ${signal}` : `code ${code}`);

class Supervisor {
  private readonly slots: Slot[];
  private readonly log: Logger;
  /** Where the workers listen: the first worker's report. */
  url: string | null = null;
  baseUrl: string | null = null;
  /** While starting: settles once every worker listens, or one failed. */
  private starting: { resolve(): void; reject(error: Error): void } | null = null;
  private stopping: Promise<'graceful' | 'forced'> | null = null;

  constructor(
    private readonly config: Config,
    private readonly sharedSimulator: Sip2Target | null,
    logger: Logger,
  ) {
    this.log = logger;
    this.slots = Array.from({ length: config.http.workers }, (_, index) => ({
      number: index + 1,
      worker: null,
      exited: Promise.resolve({ code: 0, signal: null }),
      port: config.http.port,
      listening: false,
      startedAt: 0,
      crashes: 0,
      failure: null,
      startTimer: undefined,
      restartTimer: undefined,
    }));
  }

  /** Forks every worker; resolves once all listen, rejects with the first one's reason that could not start. */
  start(): Promise<void> {
    const started = new Promise<void>((resolve, reject) => {
      this.starting = { resolve, reject };
    });
    for (const slot of this.slots) this.fork(slot);
    return started.finally(() => {
      this.starting = null;
    });
  }

  /** The pids of the workers running now, in worker order (a worker being replaced is left out). */
  pids(): number[] {
    return this.slots.flatMap((slot) => (slot.worker?.process.pid === undefined ? [] : [slot.worker.process.pid]));
  }

  /** Asks every worker to drain and waits until all have exited: "graceful" when each that served exited 0. */
  stop(timeoutMs: number): Promise<'graceful' | 'forced'> {
    this.stopping ??= this.drain(timeoutMs);
    return this.stopping;
  }

  /** Tells every worker to drop everything and exit. */
  forceStop(reason: string): void {
    this.stopping ??= Promise.resolve('forced');
    for (const slot of this.slots) {
      clearTimeout(slot.restartTimer);
      if (slot.worker) this.send(slot, { type: 'paia-sip2:force', reason });
    }
  }

  reloadTls(): void {
    const listening = this.slots.filter((slot) => slot.listening);
    this.log.info({ workers: listening.length }, 'SIGHUP: asking every worker to reload the TLS certificate');
    for (const slot of listening) this.send(slot, { type: 'paia-sip2:reload-tls' });
  }

  private async drain(timeoutMs: number): Promise<'graceful' | 'forced'> {
    // A worker waiting to be replaced stays down.
    for (const slot of this.slots) clearTimeout(slot.restartTimer);
    const live = this.slots.filter((slot) => slot.worker !== null);
    const served = live.filter((slot) => slot.listening);
    this.log.info(
      { workers: served.length, pids: this.pids() },
      'shutdown: asking every worker to drain (each within http.shutdownTimeoutMs)',
    );
    for (const slot of live) {
      // One still starting has nothing to drain.
      if (slot.listening) this.send(slot, { type: 'paia-sip2:stop' });
      else slot.worker?.process.kill('SIGTERM');
    }
    let killed = false;
    const backstop = setTimeout(() => {
      killed = true;
      for (const slot of live) {
        if (!slot.worker) continue;
        this.log.error(
          { worker: slot.number, workerPid: slot.worker.process.pid, waitedMs: timeoutMs + KILL_GRACE_MS },
          'shutdown: worker did not exit; killing it',
        );
        slot.worker.process.kill('SIGKILL');
      }
    }, timeoutMs + KILL_GRACE_MS);
    const exits = await Promise.all(live.map((slot) => slot.exited));
    clearTimeout(backstop);
    const unclean = served.filter((slot) => {
      const exit = exits[live.indexOf(slot)] as Exit;
      return exit.code !== 0;
    });
    for (const slot of unclean) {
      const exit = exits[live.indexOf(slot)] as Exit;
      this.log.warn({ worker: slot.number, exit: describeExit(exit) }, 'shutdown: worker did not drain cleanly');
    }
    return killed || unclean.length > 0 ? 'forced' : 'graceful';
  }

  /**
   * The port to tell a new worker. All workers must ask node:cluster for the
   * same port to share one socket: while any worker runs, what it was told;
   * once none does, the port the workers listened on (http.port 0 found a
   * free one, which a new bind would not find again).
   */
  private portForNewWorker(): number {
    const running = this.slots.find((slot) => slot.worker !== null);
    if (running) return running.port;
    return this.url === null ? this.config.http.port : Number(new URL(this.url).port);
  }

  private fork(slot: Slot): void {
    slot.restartTimer = undefined;
    slot.port = this.portForNewWorker();
    slot.listening = false;
    slot.failure = null;
    slot.startedAt = Date.now();
    const worker = cluster.fork();
    slot.worker = worker;
    slot.exited = new Promise<Exit>((resolve) => {
      worker.once('exit', (code: number | null, signal: NodeJS.Signals | null) => {
        this.onExit(slot, worker, { code, signal });
        resolve({ code, signal });
      });
    });
    worker.on('message', (message: unknown) => {
      if (isFromWorker(message)) this.onMessage(slot, worker, message);
    });
    // Sending to a worker that just died: its exit is what counts.
    worker.on('error', (error: Error) =>
      this.log.debug({ worker: slot.number, error: error.message }, 'IPC with a worker failed'),
    );
    slot.startTimer = setTimeout(() => {
      slot.failure = `did not listen within ${START_BOUND_MS / 1000} s`;
      this.log.error({ worker: slot.number, workerPid: worker.process.pid }, `worker ${slot.failure}; killing it`);
      worker.process.kill('SIGKILL');
    }, START_BOUND_MS);
  }

  private onMessage(slot: Slot, worker: Worker, message: FromWorker): void {
    if (slot.worker !== worker) return;
    switch (message.type) {
      case 'paia-sip2:hello': {
        if (this.stopping) {
          worker.process.kill('SIGTERM');
          return;
        }
        const config =
          slot.port === this.config.http.port
            ? this.config
            : { ...this.config, http: { ...this.config.http, port: slot.port } };
        this.send(slot, {
          type: 'paia-sip2:start',
          config,
          sharedSimulator: this.sharedSimulator,
          worker: slot.number,
        });
        return;
      }
      case 'paia-sip2:failed':
        slot.failure = message.reason;
        return;
      case 'paia-sip2:listening':
        clearTimeout(slot.startTimer);
        slot.listening = true;
        this.onListening(slot, worker, message.url, message.baseUrl);
        return;
    }
  }

  private onListening(slot: Slot, worker: Worker, url: string, baseUrl: string): void {
    if (this.url === null) {
      this.url = url;
      this.baseUrl = baseUrl;
    } else if (url !== this.url) {
      // Only with http.port 0, when the replacement of the last worker standing bound a new port before the others.
      this.log.error({ worker: slot.number, url, expected: this.url }, 'worker listens on another port than announced');
    }
    if (this.starting) {
      if (this.slots.every((each) => each.listening)) this.starting.resolve();
      return;
    }
    this.log.info({ worker: slot.number, workerPid: worker.process.pid, url }, 'replacement worker listening');
  }

  private onExit(slot: Slot, worker: Worker, exit: Exit): void {
    if (slot.worker !== worker) return;
    clearTimeout(slot.startTimer);
    slot.worker = null;
    slot.listening = false;
    if (this.stopping) return;
    const pid = worker.process.pid;
    if (this.starting) {
      this.starting.reject(
        new Error(
          `worker ${slot.number} (pid ${pid}): ${slot.failure ?? `exited (${describeExit(exit)}) before listening`}`,
        ),
      );
      return;
    }
    const ranMs = Date.now() - slot.startedAt;
    slot.crashes = ranMs >= STABLE_MS ? 1 : slot.crashes + 1;
    const delayMs = restartDelayMs(slot.crashes);
    this.log.error(
      {
        worker: slot.number,
        workerPid: pid,
        exit: describeExit(exit),
        reason: slot.failure ?? undefined,
        ranMs,
        crashesInARow: slot.crashes,
        restartInMs: delayMs,
      },
      'worker died; starting a replacement',
    );
    slot.restartTimer = setTimeout(() => this.fork(slot), delayMs);
  }

  private send(slot: Slot, message: ToWorker): void {
    const worker = slot.worker;
    if (!worker?.isConnected()) return;
    try {
      worker.send(message);
    } catch (error) {
      this.log.debug({ worker: slot.number, error: (error as Error).message }, 'could not send to a worker');
    }
  }
}

/**
 * Starts the N workers of http.workers (and, in demo mode, the embedded
 * simulator they share); resolves once every worker listens. If one cannot
 * start, the others are stopped and it rejects with that worker's reason.
 */
export async function startWorkers(config: Config, logger: Logger): Promise<Serving> {
  const log = logger.child({ component: 'workers' });
  const startDemo = demoStarter(config);
  const simulator: EmbeddedSimulator | null = startDemo
    ? await startDemo(logger.child({ component: 'simulator' }))
    : null;
  const supervisor = new Supervisor(config, simulator?.target ?? null, log);
  try {
    await supervisor.start();
  } catch (error) {
    log.error({ error: (error as Error).message }, 'a worker could not start; stopping the others');
    await supervisor.stop(config.http.shutdownTimeoutMs);
    await simulator?.stop();
    throw error;
  }
  const url = supervisor.url as string;
  log.info({ url, workers: config.http.workers, pids: supervisor.pids() }, 'paia-sip2 started with workers');

  const { host, port } = simulator?.target ?? { host: '', port: 0 };
  let stopping: Promise<'graceful' | 'forced'> | null = null;
  return {
    url,
    baseUrl: supervisor.baseUrl as string,
    shutdownTimeoutMs: config.http.shutdownTimeoutMs,
    demo: simulator ? { sip2: `${host}:${port}` } : null,
    reloadTls: () => supervisor.reloadTls(),
    forceStop(reason) {
      log.warn({ reason }, 'shutdown: forced; telling every worker to drop everything');
      supervisor.forceStop(reason);
      // The process exits next; the simulator's sockets go with it.
      simulator?.stop().catch(() => {});
    },
    stop(timeoutMs = config.http.shutdownTimeoutMs) {
      stopping ??= supervisor.stop(timeoutMs).then(async (outcome) => {
        // After the workers: their SIP2 sessions end before the simulator does.
        await simulator?.stop();
        return outcome;
      });
      return stopping;
    },
  };
}
