import { parseCli, UsageError, usage } from './cli.js';
import { type SimulatorOptions, startSimulator } from './server.js';

/**
 * The simulator as a command: `npm run simulator -- ARGS` (main.ts) and
 * `paia-sip2 simulator ARGS` (the gateway's command line) both run this, so
 * the flags, the help, the banner, the exit codes and the signals are one.
 * `command` is how the user called it, for the usage line.
 *
 * Exit codes: 0 stopped by SIGTERM or SIGINT, or --help; 2 a bad flag, a data
 * file that does not validate, a port in use. It resolves once the simulator
 * runs (or with the exit code when it does not); it exits the process itself
 * when a signal stops it.
 */
export async function runSimulatorCommand(argv: string[], command: string): Promise<number | 'running'> {
  let options: SimulatorOptions | 'help';
  try {
    options = parseCli(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`sip2-simulator: ${error.message}\n\n${usage(command)}`);
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(usage(command));
    return 0;
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
    return 2;
  }
  if (stopping) {
    await sim.stop();
    return 0;
  }
  process.stdout.write(`sip2-simulator listening on ${sim.host}:${sim.port}\n`);
  if (sim.controlPort !== undefined) {
    process.stdout.write(`sip2-simulator control on 127.0.0.1:${sim.controlPort}\n`);
    process.stdout.write(`sip2-simulator traffic page: http://127.0.0.1:${sim.controlPort}/\n`);
  }
  return 'running';
}
