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
  private readonly calls = new SharedCalls<unknown>();

  /**
   * `send(message, options)`, or the identical read in flight in the same
   * lane. Lanes keep callers that wait differently apart: DAIA's reads wait
   * for its share of the pool, and a patron's call must never wait behind
   * them, nor fail with their "too many DAIA requests".
   */
  send<M extends RequestMessage>(
    message: M,
    options: CallOptions,
    send: Send,
    lane: ReadLane = 'paia',
  ): Promise<ResponseOf<M['code']>> {
    const key = shareKey(message);
    if (key === null) return send(message, options);
    return this.calls.run(
      `${lane}${key}`,
      (signal) => send(message, { ...options, signal }),
      options.signal,
    ) as Promise<ResponseOf<M['code']>>;
  }

  /**
   * A write of `item` (29, 15) for `patron` is under way or just settled:
   * reads in flight about either began before it and may answer with the
   * state before it, so no later read may join them (in any lane). The
   * backend calls this when a write goes out and when its outcome is known;
   * the gateway when another instance reports a write. `anyPatron`: every
   * 63 in flight, for a write another instance reports by the patron's
   * digest only (a few 63s sent twice are the price, and writes are rare).
   */
  forget(subject: { item?: string | undefined; patron?: string | undefined; anyPatron?: boolean }): void {
    const marks: string[] = [];
    if (subject.item !== undefined) marks.push(subjectMark('17', subject.item));
    if (subject.patron !== undefined) marks.push(subjectMark('63', subject.patron));
    if (subject.anyPatron === true) marks.push(ANY_PATRON);
    if (marks.length > 0) this.calls.forgetWhere((key) => marks.some((mark) => key.includes(mark)));
  }
}

/** The lane of a shared read: PAIA calls, or DAIA's share of the pool. */
export type ReadLane = 'paia' | 'daia';

/** The part of a key that names what a read is about: the item of a 17, the patron of a 63. */
function subjectMark(code: '63' | '17', id: string): string {
  return `\n${code}:${jsonOf(id)}\n`;
}

/**
 * JSON.stringify(value), so that a line break in a key is only ever a separator; a string with nothing to
 * escape (a barcode, an institution id: nearly every value) is quoted without it, the same text for less
 * CPU (the key is built for every read).
 */
function jsonOf(value: unknown): string {
  return typeof value === 'string' && !needsEscape(value) ? `"${value}"` : JSON.stringify(value);
}

/** Whether JSON.stringify would escape a character of `text`: ", \\, a control character or a surrogate. */
function needsEscape(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return true;
  }
  return false;
}

/** What every 63's mark begins with. */
const ANY_PATRON = '\n63:';

/**
 * What makes two reads the same read: every field but the transaction date
 * (the message builder writes them in one order), after a mark naming the
 * item or patron it is about; null for a message that must not be shared.
 */
export function shareKey(message: RequestMessage): string | null {
  let mark: string;
  if (message.code === '63' && message.patronPassword === undefined) {
    mark = subjectMark('63', message.patronIdentifier);
  } else if (message.code === '17') {
    mark = subjectMark('17', message.itemIdentifier);
  } else {
    return null;
  }
  // Field by field rather than JSON of a copy without the date: this runs for every read (CPU profile 1.8%).
  let key = mark;
  const fields = message as unknown as Record<string, unknown>;
  for (const name in fields) {
    const value = fields[name];
    if (name !== 'transactionDate' && value !== undefined) key += `${name}=${jsonOf(value)}\n`;
  }
  return key;
}
