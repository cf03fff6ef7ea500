/**
 * Scheduled maintenance windows of the ILS (sip2.maintenance): many library
 * systems go down every night for backups. Pure: whether a moment lies in a
 * window, and until when, is computed from a Date and the windows alone, in
 * each window's own IANA time zone (so a window at 02:00 Europe/Berlin stays
 * at 02:00 local time across daylight-saving changes). The gateway asks it
 * with the current time; the pool pauses, /readyz and the metric follow.
 */

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
type Weekday = (typeof WEEKDAYS)[number];

export interface MaintenanceWindow {
  /** The days the window starts on, in its time zone. */
  readonly days: readonly Weekday[];
  /** Local start time, "HH:MM" (24 h). */
  readonly from: string;
  /** Local end time, "HH:MM"; earlier than `from`: the window ends on the next day. */
  readonly to: string;
  /** IANA time zone name, e.g. "Europe/Berlin" or "UTC". */
  readonly timeZone: string;
}

export interface MaintenanceState {
  /** When the maintenance ends (the end of the window, or of a window adjoining it). */
  readonly until: Date;
  /** The end as local "HH:MM" in the window's time zone, for messages. */
  readonly untilLocal: string;
  readonly timeZone: string;
}

const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$/;
const DAY_SECONDS = 24 * 60 * 60;
/** How long maintenancePause reuses an answer. */
const CACHE_MS = 1000;
/** Windows that adjoin or overlap are followed this many times at most (a list that covers the whole week has no end). */
const MAX_CHAINED = 16;

/** Minutes after midnight of "HH:MM"; null when it is not a 24-hour time. */
export function minutesOf(text: string): number | null {
  const match = HH_MM.exec(text);
  return match ? Number(match[1]) * 60 + Number(match[2]) : null;
}

/** Whether Intl knows the time zone (Node ships the full IANA database). */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

interface LocalTime {
  /** Calendar date in the zone, as a UTC midnight timestamp (for date arithmetic only). */
  dateMs: number;
  weekday: number;
  /** Seconds after local midnight. */
  seconds: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

function localTime(instantMs: number, timeZone: string): LocalTime {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(new Date(instantMs))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const dateMs = Date.UTC(parts.year!, parts.month! - 1, parts.day!);
  return {
    dateMs,
    weekday: new Date(dateMs).getUTCDay(),
    seconds: parts.hour! * 3600 + parts.minute! * 60 + parts.second!,
  };
}

/**
 * The instant at which the zone's clock shows `minutes` after midnight on the
 * local date `dateMs`. A time the clock skips (the spring-forward gap) maps to
 * the instant the clock jumps past it.
 */
function instantOf(dateMs: number, minutes: number, timeZone: string): number {
  const wall = dateMs + minutes * 60_000;
  // The zone's offset at a guess, then again at the corrected guess (it may differ across a change).
  let guess = wall;
  for (let i = 0; i < 3; i++) {
    const local = localTime(guess, timeZone);
    const offset = local.dateMs + local.seconds * 1000 - guess;
    const next = wall - offset;
    if (next === guess) break;
    guess = next;
  }
  return guess;
}

/** The end (epoch ms) of the window `window` if `instantMs` lies in it, else null. */
function endOf(window: MaintenanceWindow, instantMs: number): number | null {
  const from = minutesOf(window.from);
  const to = minutesOf(window.to);
  if (from === null || to === null || from === to) return null;
  const local = localTime(instantMs, window.timeZone);
  const day = (offset: number) => WEEKDAYS[(local.weekday + offset + 7) % 7]!;
  const startsOn = (weekday: Weekday) => window.days.includes(weekday);
  const now = local.seconds;
  if (from < to) {
    if (startsOn(day(0)) && now >= from * 60 && now < to * 60) return instantOf(local.dateMs, to, window.timeZone);
    return null;
  }
  // Across midnight: begun today (ends tomorrow), or begun yesterday (ends today).
  if (startsOn(day(0)) && now >= from * 60) return instantOf(local.dateMs + DAY_SECONDS * 1000, to, window.timeZone);
  if (startsOn(day(-1)) && now < to * 60) return instantOf(local.dateMs, to, window.timeZone);
  return null;
}

function formatLocal(instantMs: number, timeZone: string): string {
  const { seconds } = localTime(instantMs, timeZone);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(Math.floor(seconds / 3600))}:${pad(Math.floor(seconds / 60) % 60)}`;
}

/** Whether `now` lies in a maintenance window, and until when (following windows that adjoin or overlap it); null outside. */
export function maintenanceAt(now: Date, windows: readonly MaintenanceWindow[]): MaintenanceState | null {
  let until: number | null = null;
  let zone = '';
  let at = now.getTime();
  for (let step = 0; step < MAX_CHAINED; step++) {
    let latest: { end: number; timeZone: string } | null = null;
    for (const window of windows) {
      const end = endOf(window, at);
      if (end !== null && end > at && (latest === null || end > latest.end))
        latest = { end, timeZone: window.timeZone };
    }
    if (latest === null) break;
    until = latest.end;
    zone = latest.timeZone;
    at = latest.end;
  }
  return until === null ? null : { until: new Date(until), untilLocal: formatLocal(until, zone), timeZone: zone };
}

/**
 * The pool's pause (PoolOptions.pause) for these windows; undefined without
 * any, so that a pool with no windows does not look at the clock at all.
 */
export function maintenancePause(
  windows: readonly MaintenanceWindow[],
): ((now: Date) => { until: Date; description: string } | null) | undefined {
  if (windows.length === 0) return undefined;
  // The pool asks several times per request, and reading the clock in each zone is not free (figures: bench/README.md). An
  // answer is reused for up to a second (a window begins at most that late); one inside a window, never past its end.
  let last: { at: number; pause: { until: Date; description: string } | null } | null = null;
  return (now) => {
    const at = now.getTime();
    const fresh =
      last !== null &&
      at >= last.at &&
      at - last.at < CACHE_MS &&
      (last.pause === null || at < last.pause.until.getTime());
    if (!fresh) {
      const state = maintenanceAt(now, windows);
      last = {
        at,
        pause: state && { until: state.until, description: `until ${state.untilLocal} (${state.timeZone})` },
      };
    }
    return last!.pause;
  };
}
