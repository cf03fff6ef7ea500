/**
 * paia-sip2 command line.
 *
 *   paia-sip2 [serve] [--config FILE]     run the gateway
 *   paia-sip2 check-config [--config FILE] validate the configuration and exit
 *   paia-sip2 doctor [--config FILE] [--patron NAME] [--quick]  check the ILS connection
 *
 * With no `sip2.host` configured, `serve` embeds the SIP2 simulator with the
 * demo library, so `npm start` works on a fresh clone.
 */
import { constants as osConstants } from 'node:os';
import { parseArgs } from 'node:util';
import { ConfigError, type Config, describeConfig, loadConfigWithWarnings } from './config/index.js';
import { createLogger, type Logger } from './log.js';
import { type RunningGateway, startGateway } from './server.js';

const USAGE = `usage: paia-sip2 [serve|check-config|doctor] [--config FILE] [--patron NAME] [--quick]

  serve          run the gateway (default)
  check-config   validate the configuration, print a summary and exit
  doctor         connect to the ILS, log in, show its capabilities, round-trip
                 times and how many sessions it serves at once; with --patron,
                 what each PAIA method would return, whether the fine items fit
                 the dialect and the names the charset (the patron's password is
                 read from PAIA_DOCTOR_PASSWORD or stdin); last, it keeps one
                 session idle for sip2.pool.keepaliveSeconds + 1 s (21 s by
                 default) to see whether the ILS closes idle sessions first

  --config FILE  configuration file (default: config/default.yaml)
  --patron NAME  test patron for doctor
  --quick        doctor: skip the idle-session wait
  -h, --help     this text

Every setting can be overridden by an environment variable named after its
path: sip2.host -> PAIA_SIP2_HOST, http.port -> PAIA_HTTP_PORT (PORT works too).`;

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { config: { type: 'string' }, patron: { type: 'string' }, quick: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (parsed.values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const command = parsed.positionals[0] ?? 'serve';
  if (!['serve', 'check-config', 'doctor'].includes(command) || parsed.positionals.length > 1) {
    process.stderr.write(`unknown command "${parsed.positionals.join(' ')}"\n\n${USAGE}\n`);
    return 2;
  }

  let config: Config;
  let warnings: string[];
  try {
    ({ config, warnings } = loadConfigWithWarnings({ file: parsed.values.config, env: process.env }));
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  }
  for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);

  if (command === 'check-config') {
    process.stdout.write(`configuration is valid\n${JSON.stringify(describeConfig(config), null, 2)}\n`);
    return 0;
  }
  if (command === 'doctor') {
    const { runDoctor } = await import('./cli/doctor/index.js');
    return runDoctor(config, { patron: parsed.values.patron, quick: parsed.values.quick, out: process.stdout, err: process.stderr });
  }

  const logger = createLogger({ level: config.log.level, name: 'paia-sip2' });
  let gateway;
  try {
    gateway = await startGateway(config, logger);
  } catch (error) {
    process.stderr.write(`paia-sip2 could not start: ${(error as Error).message}\n`);
    return 1;
  }
  // Signal handlers first: whoever waits for the listening line may signal right after reading it.
  const exitCode = untilSignal(gateway, logger, config.http.shutdownTimeoutMs);
  process.stdout.write(`paia-sip2 listening on ${gateway.url}\n`);
  if (gateway.demo) {
    process.stdout.write(
      `demo mode: embedded SIP2 simulator on ${gateway.demo.sip2}, demo patron alice / alice-pass\n` +
        `try: curl -s -X POST ${gateway.url}${config.http.basePath}/auth/login -H 'Content-Type: application/json' ` +
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
function untilSignal(gateway: RunningGateway, logger: Logger, shutdownTimeoutMs: number): Promise<number> {
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
      logger.info({ signal, timeoutMs: shutdownTimeoutMs }, 'shutdown: signal received; draining (a second signal exits at once)');
      gateway.stop(shutdownTimeoutMs).then(
        (outcome) => {
          if (outcome === 'graceful') {
            logger.info({ exitCode: 0 }, 'shutdown: complete');
            resolve(0);
          } else {
            logger.error({ exitCode: 1, timeoutMs: shutdownTimeoutMs }, 'shutdown: not done within http.shutdownTimeoutMs; exiting anyway');
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

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`paia-sip2 failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
