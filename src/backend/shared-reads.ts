import type { RequestMessage, ResponseOf } from '../sip2/index.js';
import { SharedCalls } from './shared-calls.js';
import type { CallOptions } from './types.js';

/** One SIP2 round trip through the pool. */
type Send = <M extends RequestMessage>(message: M, options?: CallOptions) => Promise<ResponseOf<M['code']>>;

/**
 * Identical SIP2 reads in flight at the same time share one round trip: two
 * calls reading the same patron's items at once send one set of 63s, two
 * calls asking about the same item one 17 (with or without the item cache).
 *
 * Shared: a 63 without a patron password (same patron, same list, same
 * page: the same message but for its transaction date) and a 17 (same
 * item). Never shared: writes (29, 15, 35 ...) and everything else, which
 * must reach the ILS once per call; and a 63 carrying a patron password,
 * which is a credential check: the ILS may count every attempt (lockouts,
 * logs), and one login must never be answered by another's check.
 */
export class SharedReads {
  private readonly calls = new SharedCalls<string, unknown>();

  /** `send(message, options)`, or the identical read in flight. */
  send<M extends RequestMessage>(message: M, options: CallOptions, send: Send): Promise<ResponseOf<M['code']>> {
    const key = shareKey(message);
    if (key === null) return send(message, options);
    return this.calls.run(key, (signal) => send(message, { ...options, signal }), options.signal) as Promise<
      ResponseOf<M['code']>
    >;
  }
}

/**
 * What makes two reads the same read: every field but the transaction date
 * (the message builder writes them in one order); null for a message that
 * must not be shared.
 */
export function shareKey(message: RequestMessage): string | null {
  if (message.code === '63' ? message.patronPassword !== undefined : message.code !== '17') return null;
  const identity: Record<string, unknown> = { ...message };
  delete identity.transactionDate;
  return JSON.stringify(identity);
}
