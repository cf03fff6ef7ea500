import { parseCli, USAGE, UsageError } from './cli.js';
import { type SimulatorOptions, startSimulator } from './server.js';

/** The sip2-simulator command: `npm run simulator -- --port 6001 --control-port 6002`. */

async function main(): Promise<void> {
  let options: SimulatorOptions | 'help';
  try {
    options = parseCli(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`sip2-simulator: ${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (options === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  // Signal handlers come before the banner: a parent that reads the banner and
  // signals at once must find them in place.
  let sim: Awaited<ReturnType<typeof startSimulator>> | undefined;
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`sip2-simulator: ${signal}, stopping\n`);
    const force = setTimeout(() => process.exit(0), 3000);
    force.unref();
    void (sim ? sim.stop() : Promise.resolve()).finally(() => process.exit(0));
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  try {
    sim = await startSimulator(options);
  } catch (error) {
    // Bad data file, dialect, or a port in use: a configuration problem, not a crash.
    process.stderr.write(`sip2-simulator: ${(error as Error).message}\n`);
    process.exit(2);
  }
  if (stopping) {
    await sim.stop();
    return;
  }
  process.stdout.write(`sip2-simulator listening on ${sim.host}:${sim.port}\n`);
  if (sim.controlPort !== undefined) process.stdout.write(`sip2-simulator control on 127.0.0.1:${sim.controlPort}\n`);
}

await main();
