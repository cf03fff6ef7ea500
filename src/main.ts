/**
 * paia-sip2 command line.
 *
 *   paia-sip2 [serve] [--config FILE]     run the gateway
 *   paia-sip2 check-config [--config FILE] validate the configuration and exit
 *
 * With no `sip2.host` configured, `serve` embeds the SIP2 simulator with the
 * demo library, so `npm start` works on a fresh clone.
 */
import { parseArgs } from 'node:util';
import { ConfigError, type Config, describeConfig, loadConfigWithWarnings } from './config/index.js';
import { createLogger } from './log.js';
import { startGateway } from './server.js';

const USAGE = `usage: paia-sip2 [serve|check-config] [--config FILE]

  serve          run the gateway (default)
  check-config   validate the configuration, print a summary and exit

  --config FILE  configuration file (default: config/default.yaml)
  -h, --help     this text

Every setting can be overridden by an environment variable named after its
path: sip2.host -> PAIA_SIP2_HOST, http.port -> PAIA_HTTP_PORT (PORT works too).`;

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { config: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
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
  if (!['serve', 'check-config'].includes(command) || parsed.positionals.length > 1) {
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

  const logger = createLogger({ level: config.log.level, name: 'paia-sip2' });
  let gateway;
  try {
    gateway = await startGateway(config, logger);
  } catch (error) {
    process.stderr.write(`paia-sip2 could not start: ${(error as Error).message}\n`);
    return 1;
  }
  process.stdout.write(`paia-sip2 listening on ${gateway.url}\n`);
  if (gateway.demo) {
    process.stdout.write(
      `demo mode: embedded SIP2 simulator on ${gateway.demo.sip2}, demo patron alice / alice-pass\n` +
        `try: curl -s -X POST ${gateway.url}${config.http.basePath}/auth/login -H 'Content-Type: application/json' ` +
        `-d '{"username":"alice","password":"alice-pass","grant_type":"password"}'\n`,
    );
  }

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        logger.warn({ signal }, 'second signal: exiting now');
        resolve(1);
        return;
      }
      stopping = true;
      logger.info({ signal }, 'shutting down');
      gateway.stop().then(
        () => resolve(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`paia-sip2 failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
