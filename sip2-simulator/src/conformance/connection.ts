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

  /** checksumsRequired: the ACS demands AY/AZ on every message (--strict-checksums). */
  constructor(checksumsRequired: boolean) {
    this.checksums = checksumsRequired;
  }

  /** The deviations of a message as received (terminator included); the session says what it knows. */
  inspect(raw: Buffer, session: { loggedIn: boolean; outstanding: boolean }, charset: Charset): Deviation[] {
    const { deviations, trailer } = inspectMessage(
      raw,
      { ...session, previous: this.previous, checksums: this.checksums },
      charset,
    );
    if (trailer) {
      this.previous = trailer;
      this.checksums = true;
    }
    return deviations;
  }
}
