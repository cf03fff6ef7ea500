/**
 * The primary's check that a worker is alive: it sends each ready worker a
 * numbered ping every PING_INTERVAL_MS and the worker answers with the same
 * number. A worker whose answer is late (stopped, or its event loop blocked)
 * gets no new connections; one that stays silent is killed and replaced.
 *
 * The bounds are far above what a working worker takes (it answers within
 * milliseconds, also under load: a ping is one small message between two
 * requests) and low enough that a stopped worker holds few connections: it
 * gets none once its answer is LATE_MS late, and the one it may hold waits
 * until it is killed at DEAD_MS.
 */

/** How often a ready worker is pinged. */
export const PING_INTERVAL_MS = 1000;
/** A worker whose oldest unanswered ping is older than this gets no new connections until it answers. */
export const LATE_MS = 2000;
/** A worker whose oldest unanswered ping is older than this is killed (SIGKILL) and replaced. */
export const DEAD_MS = 5000;

/** One worker's pings and answers (pure: the caller passes the time). */
export class Heartbeat {
  /** The pings not answered yet, oldest first: their numbers and when they were sent. */
  private readonly unanswered: { beat: number; sentAt: number }[] = [];
  private beats = 0;

  /** Records a ping sent at `now`; returns its number, which the answer carries back. */
  ping(now: number): number {
    this.beats += 1;
    this.unanswered.push({ beat: this.beats, sentAt: now });
    return this.beats;
  }

  /** The answer to ping `beat`: that ping and every earlier one are answered (the channel keeps their order). */
  answered(beat: number): void {
    while (this.unanswered.length > 0 && (this.unanswered[0] as { beat: number }).beat <= beat) {
      this.unanswered.shift();
    }
  }

  /** How long the oldest unanswered ping has waited at `now`; 0 when every ping is answered. */
  lateMs(now: number): number {
    const oldest = this.unanswered[0];
    return oldest === undefined ? 0 : Math.max(0, now - oldest.sentAt);
  }
}
