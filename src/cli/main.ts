/**
 * paia-sip2 command line: reads the arguments, loads the configuration, and
 * hands it to the gateway (serve), describes it (check-config) or checks the
 * ILS as the gateway would use it (doctor).
 *
 *   paia-sip2 [serve] [--config FILE] [--workers N]  run the gateway (N worker processes)
 *   paia-sip2 check-config [--config FILE] validate the configuration and exit
 *   paia-sip2 doctor [--config FILE] [--library ID] [--patron NAME] [--quick]  check the ILS connection
 *   paia-sip2 simulator [simulator flags]  run the SIP2 simulator (sip2-simulator/src/command.ts)
 *
 * With no `sip2.host` configured, `serve` embeds the SIP2 simulator with the
 * demo library, so `npm start` works on a fresh clone. With `--workers N`
 * (http.workers) above 1 this process is the primary of N workers, which
 * node:cluster starts by running this same file again: those go straight to
 * serveWorker() and take their configuration from the primary.
 *
 * Exit codes: 0 done (serve: stopped cleanly); 1 the gateway could not start
 * or did not drain within http.shutdownTimeoutMs (serve), a check failed
 * (doctor); 2 a usage or configuration problem; 128 + the signal's number
 * when a second signal cut the drain short (serve.ts).
 */
import cluster from 'node:cluster';
import { parseArgs } from 'node:util';
import {
  type Config,
  ConfigError,
  configSettings,
  describeConfig,
  type LoadOptions,
  loadConfigWithWarnings,
  secretFileVariables,
} from '../config/index.js';
import { checkStateStore, type Sip2Setup, sip2Setup } from '../gateway/index.js';
import { writeHeldLines, written } from '../log.js';
import { VERSION } from '../version.js';
import { serve, serveWorker } from './serve.js';

/** How long an ending command waits for stdout to take what was written: a reader that hangs must not keep it alive. */
const EXIT_FLUSH_MS = 2000;

const USAGE = `usage: paia-sip2 [serve|check-config|doctor] [--config FILE] [--workers N] [--library ID] [--patron NAME] [--quick]
       paia-sip2 hash-secret < secret.txt
       paia-sip2 simulator [--port N] [--control-port N] ... (paia-sip2 simulator --help)
       paia-sip2 --version

  serve          run the gateway (default)
  check-config   validate the configuration, print a summary and exit
  doctor         connect to the ILS, log in, show its capabilities, round-trip
                 times and how many sessions it serves at once; with --patron,
                 what each PAIA method would return, whether the fine items fit
                 the dialect and the names the charset (the patron's password is
                 read from PAIA_DOCTOR_PASSWORD or stdin); last, it keeps one
                 session idle for sip2.pool.keepaliveMs + 1 s (21 s by
                 default) to see whether the ILS closes idle sessions first;
                 with a libraries section, each library in turn
  hash-secret    read a client secret from stdin and print its hash for
                 auth.clients[].secretHash
  simulator      run the SIP2 simulator (an ACS with sample data, profiles,
                 faults and a traffic page) with the flags of
                 \`npm run simulator\`; no configuration is read

  --config FILE  configuration file (default: the PAIA_CONFIG variable, else
                 config/default.yaml, the embedded demo)
  --workers N    serve: N worker processes on the one port (http.workers; more
                 than 1 needs state.store redis)
  --library ID   doctor: check this library of the libraries section only
  --patron NAME  test patron for doctor (with several libraries, with --library)
  --quick        doctor: skip the idle-session wait
  -V, --version  print the version and exit
  -h, --help     this text

Every setting can be overridden by an environment variable named after its
path: sip2.host -> PAIA_SIP2_HOST, http.port -> PAIA_HTTP_PORT (PORT works too).
A secret can be read from a file instead (container secrets):
${wrapped(secretFileVariables(), 80)}.`;

/** Names joined by ", ", broken into lines of at most `width` characters. */
function wrapped(names: readonly string[], width: number): string {
  const lines: string[] = [];
  for (const name of names) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + name.length + 2 <= width) lines[lines.length - 1] = `${last}, ${name}`;
    else lines.push(name);
  }
  return lines.join(',\n');
}

