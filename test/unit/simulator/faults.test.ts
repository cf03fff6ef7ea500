import { describe, expect, it } from 'vitest';
import { parseCli, UsageError, usage } from '../../../sip2-simulator/src/cli.js';
import { DATA_FIELDS } from '../../../sip2-simulator/src/data.js';
import { corruptChecksum, Faults, garbageBytes, parseFaultPatch } from '../../../sip2-simulator/src/faults.js';
import { decodeFrame, encodeMessage } from '../../../src/sip2/codec.js';
import { BUILTIN_DIALECTS } from '../../../src/sip2/dialect.js';
import { Sip2DecodeError } from '../../../src/sip2/errors.js';
import { FrameDecoder } from '../../../src/sip2/framer.js';
import { RESPONSE_CODE } from '../../../src/sip2/spec.js';

describe('Faults', () => {
  it('uses up counted faults one response at a time and keeps boolean ones', () => {
    const faults = new Faults();
    faults.apply({ hang: 2, garbage: true });
    expect([
      faults.takeReplyFault(),
      faults.takeReplyFault(),
      faults.takeReplyFault(),
      faults.takeReplyFault(),
    ]).toEqual(['hang', 'hang', 'garbage', 'garbage']);
    expect(faults.state.hang).toBe(false);
    faults.apply({ garbage: 0, corruptChecksums: 1 });
    expect(faults.state.garbage).toBe(false);
    expect(faults.takeReplyFault()).toBe('corruptChecksums');
    expect(faults.takeReplyFault()).toBeNull();
  });

  it('merges patches and clears everything', () => {
    const faults = new Faults({ latencyMs: 50 });
    faults.apply({ rejectMessage: '29' });
    expect(faults.state).toMatchObject({ latencyMs: 50, rejectMessage: '29' });
    expect(faults.rejects('29')).toBe(true);
    expect(faults.rejects('63')).toBe(false);
    faults.clear();
    expect(faults.state).toEqual({
      latencyMs: 0,
      jitterMs: 0,
      refuseConnections: false,
      dropMidReply: false,
      hang: false,
      corruptChecksums: false,
      garbage: false,
      rejectMessage: null,
      listCount: false,
    });
  });

  it('takes listCount as a number of entries, 0 or false meaning off', () => {
    const faults = new Faults();
    expect(faults.listCount()).toBe(0);
    faults.apply(parseFaultPatch({ listCount: 250 }));
    expect(faults.state.listCount).toBe(250);
    expect(faults.listCount()).toBe(250);
    faults.apply(parseFaultPatch({ listCount: 0 }));
    expect(faults.state.listCount).toBe(false);
    faults.apply(parseFaultPatch({ listCount: 7 }));
    faults.apply(parseFaultPatch({ listCount: false }));
    expect(faults.listCount()).toBe(0);
    expect(() => parseFaultPatch({ listCount: 10_000 })).toThrow(/listCount: must be at most 9999/);
    expect(() => parseFaultPatch({ listCount: true })).toThrow(/listCount/);
  });

  it('adds jitter within 0..jitterMs on top of the latency', () => {
    const faults = new Faults({ latencyMs: 100, jitterMs: 20 });
    const delays = Array.from({ length: 200 }, () => faults.delayMs());
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(100);
    expect(Math.max(...delays)).toBeLessThanOrEqual(120);
    expect(new Set(delays).size).toBeGreaterThan(1);
  });

  it('validates patches with readable reasons', () => {
    expect(parseFaultPatch({ hang: 3, latencyMs: 10 })).toEqual({ hang: 3, latencyMs: 10 });
    expect(() => parseFaultPatch({ latencyMs: -1 })).toThrow(/latencyMs/);
    expect(() => parseFaultPatch({ hang: 'yes' })).toThrow(/hang/);
    expect(() => parseFaultPatch({ rejectMessage: '42' })).toThrow(/rejectMessage/);
    expect(() => parseFaultPatch({ slowness: 1 })).toThrow(/unknown fault "slowness"/);
    expect(parseFaultPatch({ rejectMessage: null })).toEqual({ rejectMessage: null });
  });
});

