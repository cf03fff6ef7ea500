import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '../../log.js';
import { listen, urlOf } from '../http-server.js';

/**
 * The primary's listener and how its connections reach the workers. The
 * primary accepts every connection itself, reads nothing from it
 * (pauseOnConnect), and sends its socket over the IPC channel to a worker
 * that can take it now, in turn. node:cluster's own round robin is not used:
 * it closes its copy of a socket only when the worker confirms it and
 * forgets the socket when the worker dies first (that connection stayed open
 * and unanswered for as long as the primary ran), and it hands connections
 * to every worker that listens, a stopped one too.
 *
 * Here the primary keeps its copy (keepOpen) until the worker says it took
 * the connection, which it does before it reads from it. A worker has at
 * most one connection sent and not yet taken, so Node's child_process never
 * queues a socket for it (a queued or unconfirmed socket of a worker that
 * dies stays open in the sender). When a worker dies with a connection not
 * taken, the kernel has dropped the copy that was on its way, the primary's
 * copy is the only one and unread, and another worker gets it. A worker
 * that stops answering gets at most that one connection before it counts as
 * busy.
 */

/**
 * How long a connection waits in line in the primary for a worker that can
 * take it (none can: all died at once, or the others are stopped too); then
 * it is closed and the client may try again. About what a replacement
 * worker takes to start; a client is better told than kept waiting longer.
 */
const WAIT_FOR_WORKER_MS = 5000;
/**
 * A connection a worker has not taken this long after it was sent, while
 * the worker answers its heartbeat, never reached it (its Node refused the
 * handle, e.g. out of file descriptors) and goes to another worker. A worker
 * that does not answer is killed by then (heartbeat.ts) and its connection
 * goes on that way.
 */
const LOST_AFTER_MS = 5000;
/** How often the waiting connections and the ones sent are checked against the two bounds above. */
const CHECK_EVERY_MS = 500;

/** A worker as the hand-out sees it. */
export interface Outlet {
  /** The worker's number (1..N). */
  readonly number: number;
  /** Whether it takes new connections at `now`: ready, answering its heartbeat, not draining. */
  canTake(now: number): boolean;
  /**
   * Sends a connection; `sent` is called later (never within send) with
   * null once it is on the channel, or with why not: then it never left.
   */
  send(id: number, socket: Socket, sent: (error: Error | null) => void): void;
}

/**
 * Round robin: the first index after `after` (wrapping around; `after`
 * itself last, -1 to start at 0) whose worker can take a connection; null
 * when none can.
 */
export function nextInTurn(count: number, after: number, canTake: (index: number) => boolean): number | null {
  for (let step = 1; step <= count; step += 1) {
    const index = (((after + step) % count) + count) % count;
    if (canTake(index)) return index;
  }
  return null;
}

interface Waiting {
  readonly id: number;
  readonly socket: Socket;
  /** When it joined the line: accepted, or back from a worker that did not take it. */
  readonly since: number;
}

interface Sent extends Waiting {
  /** When it was sent to the worker. */
  readonly at: number;
}

export class HandOut {
  private server: Server | null = null;
  /** Accepted connections no worker has been sent yet, oldest first. */
  private readonly line: Waiting[] = [];
  /** Per worker number: the connection sent and not taken yet. */
  private readonly sent = new Map<number, Sent>();
  /** Workers whose channel refused a connection: they get none until they are gone. */
  private readonly refused = new Set<number>();
  private turn = -1;
  private ids = 0;
  private checker: NodeJS.Timeout | undefined;
  private closing: { done: Promise<void>; resolve(): void } | null = null;
  private readonly log: Logger;

  constructor(
    private readonly options: {
      /** The workers, in a fixed order (their slots). */
      outlets: () => readonly Outlet[];
      /** Connections waiting in the primary at most; one more is closed at once. */
      maxWaiting: number;
      logger: Logger;
    },
  ) {
    this.log = options.logger;
  }

  /** Listens on host:port; resolves with the URL clients reach it at. */
  async listen(host: string, port: number, tls: boolean): Promise<string> {
    // noDelay as node:http's own listener sets it; the option is the socket's, so the worker's copy has it too.
    const server = createServer({ pauseOnConnect: true, noDelay: true }, (socket) => this.arrive(socket));
    this.server = server;
    const address = await listen(server, host, port);
    // After listen: an accept that fails (out of file descriptors) must not end the primary and every worker with it.
    server.on('error', (error: Error) => this.log.error({ error: error.message }, 'listener error'));
    this.checker = setInterval(() => this.check(Date.now()), CHECK_EVERY_MS);
    this.checker.unref();
    return urlOf(address, tls);
  }

