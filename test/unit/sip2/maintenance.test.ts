import { describe, expect, it } from 'vitest';
import {
  isTimeZone,
  type MaintenanceWindow,
  maintenanceAt,
  maintenancePause,
  minutesOf,
  WEEKDAYS,
} from '../../../src/sip2/maintenance.js';

const EVERY_DAY = [...WEEKDAYS];
const nightly = (timeZone: string, from = '02:00', to = '02:30'): MaintenanceWindow => ({
  days: EVERY_DAY,
  from,
  to,
  timeZone,
});

describe('maintenanceAt', () => {
  it('is inside a Europe/Berlin window at 02:10 local time in winter (UTC+1), until 02:30 local', () => {
    const state = maintenanceAt(new Date('2026-01-15T01:10:00Z'), [nightly('Europe/Berlin')]);
    expect(state?.until.toISOString()).toBe('2026-01-15T01:30:00.000Z');
    expect(state?.untilLocal).toBe('02:30');
    expect(state?.timeZone).toBe('Europe/Berlin');
  });

  it('follows the zone into summer time (UTC+2): the same window is an hour earlier in UTC', () => {
    expect(maintenanceAt(new Date('2026-07-15T00:10:00Z'), [nightly('Europe/Berlin')])?.until.toISOString()).toBe(
      '2026-07-15T00:30:00.000Z',
    );
    // 01:10 UTC is 03:10 in Berlin in July: outside.
    expect(maintenanceAt(new Date('2026-07-15T01:10:00Z'), [nightly('Europe/Berlin')])).toBeNull();
  });

  it('is outside just before the start and at the end, inside at the start', () => {
    const windows = [nightly('UTC')];
    expect(maintenanceAt(new Date('2026-03-02T01:59:59Z'), windows)).toBeNull();
    expect(maintenanceAt(new Date('2026-03-02T02:00:00Z'), windows)).not.toBeNull();
    expect(maintenanceAt(new Date('2026-03-02T02:30:00Z'), windows)).toBeNull();
  });

  it("counts the day in the window's zone: Sunday 23:30 in New York is Monday in UTC", () => {
    const windows: MaintenanceWindow[] = [{ days: ['sun'], from: '23:00', to: '23:59', timeZone: 'America/New_York' }];
    // 2026-03-02 is a Monday; 04:30 UTC is Sunday 23:30 EST.
    expect(maintenanceAt(new Date('2026-03-02T04:30:00Z'), windows)?.untilLocal).toBe('23:59');
    // Monday 23:30 in New York: not a day of the window.
    expect(maintenanceAt(new Date('2026-03-03T04:30:00Z'), windows)).toBeNull();
  });

  it('runs across midnight: a Saturday 23:00-01:00 window holds on Sunday at 00:30, not on Saturday at 00:30', () => {
    const windows: MaintenanceWindow[] = [{ days: ['sat'], from: '23:00', to: '01:00', timeZone: 'UTC' }];
    // 2026-03-07 is a Saturday.
    expect(maintenanceAt(new Date('2026-03-07T23:30:00Z'), windows)?.until.toISOString()).toBe(
      '2026-03-08T01:00:00.000Z',
    );
    expect(maintenanceAt(new Date('2026-03-08T00:30:00Z'), windows)?.until.toISOString()).toBe(
      '2026-03-08T01:00:00.000Z',
    );
    expect(maintenanceAt(new Date('2026-03-07T00:30:00Z'), windows)).toBeNull();
  });

  it('ends a window that closes on the night clocks go forward at the real instant (Berlin, 2026-03-29, 01:30-03:30)', () => {
    // 02:00 local does not exist that night: 01:30 CET = 00:30 UTC, 03:30 CEST = 01:30 UTC (one hour of real time).
    const windows = [nightly('Europe/Berlin', '01:30', '03:30')];
    const state = maintenanceAt(new Date('2026-03-29T00:45:00Z'), windows);
    expect(state?.until.toISOString()).toBe('2026-03-29T01:30:00.000Z');
    expect(state?.untilLocal).toBe('03:30');
  });

  it('ends a window on the night clocks go back at the first 03:00 after it (Berlin, 2026-10-25, 01:00-03:00)', () => {
    // 01:00 CEST = 23:00 UTC the day before; 03:00 CET = 02:00 UTC.
    const windows = [nightly('Europe/Berlin', '01:00', '03:00')];
    expect(maintenanceAt(new Date('2026-10-25T01:30:00Z'), windows)?.until.toISOString()).toBe(
      '2026-10-25T02:00:00.000Z',
    );
  });

  it('follows adjoining windows to the end of the last one', () => {
    const windows: MaintenanceWindow[] = [nightly('UTC', '02:00', '02:30'), nightly('UTC', '02:30', '03:15')];
    expect(maintenanceAt(new Date('2026-03-02T02:10:00Z'), windows)?.until.toISOString()).toBe(
      '2026-03-02T03:15:00.000Z',
    );
  });

  it('is never inside with no windows', () => {
    expect(maintenanceAt(new Date(), [])).toBeNull();
  });
});

describe('minutesOf and isTimeZone', () => {
  it('read 24-hour HH:MM only', () => {
    expect(minutesOf('00:00')).toBe(0);
    expect(minutesOf('23:59')).toBe(23 * 60 + 59);
    expect(minutesOf('24:00')).toBeNull();
    expect(minutesOf('2:00')).toBeNull();
    expect(minutesOf('02:00 ')).toBeNull();
  });

  it('know IANA zones and refuse others', () => {
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Europe/Berlni')).toBe(false);
  });
});

describe('maintenancePause', () => {
  it('is undefined without windows, so the pool never reads the clock for them', () => {
    expect(maintenancePause([])).toBeUndefined();
  });

  it('describes the end in the window zone, and never answers inside a window past its end', () => {
    const pause = maintenancePause([nightly('Europe/Berlin')])!;
    expect(pause(new Date('2026-01-15T01:29:59.500Z'))).toEqual({
      until: new Date('2026-01-15T01:30:00.000Z'),
      description: 'until 02:30 (Europe/Berlin)',
    });
    // Half a second later, within the reuse second, the window has ended.
    expect(pause(new Date('2026-01-15T01:30:00.000Z'))).toBeNull();
    expect(pause(new Date('2026-01-15T00:59:59.000Z'))).toBeNull();
    // Asked again in the next second: the window has begun.
    expect(pause(new Date('2026-01-15T01:00:00.000Z'))?.description).toBe('until 02:30 (Europe/Berlin)');
  });
});
