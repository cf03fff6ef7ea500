import { type GatewayProcess, startGatewayProcess } from './gateway.js';

/**
 * A gateway of `serve --workers 2` (a primary and two workers) against a
 * SIP2 simulator, with its state in a real Redis (workers refuse the memory
 * store), and its JSON log lines: pino stamps each with its process's pid,
 * so they say which worker answered a request.
 */

/** Starts it; `env` adds settings or overrides these. Access-log lines at info. */
export function startWorkersGateway(options: {
  /** The SIP2 simulator's port; null: demo mode (the primary runs the embedded simulator). */
  sip2Port: number | null;
  redisUrl: string;
  /** Each gateway its own keys in the one Redis. */
  keyPrefix: string;
  env?: Record<string, string>;
}): Promise<GatewayProcess> {
  return startGatewayProcess({
    sip2Port: options.sip2Port,
    dialect: 'generic',
    args: ['--workers', '2'],
    env: {
      PAIA_LOG_LEVEL: 'info',
      PAIA_STATE_STORE: 'redis',
      PAIA_STATE_REDIS_URL: options.redisUrl,
      PAIA_STATE_REDIS_KEY_PREFIX: options.keyPrefix,
      ...options.env,
    },
  });
}

export interface LogLine {
  pid: number;
  msg: string;
  [field: string]: unknown;
}

/** The JSON log lines on the gateway's stdout (primary and workers write to the same stream). */
export function logLines(gateway: GatewayProcess): LogLine[] {
  return gateway
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}
