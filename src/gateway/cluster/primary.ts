import cluster, { type Worker } from 'node:cluster';
import type { Socket } from 'node:net';
import type { Config } from '../../config/index.js';
import type { Logger } from '../../log.js';
import { demoOptions, type EmbeddedSimulator, startDemo } from '../demo.js';
import type { Serving } from '../index.js';
import type { Sip2Target } from '../parts/sip2-options.js';
import { type Member, MetricsGathering } from './group-metrics.js';
import { HandOut, type Outlet } from './hand-out.js';
import { DEAD_MS, Heartbeat, LATE_MS, PING_INTERVAL_MS } from './heartbeat.js';
import { type FromWorker, isFromWorker, type ToWorker } from './messages.js';

/**
 * The primary process of `serve --workers N` (http.workers): it serves no
 * HTTP itself. It listens on the port and forks N workers (node:cluster
 * re-runs the same command; src/cli/main.ts sends a worker to
 * src/cli/serve.ts's serveWorker), hands each the configuration it
 * validated, and waits until all of them are ready. It hands each
 * connection it accepts to a ready worker (hand-out.ts), never to one still
 * starting. Then it supervises: it pings every worker each second and kills
 * one that stops answering (heartbeat.ts); a worker that dies is replaced
 * after a delay that doubles while the replacements keep dying (a crash loop
 * does not spin); a stop closes the listener first, then asks every worker
 * to drain and waits for all of them.
 *
 * Demo mode (no sip2.host): the embedded simulator runs here, once, and every
 * worker's SIP2 pool connects to it, so all workers see one library.
 */

/** A worker that has not said it is ready within this is killed (it counts as a start failure). */
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
  /** The current worker's gateway is built: it takes connections (and is pinged). */
  ready: boolean;
  /** The current worker drains (a signal of its own or the primary's stop): it takes no new connections. */
  draining: boolean;
  heartbeat: Heartbeat;
  /** Whether its heartbeat answer is late (logged when that changes). */
  late: boolean;
  startedAt: number;
  /** Deaths in a row, each within STABLE_MS of its start. */
  crashes: number;
  /** Why the current worker could not start or was killed, as it said (or the primary found). */
  failure: string | null;
  startTimer: NodeJS.Timeout | undefined;
  restartTimer: NodeJS.Timeout | undefined;
}

const describeExit = ({ code, signal }: Exit) => (signal ? `signal ${signal}` : `code ${code}`);

