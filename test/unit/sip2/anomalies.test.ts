import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type AnomalyKind, AnomalyLog } from '../../../src/sip2/anomalies.js';

function collecting() {
  const lines: Array<{ level: number; msg: string; anomaly?: string; count?: number }> = [];
  return { lines, logger: pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) }) };
}

beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] }));
afterEach(() => vi.useRealTimers());

describe('AnomalyLog', () => {
  it('logs a flood of one kind once at once and then once per interval with the count, and counts every one', () => {
    const { lines, logger } = collecting();
    const counted: AnomalyKind[] = [];
    const log = new AnomalyLog({ logger, intervalMs: 60_000, onAnomaly: (kind) => counted.push(kind) });
    for (let i = 0; i < 10_000; i++) log.report('stale-sequence', { conn: 1 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, anomaly: 'stale-sequence' });
    vi.advanceTimersByTime(60_000);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ anomaly: 'stale-sequence', count: 9_999 });
    expect(counted).toHaveLength(10_000);
  });

  it('keeps kinds apart and stays quiet in an interval without anomalies', () => {
    const { lines, logger } = collecting();
    const log = new AnomalyLog({ logger, intervalMs: 1000 });
    log.report('stale-sequence');
    log.report('unsolicited-frame');
    log.report('unsolicited-frame');
    expect(lines.map((line) => line.anomaly)).toEqual(['stale-sequence', 'unsolicited-frame']);
    vi.advanceTimersByTime(1000);
    expect(lines.map((line) => [line.anomaly, line.count])).toEqual([
      ['stale-sequence', undefined],
      ['unsolicited-frame', undefined],
      ['unsolicited-frame', 1],
    ]);
    vi.advanceTimersByTime(5000);
    expect(lines).toHaveLength(3);
    log.report('stale-sequence');
    expect(lines).toHaveLength(4);
  });

  it('flush() logs what is still suppressed', () => {
    const { lines, logger } = collecting();
    const log = new AnomalyLog({ logger, intervalMs: 60_000 });
    log.report('resend-requested');
    log.report('resend-requested');
    log.flush();
    expect(lines.at(-1)).toMatchObject({ anomaly: 'resend-requested', count: 1 });
  });
});
