import { constants as osConstants } from 'node:os';
import type { Config } from '../config/index.js';
import { gatewayLogger, type RunningGateway, startGateway } from '../gateway/index.js';
import type { Logger } from '../log.js';

/**
 * `paia-sip2 serve`: starts the gateway, prints where it listens (and, in
 * demo mode, how to log in), and stops it on a signal. Resolves with the
 * process's exit code.
 */
export async function serve(config: Config): Promise<number> {
  const logger = gatewayLogger(config);
  let gateway;
  try {
    gateway = await startGateway(config, logger);
  } catch (error) {
    process.stderr.write(`paia-sip2 could not start: ${(error as Error).message}\n`);
    return 1;
  }
  // Signal handlers first: whoever waits for the listening line may signal right after reading it.
  const exitCode = untilSignal(gateway, logger);
  process.stdout.write(`paia-sip2 listening on ${gateway.url}\n`);
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
 * failure is logged and the old certificate kept); it does not stop the gateway.
 */
function untilSignal(gateway: RunningGateway, logger: Logger): Promise<number> {
  const { shutdownTimeoutMs } = gateway;
  return new Promise<number>((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        const code = 128 + (osConstants.signals[signal] ?? 0);
        logger.warn({ signal, exitCode: code }, 'shutdown: second signal; exiting now');
        gateway.forceStop(`second signal (${signal})`);
        resolve(code);
        return;
      }
      stopping = true;
      logger.info(
        { signal, timeoutMs: shutdownTimeoutMs },
        'shutdown: signal received; draining (a second signal exits at once)',
      );
      gateway.stop(shutdownTimeoutMs).then(
        (outcome) => {
          if (outcome === 'graceful') {
            logger.info({ exitCode: 0 }, 'shutdown: complete');
            resolve(0);
          } else {
            logger.error(
              { exitCode: 1, timeoutMs: shutdownTimeoutMs },
              'shutdown: not done within http.shutdownTimeoutMs; exiting anyway',
            );
            resolve(1);
          }
        },
        (error: unknown) => {
          logger.error({ err: error, exitCode: 1 }, 'shutdown failed');
          gateway.forceStop('shutdown failed');
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    // SIGHUP: reload the HTTPS certificate and key (after a renewal) without dropping connections.
    process.on('SIGHUP', () => {
      if (!stopping) gateway.reloadTls();
    });
  });
}