async function main(argv: string[]): Promise<number | 'running'> {
  if (cluster.isWorker) return serveWorker();
  // The simulator has flags of its own, so it takes the arguments before the gateway's parser sees them.
  if (argv[0] === 'simulator') {
    const { runSimulatorCommand } = await import('../../sip2-simulator/src/command.js');
    return runSimulatorCommand(argv.slice(1), 'paia-sip2 simulator');
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        config: { type: 'string' },
        workers: { type: 'string' },
        library: { type: 'string' },
        patron: { type: 'string' },
        quick: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'V' },
      },
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (parsed.values.version) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (parsed.values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const command = parsed.positionals[0] ?? 'serve';
  if (!['serve', 'check-config', 'doctor', 'hash-secret'].includes(command) || parsed.positionals.length > 1) {
    process.stderr.write(`unknown command "${parsed.positionals.join(' ')}"\n\n${USAGE}\n`);
    return 2;
  }
  if (command === 'hash-secret') {
    const { hashSecretCommand } = await import('./hash-secret.js');
    return hashSecretCommand(process.stdin, process.stdout, process.stderr);
  }

  let config: Config;
  let warnings: string[];
  const { workers } = parsed.values;
  const loadOptions: LoadOptions = {
    file: parsed.values.config,
    env: process.env,
    flags: workers === undefined ? [] : [{ path: 'http.workers', flag: '--workers', text: workers }],
  };
  try {
    ({ config, warnings } = loadConfigWithWarnings(loadOptions));
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
  const problem = librariesProblem(command, config);
  if (problem !== null) {
    process.stderr.write(`paia-sip2 ${command}: ${problem}\n`);
    return 2;
  }
  if (command === 'doctor') return doctor(config, parsed.values);

  // SIGHUP reads the configuration again as here (a libraries section: serve.ts).
  return serve(config, loadOptions);
}

/** `paia-sip2 doctor`: the ILS of the top level, or each library of the libraries section (or the one of --library). */
async function doctor(
  config: Config,
  flags: { library?: string | undefined; patron?: string | undefined; quick?: boolean | undefined },
): Promise<number> {
  const { librariesToCheck, runDoctor, runLibrariesDoctor } = await import('./doctor/index.js');
  const chosen = librariesToCheck(config.libraries, flags.library, flags.patron);
  if (!chosen.ok) {
    process.stderr.write(`paia-sip2 doctor: ${chosen.reason}\n`);
    return 2;
  }
  const options = {
    patron: flags.patron,
    quick: flags.quick,
    out: process.stdout,
    err: process.stderr,
    stateStore: () => checkStateStore(config),
    librarySettings: librarySettingPaths(),
  };
  if (chosen.libraries === null) {
    const setup = setupOf(config, null);
    return setup === null ? 2 : runDoctor(setup, options);
  }
  const libraries = [];
  for (const { id, config: own } of chosen.libraries) {
    const setup = setupOf(own, id);
    if (setup === null) return 2;
    libraries.push({ id, setup });
  }
  return runLibrariesDoctor(libraries, options);
}

/** The paths of the settings a library may give itself (sip2, paia, daia) and of their sections. */
function librarySettingPaths(): ReadonlySet<string> {
  return new Set(
    configSettings()
      .map(({ path }) => path.split('.'))
      .filter(([section]) => ['sip2', 'paia', 'daia'].includes(section ?? ''))
      .flatMap((parts) => parts.map((_, index) => parts.slice(0, index + 1).join('.'))),
  );
}

/** The SIP2 side the doctor checks; null when it cannot be built (a configuration problem, said on stderr). */
function setupOf(config: Config, library: string | null): Sip2Setup | null {
  try {
    return sip2Setup(config);
  } catch (error) {
    // A dialect or TLS file that does not load.
    process.stderr.write(
      `paia-sip2 doctor: ${library === null ? '' : `library ${library}: `}${(error as Error).message}\n`,
    );
    return null;
  }
}

/**
 * What of a libraries section (issue 29) `command` cannot do yet, as a
 * configuration problem (exit 2) rather than serving or checking one library
 * silently; null when nothing.
 */
function librariesProblem(command: string, config: Config): string | null {
  if (config.libraries === null) return null;
  const ids = config.libraries.map(({ id }) => id).join(', ');
  if (command === 'serve' && config.http.workers > 1)
    return `the configuration has a libraries section (${ids}), and several libraries are served by one process only yet: set http.workers to 1 (or leave out --workers), or serve without the libraries section.`;
  return null;
}

/**
 * Exits once stdout took what was written: as a pipe (journald, a container runtime, `| less`) it takes
 * writes asynchronously, and what it has not taken yet, the log's last lines included, would be lost by
 * exiting at once.
 */
async function exitWhenWritten(code: number): Promise<never> {
  writeHeldLines();
  await written(process.stdout, EXIT_FLUSH_MS);
  process.exit(code);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 'running') void exitWhenWritten(code);
  },
  (error: unknown) => {
    process.stderr.write(
      `paia-sip2 failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    void exitWhenWritten(1);
  },
);
