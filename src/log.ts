import { type Logger, type LoggerOptions, pino } from 'pino';
import { prettyLine } from './log-pretty.js';
import { perTurn, streamLines } from './log-turn.js';

export { writeHeldLines, written } from './log-turn.js';

/** Log lines waiting for a stdout that does not take them (a reader that hangs) beyond this are dropped. */
const WAITING_LIMIT_BYTES = 16 * 1024 * 1024;

/**
 * Paths pino blanks out wherever they appear in a log object. Secrets must
 * never reach a log line: patron passwords, tokens, SIP2 terminal passwords.
 */
const REDACTED_PATHS = [
  'password',
  '*.password',
  'loginPassword',
  '*.loginPassword',
  'patronPassword',
  '*.patronPassword',
  'terminalPassword',
  '*.terminalPassword',
  'sentinelPassword',
  '*.sentinelPassword',
  'access_token',
  '*.access_token',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
];

/** log.format: JSON lines for machines, or one readable line per entry for a person at a terminal. */
export type LogFormat = 'json' | 'pretty';

export function createLogger(
  options: { level?: string; name?: string; format?: LogFormat; destination?: pino.DestinationStream } = {},
): Logger {
  const config: LoggerOptions = {
    level: options.level ?? 'info',
    name: options.name,
    redact: { paths: REDACTED_PATHS, censor: '***' },
    // "time":"2026-11-24T20:52:48.123Z" and "level":"warn": readable as they are, and what log shippers parse.
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  // Under load the lines of one turn of the event loop go out together in one system call instead of one
  // each; when idle, each line goes out within its turn (log-turn.ts). process.stdout writes a file
  // synchronously and a pipe or socket without blocking; the lines of the last turn are handed over on exit.
  if (options.format !== 'pretty')
    return pino(config, options.destination ?? perTurn(streamLines(process.stdout, WAITING_LIMIT_BYTES)));
  // Pretty lines are made from the JSON pino wrote, after redaction: what is masked in JSON is masked here.
  // Synchronous: a terminal reads few lines, and none is lost when the process exits.
  const destination = options.destination ?? pino.destination({ dest: 1, sync: true });
  return pino(config, { write: (line: string) => destination.write(prettyLine(line)) });
}

export type { Logger };
