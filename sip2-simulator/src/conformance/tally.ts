import type { Logger } from 'pino';
import { keptClientText } from '../kept-text.js';
import type { Deviation, RuleId } from './rules.js';

/**
 * The conformance report: deviations counted per rule and per connection,
 * the last offending messages of each connection (passwords masked), and one
 * log line per rule for the life of the process, so a client that breaks a
 * rule on every message does not flood the log.
 */

export interface OffendingMessage {
  /** When it arrived (ISO 8601). */
  readonly at: string;
  /** The message as received, terminator included, as kept-text.ts keeps it (passwords and AZ masked, bounded). */
  readonly text: string;
  readonly deviations: readonly Deviation[];
}

export interface ConformanceSnapshot {
  totals: Partial<Record<RuleId, number>>;
  connections: Array<{
    connection: number;
    counts: Partial<Record<RuleId, number>>;
    messages: OffendingMessage[];
  }>;
}

export const TALLY_DEFAULTS = {
  /** Offending messages kept per connection, the latest. */
  messagesPerConnection: 20,
  /** Connections kept, the latest (closed ones too: a tester reads the report after the run). */
  connections: 100,
};

interface ConnectionTally {
  counts: Map<RuleId, number>;
  messages: OffendingMessage[];
}

export class ConformanceTally {
  private readonly totals = new Map<RuleId, number>();
  private readonly connections = new Map<number, ConnectionTally>();
  private readonly logged = new Set<RuleId>();

  constructor(
    private readonly logger: Logger,
    private readonly limits: typeof TALLY_DEFAULTS = TALLY_DEFAULTS,
  ) {}

  record(connection: number, text: string, deviations: readonly Deviation[], now = new Date()): void {
    if (deviations.length === 0) return;
    const tally = this.connectionTally(connection);
    for (const deviation of deviations) {
      this.totals.set(deviation.rule, (this.totals.get(deviation.rule) ?? 0) + 1);
      tally.counts.set(deviation.rule, (tally.counts.get(deviation.rule) ?? 0) + 1);
      if (!this.logged.has(deviation.rule)) {
        this.logged.add(deviation.rule);
        // Rule and section only: a detail or the message could carry what a password field held.
        this.logger.warn(
          { conn: connection, rule: deviation.rule, section: deviation.section },
          `a client message breaks the SIP2 rules (${deviation.rule}); logged once per rule, GET /conformance lists each`,
        );
      }
    }
    tally.messages.push({ at: now.toISOString(), text: keptClientText(text), deviations });
    if (tally.messages.length > this.limits.messagesPerConnection) tally.messages.shift();
  }

  snapshot(): ConformanceSnapshot {
    return {
      totals: Object.fromEntries(this.totals),
      connections: [...this.connections].map(([connection, tally]) => ({
        connection,
        counts: Object.fromEntries(tally.counts),
        messages: [...tally.messages],
      })),
    };
  }

  reset(): void {
    this.totals.clear();
    this.connections.clear();
  }

  private connectionTally(connection: number): ConnectionTally {
    let tally = this.connections.get(connection);
    if (tally === undefined) {
      tally = { counts: new Map(), messages: [] };
      this.connections.set(connection, tally);
      // Maps iterate in insertion order: the first key is the oldest connection.
      if (this.connections.size > this.limits.connections)
        this.connections.delete(this.connections.keys().next().value!);
    }
    return tally;
  }
}
