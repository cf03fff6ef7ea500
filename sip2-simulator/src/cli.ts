import { parseArgs } from 'node:util';
import {
  BUILTIN_DIALECTS,
  CHARSETS,
  type Charset,
  isCharset,
  MESSAGE_SPECS,
  RESPONSE_CODE,
} from '../../src/sip2/index.js';
import { DATA_FIELDS } from './data.js';
import { FINE_FORMATS, PRESETS, ProfileError, parseProfile } from './profiles.js';
import { SUPPORTED_MESSAGES_BX } from './responses.js';
import { DEFAULT_IDLE_TIMEOUT_S, DEFAULT_PORT, type SimulatorOptions } from './server.js';

/** Command-line parsing for main.ts (kept apart so tests can import it without starting anything). */

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** "  93 Login -> 94 Login Response" for every request the simulator answers, from the codec's catalogue. */
const MESSAGE_LINES = Object.entries(RESPONSE_CODE)
  .sort(([a], [b]) => a.localeCompare(b))
  .map(
    ([request, response]) =>
      `  ${request} ${MESSAGE_SPECS[request as keyof typeof RESPONSE_CODE].name} -> ${response} ${MESSAGE_SPECS[response].name}`,
  )
  .join('\n');

/** Every field of the data file, by record, from its schema. */
const DATA_LINES = Object.entries(DATA_FIELDS)
  .map(([record, fields]) => `  ${record}: ${fields.join(', ')}`)
  .join('\n');

/** The help; `command` is how the user runs the simulator (`npm run simulator --`, `paia-sip2 simulator`). */
export const usage = (command: string) => `usage: ${command} [options]

A SIP2 server (ACS) with sample data, dialects and fault injection.

  --host HOST             SIP2 listen address (default 127.0.0.1)
  --port N                SIP2 port (default ${DEFAULT_PORT}; 0 = ephemeral)
  --dialect NAME          ${BUILTIN_DIALECTS.join(' | ')} (default generic)
  --data FILE             library data file (default sip2-simulator/data/demo.json)
  --charset NAME          ${CHARSETS.join(' | ')} (default: the dialect's)
  --latency-ms N          delay before every response (default 0)
  --jitter-ms N           plus a random 0..N ms (default 0)
  --idle-timeout-s N      close connections idle this long (default ${DEFAULT_IDLE_TIMEOUT_S}; 0 = never)
  --error-detection on|off  AY/AZ sequence numbers and checksums (default on)
  --strict-checksums      with error detection on, answer 96 to a request without
                          AY/AZ instead of answering it (default: answer it)
  --strict                answer 96 to a message that breaks a conformance rule instead of
                          answering it (default: answer it; GET /conformance lists deviations)
  --control-port N        HTTP control endpoint on 127.0.0.1 (0 = ephemeral; off unless given);
                          its page http://127.0.0.1:N/ shows the traffic and the switches
  --profile TERMS         server profile, repeatable, comma-separated, applied left to right:
                            presets (one real deployment each): ${Object.keys(PRESETS).join(', ')}
                            workers=N         at most N sessions served at once; more wait unanswered
                            idle-timeout=S    close a session silent for S s (0 = never; wins over --idle-timeout-s)
                            fines=FORMAT      AV texts and BV/BH as sent by: ${FINE_FORMATS.join(', ')}
                            bv=on|off bh=on|off  send the fee amount / currency whatever the format does
                            pad=on|off        pad list pages with empty entries up to BQ
                            sc-status-first=on|off  after login only 99 is accepted, else the connection closes
                            ids=exact|folded  patron identifiers (AA) matched exactly, or ignoring case,
                                              accents and trailing spaces as Koha's database does
                            unavailable-holds=pending|closed  CD lists the pending holds, or only closed
                                              ones (FOLIO: none here, while AS lists every hold)
                            none              no profile (the default)
  --log-level LEVEL       ${LOG_LEVELS.join(' | ')} (default info; debug traces SIP2, passwords masked)
  -h, --help              this text

Messages (3M SIP2 2.00; BX ${SUPPORTED_MESSAGES_BX}):
${MESSAGE_LINES}
  97 Request ACS Resend -> the last response again
  any other command id -> 96 Request SC Resend

Data file fields (JSON; sip2-simulator/README.md explains each):
${DATA_LINES}
`;

export class UsageError extends Error {}

/** Turns argv into simulator options; throws UsageError on anything wrong. */
export function parseCli(argv: string[]): SimulatorOptions | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        dialect: { type: 'string' },
        data: { type: 'string' },
        charset: { type: 'string' },
        'latency-ms': { type: 'string' },
        'jitter-ms': { type: 'string' },
        'idle-timeout-s': { type: 'string' },
        'error-detection': { type: 'string' },
        'strict-checksums': { type: 'boolean' },
        strict: { type: 'boolean' },
        'control-port': { type: 'string' },
        'log-level': { type: 'string' },
        profile: { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return 'help';
  const options: SimulatorOptions = {};
  if (values.host !== undefined) {
    if (values.host.trim() === '') throw new UsageError('--host must not be empty');
    options.host = values.host;
  }
  if (values.port !== undefined) options.port = integer('--port', values.port, 0, 65535);
  if (values.dialect !== undefined) {
    if (!(BUILTIN_DIALECTS as readonly string[]).includes(values.dialect)) {
      throw new UsageError(`--dialect must be one of ${BUILTIN_DIALECTS.join(', ')} (got "${values.dialect}")`);
    }
    options.dialect = values.dialect;
  }
  if (values.data !== undefined) options.dataFile = values.data;
  if (values.charset !== undefined) {
    if (!isCharset(values.charset))
      throw new UsageError(`--charset must be one of ${CHARSETS.join(', ')} (got "${values.charset}")`);
    options.charset = values.charset as Charset;
  }
  if (values['latency-ms'] !== undefined) options.latencyMs = integer('--latency-ms', values['latency-ms'], 0, 600_000);
  if (values['jitter-ms'] !== undefined) options.jitterMs = integer('--jitter-ms', values['jitter-ms'], 0, 600_000);
  if (values['idle-timeout-s'] !== undefined) {
    const text = values['idle-timeout-s'];
    const n = Number(text);
    if (!/^\d+(\.\d+)?$/.test(text) || !(n >= 0) || n > 86_400)
      throw new UsageError(`--idle-timeout-s must be a number of seconds 0-86400 (got "${text}")`);
    options.idleTimeoutS = n;
  }
  if (values['error-detection'] !== undefined) {
    const v = values['error-detection'];
    if (v !== 'on' && v !== 'off') throw new UsageError(`--error-detection must be on or off (got "${v}")`);
    options.errorDetection = v === 'on';
  }
  if (values['strict-checksums']) {
    if (options.errorDetection === false) throw new UsageError('--strict-checksums needs --error-detection on');
    options.strictChecksums = true;
  }
  if (values.strict) options.strictConformance = true;
  if (values['control-port'] !== undefined)
    options.controlPort = integer('--control-port', values['control-port'], 0, 65535);
  if (values.profile !== undefined) {
    try {
      options.profile = parseProfile(values.profile);
    } catch (error) {
      if (!(error instanceof ProfileError)) throw error;
      throw new UsageError(`--profile: ${error.message}`);
    }
  }
  if (values['log-level'] !== undefined) {
    if (!LOG_LEVELS.includes(values['log-level']))
      throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);
    options.logLevel = values['log-level'];
  }
  return options;
}

function integer(flag: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new UsageError(`${flag} must be a whole number ${min}-${max} (got "${text}")`);
  }
  return Number(text);
}
