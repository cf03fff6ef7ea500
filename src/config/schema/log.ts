import { z } from 'zod';
import { must, section } from './validators.js';

/** log: level and format of the log. */

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const LOG_FORMATS = ['json', 'pretty'] as const;

export const logSection = section({
  /** Log level: fatal, error, warn, info, debug (traces SIP2, passwords masked), trace or silent. */
  level: z.enum(LOG_LEVELS, must(`must be one of ${LOG_LEVELS.join(', ')}`)).default('info'),
  /** json: one JSON object per line (for log shippers); pretty: one readable line per entry, for a person at a terminal. */
  format: z.enum(LOG_FORMATS, must(`must be one of ${LOG_FORMATS.join(', ')}`)).default('json'),
});
