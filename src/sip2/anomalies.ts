import type { Logger } from 'pino';

/**
 * Protocol anomalies an ILS commits without breaking the exchange: frames
 * with a stale sequence number, frames nobody asked for, unreadable answers
 * that a 97 repaired. One of them is worth a warning; an ILS that sends them
 * by the thousand must not fill the disk (one once wrote 112 MB of warnings
 * in 40 s). So each kind is logged at most once per interval: the first one
 * at once, the rest as one line with their count when the interval ends.
 */
export type AnomalyKind = 'stale-sequence' | 'unsolicited-frame' | 'unreadable-response' | 'resend-requested';

export const ANOMALY_KINDS: readonly AnomalyKind[] = [
  'stale-sequence',
  'unsolicited-frame',
  'unreadable-response',
  'resend-requested',
];

const MESSAGES: Record<AnomalyKind, string> = {
  'stale-sequence': 'SIP2 response with a stale sequence number discarded',
  'unsolicited-frame': 'unsolicited SIP2 message from the ILS ignored',
  'unreadable-response': 'unreadable SIP2 response from the ILS, asked for it again (97)',
  'resend-requested': 'the ILS could not read a message and asked for it again (96)',
};

export interface AnomalyLogOptions {
  logger?: Logger | undefined;
  /** At most one log line per kind per this many milliseconds; default 60 s. */
  intervalMs?: number;
  /** Called for every anomaly (metrics count them all). Must not throw. */
  onAnomaly?: ((kind: AnomalyKind) => void) | undefined;
}

interface Window {
  /** Occurrences not logged yet in this window. */
  suppressed: number;
  timer: NodeJS.Timeout;
}

export class AnomalyLog {
  private readonly windows = new Map<AnomalyKind, Window>();
  private readonly intervalMs: number;

  constructor(private readonly options: AnomalyLogOptions = {}) {
    this.intervalMs = options.intervalMs ?? 60_000;
  }

  report(kind: AnomalyKind, details: Record<string, unknown> = {}): void {
    this.options.onAnomaly?.(kind);
    const window = this.windows.get(kind);
    if (window) {
      window.suppressed++;
      return;
    }
    this.options.logger?.warn({ anomaly: kind, ...details }, MESSAGES[kind]);
    this.open(kind);
  }

  /** Logs what is still suppressed and stops the timers (the pool is going away). */
  flush(): void {
    for (const [kind, window] of this.windows) {
      clearTimeout(window.timer);
      this.summarise(kind, window);
    }
    this.windows.clear();
  }

  private open(kind: AnomalyKind): void {
    const window: Window = {
      suppressed: 0,
      timer: setTimeout(() => {
        this.windows.delete(kind);
        // A kind that went on happening opens the next window with its summary, so a steady stream
        // gives one line per interval, never one per frame.
        if (window.suppressed > 0) {
          this.summarise(kind, window);
          this.open(kind);
        }
      }, this.intervalMs),
    };
    window.timer.unref();
    this.windows.set(kind, window);
  }

  private summarise(kind: AnomalyKind, window: Window): void {
    if (window.suppressed === 0) return;
    this.options.logger?.warn(
      { anomaly: kind, count: window.suppressed, intervalSeconds: this.intervalMs / 1000 },
      `${MESSAGES[kind]}: ${window.suppressed} more in the last ${this.intervalMs / 1000} s`,
    );
  }
}
