import { Socket } from 'node:net';
import { type Logger, writeHeldLines } from '../../log.js';
import { gatewayLogger, type Serving, startWorkerGateway, type WorkerGateway } from '../index.js';
import { GroupScrapes } from './group-metrics.js';
import { type FromWorker, isToWorker, type ToWorker, type WorkerCommand } from './messages.js';

/**
 * One worker process of `serve --workers N`: it asks the primary for the
 * configuration (the primary loaded and validated it once), builds the
 * gateway, tells the primary that it is ready (or why it could not start),
 * and from then on serves the connections the primary hands it and answers
 * its heartbeat. It never listens itself.
 */

/** How long a worker waits for its configuration after saying hello; the primary answers at once. */
const CONFIG_WAIT_MS = 10_000;

export interface StartedWorker {
  /** The gateway under signals: its stop() first tells the primary to send no more connections. */
  readonly gateway: Serving;
  readonly logger: Logger;
  /**
   * Hands the primary's commands (stop, force, reload-tls) to `onCommand`
   * from now on and tells the primary that this worker is ready. Call it
   * once the signal handlers are in place: the primary may stop everything
   * as soon as every worker is ready.
   */
  announce(onCommand: (command: WorkerCommand) => void): void;
}

function send(message: FromWorker): void {
  process.send?.(message);
}

type StartMessage = Extract<ToWorker, { type: 'paia-sip2:start' }>;

/** Sends this worker's metrics for another worker's scrape (group-metrics.ts); null when there are none to send. */
function shareMetrics(gateway: WorkerGateway | null, gather: number): void {
  const metrics = gateway?.metrics;
  if (!metrics) {
    send({ type: 'paia-sip2:metrics-share', gather, share: null });
    return;
  }
  metrics.share().then(
    (share) => send({ type: 'paia-sip2:metrics-share', gather, share }),
    () => send({ type: 'paia-sip2:metrics-share', gather, share: null }),
  );
}

/** Starts this worker's gateway; rejects (after telling the primary why) when it cannot. */
export async function startWorker(): Promise<StartedWorker> {
  if (!process.send) throw new Error('not a worker process: started without an IPC channel to a primary');
  let onCommand: ((command: WorkerCommand) => void) | null = null;
  let gateway: WorkerGateway | null = null;
  let scrapes: GroupScrapes | null = null;
  let received: (start: StartMessage) => void = () => {};
  const startMessage = new Promise<StartMessage>((resolve) => {
    received = resolve;
  });
  process.on('message', (message: unknown, handle: unknown) => {
    if (!isToWorker(message)) return;
    switch (message.type) {
      case 'paia-sip2:start':
        received(message);
        return;
      case 'paia-sip2:ping':
        send({ type: 'paia-sip2:pong', beat: message.beat });
        return;
      case 'paia-sip2:connection':
        // Node drops a connection message whose socket did not arrive; the primary notices (hand-out.ts).
        if (!(handle instanceof Socket)) return;
        // Said before anything is read from it: until then the primary may hand it to another worker if this one dies.
        send({ type: 'paia-sip2:took', id: message.id });
        // The primary hands connections only to a worker that said it is ready, which it does once the gateway runs.
        if (gateway) gateway.accept(handle);
        else handle.destroy();
        return;
      case 'paia-sip2:share-metrics':
        shareMetrics(gateway, message.gather);
        return;
      case 'paia-sip2:group-metrics':
        scrapes?.answered(message);
        return;
      default:
        // Commands before announce() cannot come: the primary sends them only to workers that said they are ready.
        onCommand?.(message);
    }
  });
  send({ type: 'paia-sip2:hello' });

  let timer: NodeJS.Timeout | undefined;
  const start = await Promise.race([
    startMessage,
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), CONFIG_WAIT_MS);
    }),
  ]).finally(() => clearTimeout(timer));
  if (start === null) {
    const reason = `no configuration from the primary process within ${CONFIG_WAIT_MS / 1000} s`;
    send({ type: 'paia-sip2:failed', reason });
    throw new Error(reason);
  }

  const logger = gatewayLogger(start.config).child({ worker: start.worker });
  let running: WorkerGateway;
  try {
    running = await startWorkerGateway(start.config, logger, {
      url: start.url,
      sharedSimulator: start.sharedSimulator,
    });
  } catch (error) {
    send({ type: 'paia-sip2:failed', reason: (error as Error).message });
    throw error;
  }
  gateway = running;
  if (running.metrics) {
    scrapes = new GroupScrapes({ send, timeoutMs: start.config.metrics.workerTimeoutMs });
    const group = scrapes;
    running.metrics.joinGroup(start.worker, () => group.gather());
  }
  return {
    gateway: {
      url: running.url,
      baseUrl: running.baseUrl,
      shutdownTimeoutMs: running.shutdownTimeoutMs,
      demo: running.demo,
      reloadTls: () => running.reloadTls(),
      forceStop: (reason) => running.forceStop(reason),
      stop(timeoutMs) {
        // A signal of the worker's own comes before the primary hears of it: no new connections for a draining worker.
        send({ type: 'paia-sip2:draining' });
        return running.stop(timeoutMs);
      },
    },
    logger,
    announce(listener) {
      onCommand = listener;
      // The primary prints the listening line once every worker is ready: what was logged before comes first.
      writeHeldLines();
      send({ type: 'paia-sip2:ready' });
    },
  };
}
