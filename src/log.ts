import { type Logger, type LoggerOptions, pino } from 'pino';
import { prettyLine } from './log-pretty.js';
import { perTurn } from './log-turn.js';

export { writeHeldLines } from './log-turn.js';

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
  // Asynchronous stdout: under load, the lines of one turn of the event loop, and those logged while a
  // write is under way, go out together in one system call instead of one each (log-turn.ts); when idle,
  // each line goes out within its turn. pino flushes stdout on exit, log-turn.ts the turn's lines.
  // If stdout stops taking lines (a stuck pipe), lines beyond 16 MiB waiting are dropped rather than filling memory.
  if (options.format !== 'pretty')
    return pino(
      config,
      options.destination ?? perTurn(pino.destination({ dest: 1, sync: false, maxLength: 16 * 1024 * 1024 })),
    );
  // Pretty lines are made from the JSON pino wrote, after redaction: what is masked in JSON is masked here.
  // Synchronous: a terminal reads few lines, and none is lost when the process exits.
  const destination = options.destination ?? pino.destination({ dest: 1, sync: true });
  return pino(config, { write: (line: string) => destination.write(prettyLine(line)) });
}

export type { Logger };
