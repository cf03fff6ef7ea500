import type { Deviation } from './conformance/rules.js';
import { keptClientText, keptServerText } from './kept-text.js';
import { type WireFields, wireFields } from './wire-fields.js';

/**
 * What went over each client connection, for the traffic page (GET /traffic
 * and GET / of the control endpoint): per connection its id, peer, when it
 * opened (and closed), the terminal user it logged in as, and its last
 * messages both ways. Bounded, as a simulator a tester leaves running for
 * days must be: the last `messagesPerConnection` messages of each connection
 * and the last `closedKept` closed connections. Texts are stored with every
 * password field masked and bounded in length (kept-text.ts), never in clear, and the
 * login password is not kept at all.
 */

interface TrafficMessage {
  /** ISO time. */
  readonly at: string;
  readonly direction: 'in' | 'out';
  /** The wire text without its terminator, passwords masked. */
  readonly text: string;
  readonly deviations: Deviation[];
}

interface ConnectionTraffic {
  readonly id: number;
  readonly remote: string;
  readonly openedAt: string;
  closedAt: string | null;
  /** The terminal user (CN) of the last accepted login. */
  user: string | null;
  /** Messages older than the kept ones. */
  dropped: number;
  readonly messages: TrafficMessage[];
}

/** A message as GET /traffic shows it: its text, and the same decoded field by field. */
type ShownMessage = TrafficMessage & { readonly decoded: WireFields | null };

interface TrafficLimits {
  /** Messages kept per connection, both directions together. */
  readonly messagesPerConnection: number;
  /** Closed connections kept, the newest. */
  readonly closedKept: number;
}

const TRAFFIC_DEFAULTS: TrafficLimits = { messagesPerConnection: 50, closedKept: 20 };

export class TrafficRecorder {
  private readonly open = new Map<number, ConnectionTraffic>();
  private readonly closed: ConnectionTraffic[] = [];
  private readonly limits: TrafficLimits;

  constructor(
    limits: Partial<TrafficLimits> = {},
    private readonly now: () => Date = () => new Date(),
  ) {
    this.limits = { ...TRAFFIC_DEFAULTS, ...limits };
  }

  opened(id: number, remote: string): void {
    this.open.set(id, {
      id,
      remote,
      openedAt: this.now().toISOString(),
      closedAt: null,
      user: null,
      dropped: 0,
      messages: [],
    });
  }

  loggedIn(id: number, user: string): void {
    const connection = this.open.get(id);
    if (connection) connection.user = user;
  }

  /** Records one message; `text` is the wire text as decoded, masked here. */
  record(id: number, direction: 'in' | 'out', text: string, deviations: Deviation[] = []): void {
    const connection = this.open.get(id);
    if (!connection) return;
    connection.messages.push({
      at: this.now().toISOString(),
      direction,
      text: (direction === 'in' ? keptClientText : keptServerText)(text.replace(/[\r\n]+$/, '')),
      deviations: [...deviations],
    });
    if (connection.messages.length > this.limits.messagesPerConnection) {
      connection.messages.shift();
      connection.dropped += 1;
    }
  }

  closedConnection(id: number): void {
    const connection = this.open.get(id);
    if (!connection) return;
    this.open.delete(id);
    connection.closedAt = this.now().toISOString();
    this.closed.push(connection);
    if (this.closed.length > this.limits.closedKept) this.closed.shift();
  }

  /** Live connections first, then the closed ones kept, newest first; each message decoded by the 3M layouts. */
  snapshot(): { connections: Array<Omit<ConnectionTraffic, 'messages'> & { messages: ShownMessage[] }> } {
    const shown = (connection: ConnectionTraffic) => ({
      ...connection,
      messages: connection.messages.map((message) => ({ ...message, decoded: wireFields(message.text) })),
    });
    return { connections: [...this.open.values(), ...[...this.closed].reverse()].map(shown) };
  }
}