  /** Hands out waiting connections to the workers that can take them now; call when a worker may have become able to. */
  pump(): void {
    const now = Date.now();
    const outlets = this.options.outlets();
    while (this.line.length > 0) {
      const index = nextInTurn(outlets.length, this.turn, (each) => this.free(outlets[each] as Outlet, now));
      if (index === null) break;
      this.turn = index;
      const outlet = outlets[index] as Outlet;
      const waiting = this.line.shift() as Waiting;
      this.sent.set(outlet.number, { ...waiting, at: now });
      outlet.send(waiting.id, waiting.socket, (error) => {
        if (error) this.notSent(outlet.number, waiting.id, error);
      });
    }
    this.settleClosing();
  }

  /** Worker `number` has connection `id`: the primary's copy goes (the worker's keeps the connection open). */
  taken(number: number, id: number): void {
    const sent = this.sent.get(number);
    if (sent?.id !== id) return;
    this.sent.delete(number);
    sent.socket.destroy();
    this.pump();
  }

  /** Worker `number` exited: a connection it had not taken goes to another worker. */
  gone(number: number): void {
    this.refused.delete(number);
    const sent = this.sent.get(number);
    if (sent) {
      this.sent.delete(number);
      this.requeue(sent);
      this.log.info(
        { worker: number, connection: sent.id },
        'a worker exited before taking a connection; handing it to another',
      );
    }
    this.pump();
  }

  /**
   * Stops accepting connections (new ones are refused); resolves once none
   * waits in the primary any more: each was sent to a worker or, after
   * WAIT_FOR_WORKER_MS, closed.
   */
  close(): Promise<void> {
    if (!this.closing) {
      let resolve: () => void = () => {};
      const done = new Promise<void>((settle) => {
        resolve = settle;
      });
      this.closing = { done, resolve };
      this.server?.close();
      this.pump();
    }
    return this.closing.done;
  }

  /** Closes the listener and every connection the primary still holds, at once. */
  destroy(): void {
    clearInterval(this.checker);
    for (const waiting of this.line.splice(0)) waiting.socket.destroy();
    for (const sent of this.sent.values()) sent.socket.destroy();
    this.sent.clear();
    void this.close();
  }

  private arrive(socket: Socket): void {
    // The primary's copy only waits: what happens on the connection is the worker's to see.
    socket.on('error', () => {});
    if (this.closing || this.line.length >= this.options.maxWaiting) {
      socket.destroy();
      return;
    }
    this.ids += 1;
    this.line.push({ id: this.ids, socket, since: Date.now() });
    this.pump();
  }

  /** A connection a worker did not take goes first in line, and waits its full time again. */
  private requeue(sent: Sent): void {
    this.line.unshift({ id: sent.id, socket: sent.socket, since: Date.now() });
  }

  private free(outlet: Outlet, now: number): boolean {
    return !this.sent.has(outlet.number) && !this.refused.has(outlet.number) && outlet.canTake(now);
  }

  /** The channel did not take the send: the connection never left, so the next worker gets it. */
  private notSent(number: number, id: number, error: Error): void {
    const sent = this.sent.get(number);
    if (sent?.id !== id) return;
    this.sent.delete(number);
    this.refused.add(number);
    this.requeue(sent);
    this.log.debug({ worker: number, error: error.message }, 'could not send a connection to a worker');
    this.pump();
  }

  private check(now: number): void {
    const outlets = this.options.outlets();
    for (const [number, sent] of this.sent) {
      const outlet = outlets.find((each) => each.number === number);
      if (now - sent.at <= LOST_AFTER_MS || !outlet?.canTake(now)) continue;
      this.sent.delete(number);
      this.requeue(sent);
      this.log.warn(
        { worker: number, connection: sent.id, waitedMs: now - sent.at },
        'a worker that answers its heartbeat never took a connection sent to it; handing it to another',
      );
    }
    const expired = this.line.filter((waiting) => now - waiting.since > WAIT_FOR_WORKER_MS);
    if (expired.length > 0) {
      for (const waiting of expired) {
        this.line.splice(this.line.indexOf(waiting), 1);
        waiting.socket.destroy();
      }
      this.log.warn(
        { closed: expired.length, waitedMs: WAIT_FOR_WORKER_MS },
        'no worker could take these connections in time; closed them',
      );
    }
    this.pump();
  }

  /** While closing: done once nothing waits; what no worker can take now or later (none is sent one) is closed. */
  private settleClosing(): void {
    if (!this.closing) return;
    const now = Date.now();
    const nobody = this.sent.size === 0 && !this.options.outlets().some((outlet) => this.free(outlet, now));
    if (nobody) for (const waiting of this.line.splice(0)) waiting.socket.destroy();
    if (this.line.length === 0) this.closing.resolve();
  }
}
