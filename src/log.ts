import { type Logger, type LoggerOptions, pino } from 'pino';

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
  'access_token',
  '*.access_token',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
];

export function createLogger(
  options: { level?: string; name?: string; destination?: pino.DestinationStream } = {},
): Logger {
  const config: LoggerOptions = {
    level: options.level ?? 'info',
    name: options.name,
    redact: { paths: REDACTED_PATHS, censor: '***' },
  };
  // Asynchronous stdout: under load, lines written while a write is under way go out together in one
  // system call instead of one each; when idle, each line goes out at once. pino flushes it on exit.
  // If stdout stops taking lines (a stuck pipe), lines beyond 16 MiB waiting are dropped rather than filling memory.
  return pino(config, options.destination ?? pino.destination({ dest: 1, sync: false, maxLength: 16 * 1024 * 1024 }));
}

export type { Logger };