class Supervisor {
  private readonly slots: Slot[];
  private readonly log: Logger;
  private readonly handOut: HandOut;
  /** The workers' metrics for each scrape one of them takes. */
  private readonly metrics: MetricsGathering;
  /** Where the primary listens, once it does. */
  url: string | null = null;
  baseUrl: string | null = null;
  /** While starting: settles once every worker is ready, or one failed. */
  private starting: { resolve(): void; reject(error: Error): void } | null = null;
  private stopping: Promise<'graceful' | 'forced'> | null = null;
  private heartbeats: NodeJS.Timeout | undefined;
  /** When beat() last ran: a much later one means the primary itself was stopped (see beat). */
  private lastBeatAt = 0;

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
      ready: false,
      draining: false,
      heartbeat: new Heartbeat(),
      late: false,
      startedAt: 0,
      crashes: 0,
      failure: null,
      startTimer: undefined,
      restartTimer: undefined,
    }));
    const outlets: Outlet[] = this.slots.map((slot) => ({
      number: slot.number,
      canTake: (now) => this.canTake(slot, now),
      send: (id, socket, sent) => this.sendConnection(slot, id, socket, sent),
    }));
    this.handOut = new HandOut({ outlets: () => outlets, maxWaiting: config.http.maxConnections, logger });
    const members: Member[] = this.slots.map((slot) => ({
      number: slot.number,
      askable: (now) => slot.ready && slot.heartbeat.lateMs(now) <= LATE_MS,
      send: (message) => this.send(slot, message),
    }));
    this.metrics = new MetricsGathering({ members: () => members, timeoutMs: config.metrics.workerTimeoutMs });
  }

  /** Binds http.host and http.port (0: a free port, kept for the primary's lifetime); rejects when it cannot. */
  async listen(): Promise<void> {
    const { host, port, tls, basePath } = this.config.http;
    this.url = await this.handOut.listen(host, port, tls !== null);
    this.baseUrl = `${this.url}${basePath}`;
  }

  /** Forks every worker; resolves once all are ready, rejects with the first one's reason that could not start. */
  start(): Promise<void> {
    const started = new Promise<void>((resolve, reject) => {
      this.starting = { resolve, reject };
    });
    for (const slot of this.slots) this.fork(slot);
    this.lastBeatAt = Date.now();
    this.heartbeats = setInterval(() => this.beat(), PING_INTERVAL_MS);
    return started.finally(() => {
      this.starting = null;
    });
  }

  /** The pids of the workers running now, in worker order (a worker being replaced is left out). */
  pids(): number[] {
    return this.slots.flatMap((slot) => (slot.worker?.process.pid === undefined ? [] : [slot.worker.process.pid]));
  }

  /**
   * Closes the listener, lets the connections still waiting in the primary
   * go to the workers, then asks every worker to drain and waits until all
   * have exited: "graceful" when each that served exited 0.
   */
  stop(timeoutMs: number): Promise<'graceful' | 'forced'> {
    this.stopping ??= this.drain(timeoutMs);
    return this.stopping;
  }

  /** Closes every connection the primary holds and tells every worker to drop everything and exit. */
  forceStop(reason: string): void {
    this.stopping ??= Promise.resolve('forced');
    clearInterval(this.heartbeats);
    this.metrics.close();
    this.handOut.destroy();
    for (const slot of this.slots) {
      clearTimeout(slot.restartTimer);
      if (slot.worker) this.send(slot, { type: 'paia-sip2:force', reason });
    }
  }

  reloadTls(): void {
    const ready = this.slots.filter((slot) => slot.ready);
    this.log.info({ workers: ready.length }, 'SIGHUP: asking every worker to reload the TLS certificate');
    for (const slot of ready) this.send(slot, { type: 'paia-sip2:reload-tls' });
  }

  private async drain(timeoutMs: number): Promise<'graceful' | 'forced'> {
    // A worker waiting to be replaced stays down; one slow to answer while it drains is bounded by the drain, not killed.
    for (const slot of this.slots) clearTimeout(slot.restartTimer);
    clearInterval(this.heartbeats);
    await this.handOut.close();
    const live = this.slots.filter((slot) => slot.worker !== null);
    const served = live.filter((slot) => slot.ready);
    this.log.info(
      { workers: served.length, pids: this.pids() },
      'shutdown: listener closed; asking every worker to drain (each within http.shutdownTimeoutMs)',
    );
    for (const slot of live) {
      // One still starting has nothing to drain.
      if (slot.ready) this.send(slot, { type: 'paia-sip2:stop' });
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
    this.metrics.close();
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

  private canTake(slot: Slot, now: number): boolean {
    return (
      slot.worker !== null &&
      slot.ready &&
      !slot.draining &&
      slot.heartbeat.lateMs(now) <= LATE_MS &&
      slot.worker.isConnected()
    );
  }

  private sendConnection(slot: Slot, id: number, socket: Socket, sent: (error: Error | null) => void): void {
    const message: ToWorker = { type: 'paia-sip2:connection', id };
    const worker = slot.worker;
    if (!worker) {
      process.nextTick(sent, new Error('the worker has exited'));
      return;
    }
    try {
      // keepOpen: the primary's copy stays open until the worker took it (hand-out.ts says why).
      worker.send(message, socket, { keepOpen: true }, sent);
    } catch (error) {
      process.nextTick(sent, error as Error);
    }
  }

  /** Every second: kills the ready workers that have not answered for DEAD_MS, pings the others. */
  private beat(): void {
    const now = Date.now();
    // A beat this late means the primary itself was stopped (a paused VM or container): the workers' answers
    // are still unread in its channels, so no worker is judged on this round.
    const judge = now - this.lastBeatAt < 2 * PING_INTERVAL_MS;
    this.lastBeatAt = now;
    for (const slot of this.slots) {
      const worker = slot.worker;
      if (!worker || !slot.ready) continue;
      const lateMs = judge ? slot.heartbeat.lateMs(now) : 0;
      if (lateMs > DEAD_MS) {
        slot.ready = false;
        slot.failure = `did not answer the heartbeat for ${DEAD_MS / 1000} s (stopped or blocked)`;
        this.log.error(
          { worker: slot.number, workerPid: worker.process.pid, lateMs },
          `worker ${slot.failure}; killing it`,
        );
        worker.process.kill('SIGKILL');
        continue;
      }
      if (lateMs > LATE_MS && !slot.late) {
        slot.late = true;
        this.log.warn(
          { worker: slot.number, workerPid: worker.process.pid, lateMs },
          'worker does not answer the heartbeat; it gets no new connections until it does',
        );
      }
      this.send(slot, { type: 'paia-sip2:ping', beat: slot.heartbeat.ping(now) });
    }
  }

  private fork(slot: Slot): void {
    slot.restartTimer = undefined;
    slot.ready = false;
    slot.draining = false;
    slot.heartbeat = new Heartbeat();
    slot.late = false;
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
      slot.failure = `was not ready within ${START_BOUND_MS / 1000} s`;
      this.log.error({ worker: slot.number, workerPid: worker.process.pid }, `worker ${slot.failure}; killing it`);
      worker.process.kill('SIGKILL');
    }, START_BOUND_MS);
  }

  private onMessage(slot: Slot, worker: Worker, message: FromWorker): void {
    // A dead worker's last messages are still read (see onExit): its "took" says the connection is its own.
    if (message.type === 'paia-sip2:took' && slot.worker === null) {
      this.handOut.taken(slot.number, message.id);
      return;
    }
    if (slot.worker !== worker) return;
    switch (message.type) {
      case 'paia-sip2:hello':
        if (this.stopping) {
          worker.process.kill('SIGTERM');
          return;
        }
        this.send(slot, {
          type: 'paia-sip2:start',
          config: this.config,
          url: this.url as string,
          sharedSimulator: this.sharedSimulator,
          worker: slot.number,
        });
        return;
      case 'paia-sip2:failed':
        slot.failure = message.reason;
        return;
      case 'paia-sip2:ready':
        clearTimeout(slot.startTimer);
        slot.ready = true;
        this.handOut.pump();
        if (this.starting) {
          if (this.slots.every((each) => each.ready)) this.starting.resolve();
          return;
        }
        this.log.info({ worker: slot.number, workerPid: worker.process.pid }, 'replacement worker ready');
        return;
      case 'paia-sip2:took':
        this.handOut.taken(slot.number, message.id);
        return;
      case 'paia-sip2:pong':
        slot.heartbeat.answered(message.beat);
        if (slot.late && slot.heartbeat.lateMs(Date.now()) <= LATE_MS) {
          slot.late = false;
          this.log.info({ worker: slot.number, workerPid: worker.process.pid }, 'worker answers the heartbeat again');
          this.handOut.pump();
        }
        return;
      case 'paia-sip2:draining':
        slot.draining = true;
        return;
      case 'paia-sip2:scrape':
        this.metrics.begin(slot.number, message.scrape);
        return;
      case 'paia-sip2:metrics-share':
        this.metrics.shared(slot.number, message.gather, message.share);
        return;
    }
  }

  private onExit(slot: Slot, worker: Worker, exit: Exit): void {
    if (slot.worker !== worker) return;
    clearTimeout(slot.startTimer);
    slot.worker = null;
    slot.ready = false;
    this.metrics.gone(slot.number);
    // The process's exit can come before the last messages it wrote (a "took") are read from the channel: the
    // connection it had is handed on only once the channel is closed and every one of them was read.
    if (worker.isConnected()) worker.once('disconnect', () => this.handOut.gone(slot.number));
    else this.handOut.gone(slot.number);
    if (this.stopping) return;
    const pid = worker.process.pid;
    if (this.starting) {
      this.starting.reject(
        new Error(
          `worker ${slot.number} (pid ${pid}): ${slot.failure ?? `exited (${describeExit(exit)}) before it was ready`}`,
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
 * simulator they share); resolves once the primary listens and every worker is ready. If one cannot
 * start, the others are stopped and it rejects with that worker's reason.
 */
export async function startWorkers(config: Config, logger: Logger): Promise<Serving> {
  const log = logger.child({ component: 'workers' });
  const demo = demoOptions(config);
  const simulator: EmbeddedSimulator | null = demo
    ? await startDemo(demo, logger.child({ component: 'simulator' }))
    : null;
  const supervisor = new Supervisor(config, simulator?.target ?? null, log);
  try {
    await supervisor.listen();
  } catch (error) {
    await simulator?.stop();
    throw error;
  }
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
