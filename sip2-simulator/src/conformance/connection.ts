import type { Charset } from '../../../src/sip2/index.js';
import { inspectMessage, type Trailer } from './check.js';
import type { Deviation } from './rules.js';

/**
 * What the conformance check remembers of one connection between messages:
 * the last sound AY/AZ (the next AY must follow it) and whether the client
 * uses error detection (then every message must carry AZ).
 */
export class ConnectionConformance {
  private previous: Trailer | null = null;
  private checksums: boolean;
  /** The last message as received: its byte-for-byte repeat is a retransmission, not a second message. */
  private last: Buffer | null = null;

  /** checksumsRequired: the ACS demands AY/AZ on every message (--strict-checksums). */
  constructor(checksumsRequired: boolean) {
    this.checksums = checksumsRequired;
  }

  /** The deviations of a message as received (terminator included); the session says what it knows. */
  inspect(raw: Buffer, session: { loggedIn: boolean; outstanding: boolean }, charset: Charset): Deviation[] {
    // "If the timer expires without a response, the message is re-transmitted" (SC System Error Handling):
    // a repeat sent while the first waits for its answer is what the text asks for.
    const outstanding = session.outstanding && !(this.last?.equals(raw) ?? false);
    this.last = Buffer.from(raw);
    const { deviations, trailer } = inspectMessage(
      raw,
      { loggedIn: session.loggedIn, outstanding, previous: this.previous, checksums: this.checksums },
      charset,
    );
    if (trailer) {
      this.previous = trailer;
      this.checksums = true;
    }
    return deviations;
  }
}
