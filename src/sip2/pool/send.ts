import type { Logger } from 'pino';
import type { CancelSignal } from '../../cancel-signal.js';
import { IlsProtocolError, IlsUnavailable, Sip2Error } from '../errors.js';
import { NON_IDEMPOTENT, type RequestMessage, type ResponseOf } from '../spec.js';
import type { ExecuteOptions, PoolConnection } from './types.js';

export interface SendContext {
  /** The pool's execute: runs the exchange on a connection of its own. */
  execute: <T>(fn: (connection: PoolConnection) => Promise<T>, options: ExecuteOptions) => Promise<T>;
  /** Whether a second try may go out now (not while the pool closes or the circuit is open). */
  mayRetry: () => boolean;
  logger: Logger | undefined;
}

/**
 * What sending one message means: a read that failed because its connection
 * turned out dead or confused is tried once more on another connection; a
 * renew, hold, renew-all or fee payment never is. A write whose caller
 * stopped waiting while it was at the ILS still finishes, and its outcome is
 * logged.
 */
export function sendOnce<M extends RequestMessage>(
  message: M,
  signal: CancelSignal | undefined,
  context: SendContext,
): Promise<ResponseOf<M['code']>> {
  const write = NON_IDEMPOTENT.has(message.code);
  const execution: ExecuteOptions = write
    ? { signal, onAbandonedOutcome: (outcome) => logAbandonedWrite(context.logger, message.code, outcome) }
    : { signal };
  const exchange = (connection: PoolConnection) => connection.send(message);
  // A promise chain rather than an async function: one promise less per request, on every request.
  return context.execute(exchange, execution).catch((error: unknown) => {
    // Only a read that went out on a connection that then proved dead is worth a second try;
    // a failed connect or a rejected terminal login would only fail again.
    const retryable =
      !write && (error instanceof IlsUnavailable || error instanceof IlsProtocolError) && error.requestSent;
    // With the circuit now open, this request's own failure says more than "try again later".
    if (!retryable || !context.mayRetry()) throw error;
    context.logger?.info({ code: message.code, reason: error.reason }, 'retrying a SIP2 read on another connection');
    return context.execute(exchange, execution);
  });
}

function logAbandonedWrite(log: Logger | undefined, code: string, outcome: PromiseSettledResult<unknown>): void {
  if (outcome.status === 'fulfilled') {
    const response = outcome.value as { code?: string; ok?: unknown };
    log?.warn(
      { code, response: response.code, ok: response.ok },
      `a SIP2 ${code} finished after its caller had stopped waiting`,
    );
  } else {
    const error = outcome.reason;
    log?.warn(
      {
        code,
        reason: error instanceof Sip2Error ? error.code : undefined,
        message: error instanceof Error ? error.message : String(error),
      },
      `a SIP2 ${code} failed after its caller had stopped waiting`,
    );
  }
}
