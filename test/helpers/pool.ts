import { sip2Sessions } from '../../src/sip2/connection.js';
import { type DialectName, loadDialect, terminatorOf } from '../../src/sip2/dialect.js';
import type { PoolOptions } from '../../src/sip2/index.js';

/** Pool settings for tests against a simulator on 127.0.0.1: the demo terminal account and short, test-sized bounds. */
export function testPoolOptions(
  port: number,
  dialectName: DialectName,
  overrides: Partial<PoolOptions> & { responseTimeoutMs?: number } = {},
): PoolOptions {
  const dialect = loadDialect(dialectName);
  const { responseTimeoutMs = 800, ...pool } = overrides;
  return {
    connect: sip2Sessions({
      host: '127.0.0.1',
      port,
      charset: dialect.charset,
      terminator: terminatorOf(dialect),
      errorDetection: true,
      loginUserId: 'paia',
      loginPassword: 'paia-secret',
      locationCode: 'MAIN',
      connectTimeoutMs: 2000,
      responseTimeoutMs,
      maxResends: 2,
    }),
    min: 1,
    max: 4,
    acquireTimeoutMs: 3000,
    maxWaiting: 100,
    keepaliveIntervalMs: 0,
    maxLifetimeMs: 0,
    backoff: { initialMs: 50, maxMs: 400 },
    ...pool,
  };
}