describe('fault bytes', () => {
  const wire = { charset: 'cp850' as const, errorDetection: true };
  it('corrupts only the AZ value, so the codec sees a bad checksum', () => {
    for (const terminator of ['\r', '\r\n'] as const) {
      const good = encodeMessage({ code: '94', ok: true }, { ...wire, sequence: 4, terminator });
      const bad = corruptChecksum(good);
      expect(bad.length).toBe(good.length);
      expect(bad.subarray(0, bad.length - 4 - terminator.length)).toEqual(
        good.subarray(0, good.length - 4 - terminator.length),
      );
      expect(bad.equals(good)).toBe(false);
      const frame = new FrameDecoder().push(bad)[0]!;
      expect(() => decodeFrame(frame, wire)).toThrow(expect.objectContaining({ reason: 'bad-checksum' }));
    }
  });

  it('garbage is one CR-terminated frame the codec rejects', () => {
    for (let i = 0; i < 50; i++) {
      const junk = garbageBytes();
      expect(junk.at(-1)).toBe(0x0d);
      const frames = new FrameDecoder().push(junk);
      expect(frames).toHaveLength(1);
      expect(() => decodeFrame(frames[0]!, wire)).toThrow(Sip2DecodeError);
      expect(() => decodeFrame(frames[0]!, { ...wire, errorDetection: false })).toThrow(Sip2DecodeError);
    }
  });
});

describe('CLI flags', () => {
  it('reads every flag', () => {
    expect(
      parseCli([
        '--host',
        '0.0.0.0',
        '--port',
        '0',
        '--dialect',
        'koha',
        '--data',
        'x.json',
        '--charset',
        'latin1',
        '--latency-ms',
        '20',
        '--jitter-ms',
        '5',
        '--idle-timeout-s',
        '0.5',
        '--error-detection',
        'off',
        '--control-port',
        '0',
        '--log-level',
        'debug',
      ]),
    ).toEqual({
      host: '0.0.0.0',
      port: 0,
      dialect: 'koha',
      dataFile: 'x.json',
      charset: 'latin1',
      latencyMs: 20,
      jitterMs: 5,
      idleTimeoutS: 0.5,
      errorDetection: false,
      controlPort: 0,
      logLevel: 'debug',
    });
    expect(parseCli([])).toEqual({});
    expect(parseCli(['-h'])).toBe('help');
    expect(parseCli(['--strict-checksums'])).toEqual({ strictChecksums: true });
    expect(parseCli(['--error-detection', 'on', '--strict-checksums'])).toEqual({
      errorDetection: true,
      strictChecksums: true,
    });
  });

  it('--help lists every message the simulator answers and every field of the data file', () => {
    for (const [request, response] of Object.entries(RESPONSE_CODE))
      expect(usage('npm run simulator --')).toMatch(new RegExp(`^  ${request} .+ -> ${response} `, 'm'));
    expect(usage('npm run simulator --')).toContain('any other command id -> 96');
    for (const [record, fields] of Object.entries(DATA_FIELDS)) {
      const line = usage('npm run simulator --')
        .split('\n')
        .find((text) => text.startsWith(`  ${record}: `));
      expect(line, record).toBeDefined();
      for (const field of fields) expect(line).toMatch(new RegExp(`[ ,]${field}(,|$)`));
    }
    expect(DATA_FIELDS['patrons[]']).toEqual(
      expect.arrayContaining(['birthDate', 'internetProfile', 'homeLibrary', 'holdItemsLimit', 'blocked']),
    );
  });

  it('rejects bad values and unknown flags with a clear reason', () => {
    const bad: Array<[string[], RegExp]> = [
      [['--port', 'abc'], /--port must be a whole number/],
      [['--port', '70000'], /--port/],
      [['--dialect', 'sierra'], new RegExp(`--dialect must be one of ${BUILTIN_DIALECTS.join(', ')}`)],
      [['--charset', 'ascii'], /--charset/],
      [['--error-detection', 'yes'], /--error-detection must be on or off/],
      [['--error-detection', 'off', '--strict-checksums'], /--strict-checksums needs --error-detection on/],
      [['--idle-timeout-s', '-1'], /--idle-timeout-s/],
      [['--log-level', 'loud'], /--log-level/],
      [['--bogus'], /bogus/],
      [['positional'], /positional/],
    ];
    for (const [args, reason] of bad) {
      expect(() => parseCli(args)).toThrow(UsageError);
      expect(() => parseCli(args)).toThrow(reason);
    }
  });
});
