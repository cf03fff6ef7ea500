import { describe, expect, it } from 'vitest';
import { parseCli, UsageError } from '../../../sip2-simulator/src/cli.js';
import type { Fine } from '../../../sip2-simulator/src/library.js';
import {
  accountFields,
  fineList,
  fineText,
  inflateList,
  javaFloat,
  listPage,
  perlNumber,
  syntheticEntry,
  writtenCounts,
} from '../../../sip2-simulator/src/profile-responses.js';
import {
  defaultProfile,
  describeProfile,
  FINE_FORMATS,
  PRESETS,
  ProfileError,
  parseProfile,
} from '../../../sip2-simulator/src/profiles.js';

const fine = (over: Partial<Fine> = {}): Fine => ({
  id: 'f-1',
  patron: 'p',
  amountCents: 250,
  type: 'overdue',
  date: new Date(2026, 0, 5),
  item: '30002',
  about: 'Overdue fine 30002',
  ...over,
});

describe('parseProfile', () => {
  it('reads presets and knobs left to right, later terms winning', () => {
    expect(parseProfile(['koha'])).toEqual({
      ...defaultProfile(),
      workers: 1,
      idleTimeoutS: 600,
      fines: 'koha',
      ids: 'folded',
      holdAvailable: 'waiting',
    });
    expect(parseProfile(['koha,ids=exact'])).toMatchObject({ fines: 'koha', ids: 'exact' });
    expect(parseProfile(['koha,workers=3', 'idle-timeout=2.5'])).toMatchObject({
      workers: 3,
      idleTimeoutS: 2.5,
      fines: 'koha',
    });
    expect(parseProfile(['workers=3,koha'])).toMatchObject({ workers: 1 });
    expect(parseProfile(['sipserver'])).toEqual({
      workers: 50,
      idleTimeoutS: 0,
      fines: 'sipserver',
      bv: null,
      bh: null,
      pad: true,
      scStatusFirst: true,
      ids: 'exact',
      counts: 'exact',
      unavailableHolds: 'pending',
      bx: null,
      transfers: false,
      refusedCheckinAlert: false,
      holdAvailable: 'waiting',
    });
    expect(parseProfile(['koha'])).toMatchObject({
      transfers: true,
      refusedCheckinAlert: true,
      holdAvailable: 'waiting',
    });
    expect(defaultProfile()).toMatchObject({ transfers: true, refusedCheckinAlert: true, holdAvailable: 'copy' });
    expect(parseProfile(['sipserver,transfers=on,refused-checkin-alert=on,hold-available=copy'])).toMatchObject({
      transfers: true,
      refusedCheckinAlert: true,
      holdAvailable: 'copy',
    });
    expect(parseProfile(['fines=eg-3m, bv=off ,bh=on,pad=on'])).toMatchObject({
      fines: 'eg-3m',
      bv: false,
      bh: true,
      pad: true,
    });
    expect(parseProfile(['koha,none,pad=on'])).toEqual({ ...defaultProfile(), pad: true });
    expect(parseProfile([''])).toEqual(defaultProfile());
  });

  it('rejects unknown names and bad values, listing what exists', () => {
    const bad: Array<[string, RegExp]> = [
      ['kooha', /unknown profile "kooha" \(presets: koha, sipserver, evergreen, folio; knobs: workers=N/],
      ['workers=0', /workers must be a whole number 1-1000 \(got "0"\)/],
      ['workers=two', /workers must be a whole number/],
      ['workers', /profile knob "workers" needs a value, e.g. workers=1/],
      ['idle-timeout=-1', /idle-timeout must be seconds 0-86400/],
      ['idle-timeout=90000', /idle-timeout must be seconds/],
      [
        'fines=sierra',
        /fines must be one of dialect, sipserver, koha, eg-legacy, eg-3m, eg-swyer-b, folio \(got "sierra"\)/,
      ],
      ['pad=yes', /pad must be on or off/],
      ['bv=', /bv must be on or off/],
      ['ids=ci', /ids must be one of exact, folded \(got "ci"\)/],
      ['ids', /profile knob "ids" needs a value, e.g. ids=folded/],
      ['unavailable-holds=none', /unavailable-holds must be one of pending, closed \(got "none"\)/],
      ['bx=YYYY', /bx must be 16 letters Y or N, one per message of the 98's BX \(got "YYYY"\)/],
      ['bx=yyyyyyyyyyyyyyyy', /bx must be 16 letters Y or N/],
      ['bx', /profile knob "bx" needs a value, e.g. bx=YYYYYYYYYYYYYNYY/],
      ['transfers=no', /transfers must be on or off \(got "no"\)/],
      ['transfers', /profile knob "transfers" needs a value, e.g. transfers=off/],
      ['refused-checkin-alert=1', /refused-checkin-alert must be on or off/],
      ['hold-available=always', /hold-available must be one of copy, waiting \(got "always"\)/],
    ];
    for (const [term, reason] of bad) expect(() => parseProfile([term]), term).toThrow(reason);
    expect(() => parseProfile(['workers=x'])).toThrow(ProfileError);
  });

  it('describes a profile as terms that read back to the same profile', () => {
    for (const preset of Object.keys(PRESETS)) {
      const profile = parseProfile([preset]);
      expect(parseProfile([describeProfile(profile)])).toEqual(profile);
    }
    expect(describeProfile(defaultProfile())).toBe('');
    expect(describeProfile(parseProfile(['bv=off,bh=on']))).toBe('bv=off,bh=on');
    expect(describeProfile(parseProfile(['bx=YYYYYYYYYYYYYNYY']))).toBe('bx=YYYYYYYYYYYYYNYY');
    expect(describeProfile(parseProfile(['koha']))).toBe(
      'workers=1,idle-timeout=600,fines=koha,ids=folded,hold-available=waiting',
    );
    expect(describeProfile(parseProfile(['transfers=off,refused-checkin-alert=off']))).toBe(
      'transfers=off,refused-checkin-alert=off',
    );
  });
});

describe('--profile on the command line', () => {
  it('is repeatable and comma-separated', () => {
    expect(parseCli(['--profile', 'koha', '--profile', 'workers=2,pad=on'])).toEqual({
      profile: {
        ...defaultProfile(),
        workers: 2,
        idleTimeoutS: 600,
        fines: 'koha',
        pad: true,
        ids: 'folded',
        holdAvailable: 'waiting',
      },
    });
  });

  it('is a usage error for unknown names and bad values', () => {
    expect(() => parseCli(['--profile', 'evergreen,wokers=1'])).toThrow(UsageError);
    expect(() => parseCli(['--profile', 'evergreen,wokers=1'])).toThrow(
      /--profile: unknown profile "wokers=1" \(presets: /,
    );
    expect(() => parseCli(['--profile', 'fines=x'])).toThrow(/--profile: fines must be one of/);
  });
});

describe('fine texts per format', () => {
  it("writes each system's AV shape", () => {
    const overdue = fine();
    const fee = fine({ id: 'f-2', amountCents: 100, type: 'processing', item: undefined, about: 'Processing fee' });
    const lost = fine({ id: 'f-3', amountCents: 1200, type: 'lost', item: '30003', about: 'Faust' });
    expect([overdue, fee, lost].map((f) => fineText(f, 'sipserver'))).toEqual([
      'Overdue fine 30002',
      'Processing fee',
      'Faust',
    ]);
    expect([overdue, fee, lost].map((f) => fineText(f, 'koha'))).toEqual([
      'Overdue fine 30002 2.50',
      'Processing fee 1.00',
      'Faust 12.00',
    ]);
    expect([overdue, fee, lost].map((f) => fineText(f, 'eg-legacy'))).toEqual([
      '2.50 Overdue materials Overdue fine 30002 / ',
      '1.00 processing Processing fee',
      '12.00 Lost Materials Faust / ',
    ]);
    expect([overdue, fee, lost].map((f) => fineText(f, 'eg-3m'))).toEqual([
      'f-1 $2.50 "FINE" Overdue fine 30002',
      'f-2 $1.00 "FEE" Processing fee',
      'f-3 $12.00 "LOST" Faust',
    ]);
    expect(fineText(lost, 'eg-swyer-b')).toBe('Charge-Number: f-3, Amount-Due: 12.00, Fine-Type: LOST, Title: Faust');
    expect([overdue, fee, lost].map((f) => fineText(f, 'folio'))).toEqual(['30002', null, '30003']);
  });

  it('counts every fine even when the format leaves some out of AV', () => {
    const list = fineList([fine(), fine({ item: undefined })], 'folio', () => 'unused');
    expect(list).toEqual({ entries: ['30002'], count: 2 });
    expect(fineList([fine()], 'dialect', (f) => `dialect ${f.id}`)).toEqual({ entries: ['dialect f-1'], count: 1 });
  });

  it('writes BV as Perl and Java print numbers', () => {
    expect([350, 1200, 225, 0, 1000, 5].map(perlNumber)).toEqual(['3.5', '12', '2.25', '0', '10', '0.05']);
    expect([350, 1200, 225, 0, 1000, 5].map(javaFloat)).toEqual(['3.5', '12.0', '2.25', '0.0', '10.0', '0.05']);
  });

  it('sends BV and BH as each system does, unless bv/bh say otherwise', () => {
    const with_ = (terms: string) => accountFields(1550, 'EUR', parseProfile([terms]));
    expect(with_('')).toEqual({ feeAmount: '15.50', currencyType: 'EUR' });
    expect(with_('fines=sipserver')).toEqual({});
    expect(with_('fines=koha')).toEqual({ feeAmount: '15.5' });
    expect(with_('fines=folio')).toEqual({ feeAmount: '15.5', currencyType: 'EUR' });
    expect(with_('fines=eg-legacy')).toEqual({ feeAmount: '15.50', currencyType: 'EUR' });
    expect(with_('fines=sipserver,bv=on,bh=on')).toEqual({ feeAmount: '15.50', currencyType: 'EUR' });
    expect(with_('fines=folio,bv=off')).toEqual({ currencyType: 'EUR' });
    for (const format of FINE_FORMATS) expect(Object.keys(with_(`fines=${format},bv=off,bh=off`))).toEqual([]);
  });
});

describe('list pages', () => {
  const list = ['a', 'b', 'c'];
  it('pads past the end up to BQ, capped by the list limit, only when asked and only with BQ', () => {
    expect(listPage(list, '1', '5', 50, false)).toEqual(['a', 'b', 'c']);
    expect(listPage(list, '1', '5', 50, true)).toEqual(['a', 'b', 'c', '', '']);
    expect(listPage(list, '3', '6', 50, true)).toEqual(['c', '', '', '']);
    expect(listPage(list, '5', '6', 50, true)).toEqual(['', '']);
    expect(listPage(list, '1', '50', 4, true)).toEqual(['a', 'b', 'c', '']);
    expect(listPage(list, undefined, undefined, 50, true)).toEqual(['a', 'b', 'c']);
    expect(listPage(list, '3', '2', 50, true)).toEqual([]);
  });

  it('inflates a list to exactly n entries with unique synthetic ones after the real', () => {
    expect(inflateList('charged', ['it-1'], 3)).toEqual(['it-1', 'x-charged-0002', 'x-charged-0003']);
    expect(inflateList('charged', ['a', 'b', 'c'], 2)).toEqual(['a', 'b']);
    expect(syntheticEntry('unavailableHold', 42)).toBe('x-unavailable-hold-0042');
  });
});

describe('counts (how the 64 writes its six counts)', () => {
  const counts = { hold: 2, overdue: 1, charged: 3, fine: 0, recall: 0, unavailableHold: 1 };

  it('writes exact counts by default, a blank unavailable holds count for folio, all blank or all 0 when asked', () => {
    expect(defaultProfile().counts).toBe('exact');
    expect(parseProfile(['folio']).counts).toBe('folio');
    expect(writtenCounts(counts, 'exact')).toEqual(counts);
    expect(writtenCounts(counts, 'folio')).toEqual({ ...counts, unavailableHold: null });
    expect(Object.values(writtenCounts(counts, 'blank'))).toEqual([null, null, null, null, null, null]);
    expect(Object.values(writtenCounts(counts, 'zero'))).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('reads and describes the knob, and names the modes when the value is wrong', () => {
    expect(parseProfile(['koha,counts=zero'])).toMatchObject({ fines: 'koha', counts: 'zero' });
    expect(describeProfile(parseProfile(['counts=blank']))).toBe('counts=blank');
    expect(() => parseProfile(['counts=some'])).toThrow(
      /counts must be one of exact, folio, blank, zero \(got "some"\)/,
    );
    expect(() => parseProfile(['counts'])).toThrow(/needs a value, e.g. counts=zero/);
  });
});
