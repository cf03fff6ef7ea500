import type { Logger } from 'pino';
import { PoolRefused } from '../errors.js';
import type { PoolCore } from './core.js';
import type { PoolPause } from './types.js';

/** How often the pool looks whether a scheduled pause (a maintenance window) has begun or ended. */
const PAUSE_CHECK_MS = 1000;

export interface PauseOptions {
  /** The pool's `pause` option; undefined: the pool never pauses and never looks at the clock for it. */
  pause: ((now: Date) => PoolPause | null) | undefined;
  logger: Logger | undefined;
  /** Told when a pause begins (after waiting work was failed and idle sessions closed): no refill until it ends. */
  onBegin: () => void;
  /** Told when it ends: the pool fills again. */
  onEnd: () => void;
}

/**
 * Scheduled pauses of the ILS (maintenance windows). Asked on every request
 * (`now`); a timer (unref'd) notices a pause beginning, which fails the
 * waiting requests and closes the idle sessions (busy ones close as they
 * come back, see the pool's retireReason), and its end, which fills the pool
 * again.
 */
export class PauseWatch {
  readonly #options: PauseOptions;
  readonly #core: PoolCore;
  #timer: NodeJS.Timeout | null = null;
  /** The pause the last check found on (its start logged, idle sessions closed); null outside one. */
  #pausedUntil: PoolPause | null = null;

  constructor(options: PauseOptions, core: PoolCore) {
    this.#options = options;
    this.#core = core;
  }

  /** The pause on now; null outside one. */
  now(): PoolPause | null {
    return this.#options.pause?.(new Date(Date.now())) ?? null;
  }

  /** Starts watching, and looks once at once; nothing to do without pauses. */
  start(): void {
    if (!this.#options.pause) return;
    this.#timer = setInterval(() => this.#check(), PAUSE_CHECK_MS);
    this.#timer.unref();
    this.#check();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** Notices a pause beginning (waiting work fails, idle sessions close) or ending (the pool fills again). */
  #check(): void {
    if (this.#core.closing) return;
    const pause = this.now();
    const log = this.#options.logger;
    if (pause && !this.#pausedUntil) {
      this.#pausedUntil = pause;
      log?.info(
        { until: pause.until.toISOString() },
        `scheduled maintenance of the ILS ${pause.description}: no SIP2 connections until then; calls get 503`,
      );
      this.#options.onBegin();
      this.#core.waiters.failAll(pauseRejection(pause));
      this.#core.drainIdle((connection) => connection.close('scheduled maintenance of the ILS'));
    } else if (!pause && this.#pausedUntil) {
      this.#pausedUntil = null;
      log?.info('scheduled maintenance of the ILS is over: opening SIP2 connections again');
      this.#options.onEnd();
    }
  }
}

/** What a request is refused with during a pause: 503 with Retry-After at its end. */
export function pauseRejection(pause: PoolPause): PoolRefused {
  const seconds = Math.max(1, Math.ceil((pause.until.getTime() - Date.now()) / 1000));
  return new PoolRefused('maintenance', `the library system is in scheduled maintenance ${pause.description}`, seconds);
}
