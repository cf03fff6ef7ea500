import { constants as osConstants } from 'node:os';
import { type Config, ConfigError, type LoadOptions, reloadConfig } from '../config/index.js';
import type { WorkerCommand } from '../gateway/cluster/messages.js';
import { startWorkers } from '../gateway/cluster/primary.js';
import { startWorker } from '../gateway/cluster/worker.js';
import { gatewayLogger, type Serving, startGateway } from '../gateway/index.js';
import { type Logger, writeHeldLines } from '../log.js';
import { missingNodeFlags } from '../node-flags.js';

/**
 * `paia-sip2 serve`: starts the gateway, prints where it listens (and, in
 * demo mode, how to log in), and stops it on a signal. Resolves with the
 * process's exit code. With http.workers above 1 this process is the
 * primary of that many worker processes (src/gateway/cluster/primary.ts),
 * and serveWorker() is what each worker runs.
 */
export async function serve(config: Config, loadOptions: LoadOptions = {}): Promise<number> {
  const logger = gatewayLogger(config);
  let gateway: Serving;
  try {
    gateway = config.http.workers > 1 ? await startWorkers(config, logger) : await startGateway(config, logger);
  } catch (error) {
    process.stderr.write(`paia-sip2 could not start: ${(error as Error).message}\n`);
    return 1;
  }
  // Signal handlers first: whoever waits for the listening line may signal right after reading it.
  const { exitCode } = untilSignal(gateway, logger, librariesReload(gateway, logger, loadOptions));
  const missing = missingNodeFlags();
  if (missing.length > 0) {
    logger.info(
      { missing },
      'node runs without some of the gateway\'s memory options (npm start, the container and the systemd unit pass them): after a burst of requests memory stays higher until V8 trims it (docs/operations.md, "Memory")',
    );
  }
  // Whoever reads the listening line takes start-up as done: what was logged before it comes first.
  writeHeldLines();
  process.stdout.write(`paia-sip2 listening on ${gateway.baseUrl}\n`);
  if (gateway.demo) {
    process.stdout.write(
      `demo mode: embedded SIP2 simulator on ${gateway.demo.sip2}, demo patron alice / alice-pass\n` +
        `try: curl -s -X POST ${gateway.baseUrl}/auth/login -H 'Content-Type: application/json' ` +
        `-d '{"username":"alice","password":"alice-pass","grant_type":"password"}'\n`,
    );
  }
  return exitCode;
}

/**
 * SIGHUP with a libraries section (issue 29): the configuration is read as at
 * start (the same file, environment and flags) and handed to the gateway,
 * which starts, replaces and removes libraries (gateway/libraries.ts). A file
 * that cannot be read, parsed or validated outside a library's entry changes
 * nothing; the reason is logged. Null without a libraries section.
 */
function librariesReload(gateway: Serving, logger: Logger, loadOptions: LoadOptions): (() => void) | null {
  const apply = gateway.reloadLibraries?.bind(gateway);
  if (apply === undefined) return null;
  const log = logger.child({ component: 'reload' });
  return () => {
    let change: ReturnType<typeof reloadConfig>;
    try {
      change = reloadConfig(loadOptions);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      log.error(
        { file: error.file, problems: error.problems },
        `reload: the configuration cannot be used, nothing changed: ${error.problems.map((problem) => `${problem.path}: ${problem.message}`).join('; ')}`,
      );
      return;
    }
    for (const warning of change.warnings) log.warn(`reload: ${warning}`);
    void apply(change);
  };
}

/**
 * One worker of `serve --workers N`: its gateway under the same signals as a
 * single process, and under the primary's commands. It prints nothing on
 * stdout but its log: the primary prints the listening line once every
 * worker is ready.
 */
export async function serveWorker(): Promise<number> {
  let worker;
  try {
    worker = await startWorker();
  } catch (error) {
    process.stderr.write(`paia-sip2 worker could not start: ${(error as Error).message}\n`);
    return 1;
  }
  const shutdown = untilSignal(worker.gateway, worker.logger);
  worker.announce(shutdown.command);
  return shutdown.exitCode;
}

/**
 * Shutdown on SIGTERM or SIGINT, each phase logged:
 *
 * - first signal: /readyz answers 503 at once, the listener closes (new
 *   connections are refused), idle keep-alive connections are closed,
 *   requests in flight finish, the SIP2 pool drains and closes, the embedded
 *   simulator stops: exit 0;
 * - not done within http.shutdownTimeoutMs: what is left is dropped: exit 1;
 * - a second signal during the drain: everything is dropped at once: exit
 *   128 + the signal's number (130 for SIGINT, 143 for SIGTERM), as a shell
 *   reports a process killed by that signal.
 *
 * SIGHUP re-reads http.tls.cert and http.tls.key for new connections (a
 * failure is logged and the old certificate kept); with a libraries section
 * it also reads the configuration again and applies its libraries
 * (`reloadLibraries`); it does not stop the gateway.
 *
 * The primary of several workers closes its listener first (a stop) and
 * passes each of these on to every worker, and exits as they did: 0 when
 * all drained, 1 when one had to drop work.
 * A worker also takes the primary's commands (`command`): "stop" drains as
 * a first signal does but is no signal itself, because the signal that made
 * the primary send it often reached the worker too (Ctrl-C reaches the
 * whole process group, systemd signals every process of the service); only
 * a second signal of its own, or "force", cuts the worker's drain short.
 */
function untilSignal(
  gateway: Serving,
  logger: Logger,
  reloadLibraries: (() => void) | null = null,
): { exitCode: Promise<number>; command(command: WorkerCommand): void } {
  const { shutdownTimeoutMs } = gateway;
  let exit: (code: number) => void = () => {};
  const exitCode = new Promise<number>((resolve) => {
    exit = resolve;
  });
  let stopping = false;
  let signals = 0;

  const drain = (why: string, signal?: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, timeoutMs: shutdownTimeoutMs }, `shutdown: ${why}; draining (a second signal exits at once)`);
    gateway.stop(shutdownTimeoutMs).then(
      (outcome) => {
        if (outcome === 'graceful') {
          logger.info({ exitCode: 0 }, 'shutdown: complete');
          exit(0);
        } else {
          logger.error(
            { exitCode: 1, timeoutMs: shutdownTimeoutMs },
            'shutdown: not done within http.shutdownTimeoutMs; exiting anyway',
          );
          exit(1);
        }
      },
      (error: unknown) => {
        logger.error({ err: error, exitCode: 1 }, 'shutdown failed');
        gateway.forceStop('shutdown failed');
        exit(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals === 1) {
      drain('signal received', signal);
      return;
    }
    const code = 128 + (osConstants.signals[signal] ?? 0);
    logger.warn({ signal, exitCode: code }, 'shutdown: second signal; exiting now');
    gateway.forceStop(`second signal (${signal})`);
    exit(code);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // SIGHUP: reload the HTTPS certificate and key (after a renewal) without dropping connections.
  process.on('SIGHUP', () => {
    if (stopping) return;
    gateway.reloadTls();
    reloadLibraries?.();
  });

  return {
    exitCode,
    command(command) {
      if (command.type === 'paia-sip2:stop') drain('the primary passed a signal on');
      else if (command.type === 'paia-sip2:force') {
        logger.warn(
          { reason: command.reason, exitCode: 1 },
          'shutdown: the primary says to drop everything; exiting now',
        );
        gateway.forceStop(command.reason);
        exit(1);
      } else if (!stopping) gateway.reloadTls();
    },
  };
}
