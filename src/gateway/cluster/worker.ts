import type { Logger } from '../../log.js';
import { gatewayLogger, type RunningGateway, startGateway } from '../index.js';
import { type FromWorker, isToWorker, type ToWorker, type WorkerCommand } from './messages.js';

/**
 * One worker process of `serve --workers N`: it asks the primary for the
 * configuration (the primary loaded and validated it once), starts the
 * gateway, whose listener node:cluster shares with the other workers, and
 * tells the primary that it listens, or why it could not start.
 */

/** How long a worker waits for its configuration after saying hello; the primary answers at once. */
const CONFIG_WAIT_MS = 10_000;

export interface StartedWorker {
  readonly gateway: RunningGateway;
  readonly logger: Logger;
  /**
   * Hands the primary's commands (stop, force, reload-tls) to `onCommand`
   * from now on and tells the primary that this worker listens. Call it once
   * the signal handlers are in place: the primary may stop everything as
   * soon as every worker listens.
   */
  announce(onCommand: (command: WorkerCommand) => void): void;
}

function send(message: FromWorker): void {
  process.send?.(message);
}

type StartMessage = Extract<ToWorker, { type: 'paia-sip2:start' }>;

/** Starts this worker's gateway; rejects (after telling the primary why) when it cannot. */
export async function startWorker(): Promise<StartedWorker> {
  if (!process.send) throw new Error('not a worker process: started without an IPC channel to a primary');
  let onCommand: ((command: WorkerCommand) => void) | null = null;
  let received: (start: StartMessage) => void = () => {};
  const startMessage = new Promise<StartMessage>((resolve) => {
    received = resolve;
  });
  process.on('message', (message: unknown) => {
    if (!isToWorker(message)) return;
    if (message.type === 'paia-sip2:start') received(message);
    // Commands before announce() cannot come: the primary sends them only to workers that said they listen.
    else onCommand?.(message);
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
  let gateway: RunningGateway;
  try {
    gateway = await startGateway(start.config, logger, { sharedSimulator: start.sharedSimulator });
  } catch (error) {
    send({ type: 'paia-sip2:failed', reason: (error as Error).message });
    throw error;
  }
  return {
    gateway,
    logger,
    announce(listener) {
      onCommand = listener;
      send({ type: 'paia-sip2:listening', url: gateway.url, baseUrl: gateway.baseUrl });
    },
  };
}
