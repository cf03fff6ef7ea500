import { describe, expect, it } from 'vitest';
import {
  decodeFrame,
  type EncodeOptions,
  encodeMessage,
  extraField,
  MAX_FIELD_LENGTH,
  noPatronFlags,
  redactSecrets,
  splitFields,
} from '../../../src/sip2/codec.js';
import type { Sip2DateTime } from '../../../src/sip2/date.js';
import type { Login, PatronInformation, PatronStatusResponse, Sip2Message } from '../../../src/sip2/spec.js';
import { expectDecodeError, expectEncodeError } from './expect-error.js';

const D = '20261121    172931';
const DATE: Sip2DateTime = { year: 2026, month: 11, day: 21, hour: 17, minute: 29, second: 31, zone: '    ' };
const ON = { charset: 'cp850', errorDetection: true } as const;
const OFF = { charset: 'cp850', errorDetection: false } as const;
const ascii = (s: string) => Buffer.from(s, 'latin1');

describe('the AY/AZ trailer', () => {
  it('rejects a bad checksum when error detection is on', () => {
    expectDecodeError(() => decodeFrame(ascii('941AY0AZFDFE'), ON), 'bad-checksum');
    expectDecodeError(() => decodeFrame(ascii('941AY0AZ0000'), ON), 'bad-checksum');
    // the checksum covers the sequence number too
    expectDecodeError(() => decodeFrame(ascii('941AY1AZFDFD'), ON), 'bad-checksum');
    // and the message body
    expectDecodeError(() => decodeFrame(ascii('940AY0AZFDFD'), ON), 'bad-checksum');
  });

  it('accepts lower-case hex digits', () => {
    expect(decodeFrame(ascii('941AY0AZfdfd'), ON)).toStrictEqual({
      kind: 'message',
      message: { code: '94', ok: true },
      sequence: 0,
      checksummed: true,
    });
    expect(decodeFrame(ascii('97AZfef5'), ON)).toMatchObject({ kind: 'message', message: { code: '97' } });
  });

  it.each([
    [0, 'FDFD'],
    [1, 'FDFC'],
    [2, 'FDFB'],
    [3, 'FDFA'],
    [4, 'FDF9'],
    [5, 'FDF8'],
    [6, 'FDF7'],
    [7, 'FDF6'],
    [8, 'FDF5'],
    [9, 'FDF4'],
  ])('extracts sequence number %i (941AY%iAZ%s)', (seq, sum) => {
    expect(decodeFrame(ascii(`941AY${seq}AZ${sum}`), ON)).toStrictEqual({
      kind: 'message',
      message: { code: '94', ok: true },
      sequence: seq,
      checksummed: true,
    });
  });

  it('accepts a checksum without a sequence number', () => {
    expect(decodeFrame(ascii('941AZFEC7'), ON)).toStrictEqual({
      kind: 'message',
      message: { code: '94', ok: true },
      sequence: null,
      checksummed: true,
    });
  });

  it('requires the checksum when error detection is on', () => {
    expectDecodeError(() => decodeFrame(ascii('941'), ON), 'missing-checksum');
    expectDecodeError(() => decodeFrame(ascii('941AY0'), ON), 'missing-checksum');
    expectDecodeError(() => decodeFrame(ascii('941AY0AZ'), ON), 'missing-checksum');
    expectDecodeError(() => decodeFrame(ascii('941AY0AZFDF'), ON), 'missing-checksum');
    expectDecodeError(() => decodeFrame(ascii('941AY0AZFDFG'), ON), 'missing-checksum');
    expectDecodeError(() => decodeFrame(ascii(`36Y${D}AOi|AAp|`), ON), 'missing-checksum');
  });

  it('accepts 96 and 97 without a checksum even when error detection is on', () => {
    expect(decodeFrame(ascii('96'), ON)).toStrictEqual({
      kind: 'message',
      message: { code: '96' },
      sequence: null,
      checksummed: false,
    });
    expect(decodeFrame(ascii('97'), ON)).toStrictEqual({
      kind: 'message',
      message: { code: '97' },
      sequence: null,
      checksummed: false,
    });
  });

  it('accepts messages without a trailer when error detection is off', () => {
    expect(decodeFrame(ascii('941'), OFF)).toStrictEqual({
      kind: 'message',
      message: { code: '94', ok: true },
      sequence: null,
      checksummed: false,
    });
  });

  it('still reads and strips a valid trailer when error detection is off', () => {
    expect(decodeFrame(ascii('941AY0AZFDFD'), OFF)).toStrictEqual({
      kind: 'message',
      message: { code: '94', ok: true },
      sequence: 0,
      checksummed: true,
    });
  });

  it('does not mangle a last field that merely looks like a trailer when error detection is off', () => {
    // a server that omits the last delimiter, with a screen message ending in "AZ" and four hex digits
    const wire = `36Y${D}AOinst|AA2000001|AFticket AZ12AB`;
    expect(decodeFrame(ascii(wire), OFF)).toStrictEqual({
      kind: 'message',
      message: {
        code: '36',
        endSession: true,
        transactionDate: DATE,
        institutionId: 'inst',
        patronIdentifier: '2000001',
        screenMessage: ['ticket AZ12AB'],
      },
      sequence: null,
      checksummed: false,
    });
    const withSequence = `36Y${D}AOinst|AA2000001|AFcode AY1AZBEEF`;
    expect(decodeFrame(ascii(withSequence), OFF)).toMatchObject({
      message: { screenMessage: ['code AY1AZBEEF'] },
      sequence: null,
      checksummed: false,
    });
    // with error detection on the same bytes are a corrupt message
    expectDecodeError(() => decodeFrame(ascii(wire), ON), 'bad-checksum');
  });

  it('reads a sequence number only as "AY" plus a digit (no AY: "?Y1" is message text)', () => {
    expect(decodeFrame(ascii('9900302.Y1AZFD46'), ON)).toStrictEqual({
      kind: 'message',
      message: { code: '99', statusCode: 0, maxPrintWidth: 30, protocolVersion: '2.Y1' },
      sequence: null,
      checksummed: true,
    });
  });

  it('reads the sequence only from its place right before AZ', () => {
    // AY inside a field value is text
    expect(decodeFrame(ascii(`36Y${D}AOi|AAp|AFAY7|AY3AZF5D9`), ON)).toMatchObject({
      sequence: 3,
      message: { screenMessage: ['AY7'] },
    });
  });

  it('decodes an unknown message code as kind "unknown", trailer removed', () => {
    expect(decodeFrame(ascii('411YNN20261121    172931AOinst|ABit-1|AQstacks|'), OFF)).toStrictEqual({
      kind: 'unknown',
      code: '41',
      body: '1YNN20261121    172931AOinst|ABit-1|AQstacks|',
      sequence: null,
      checksummed: false,
    });
    // "50" (no SIP2 message) with a checksum: sum("500AY4AZ") = 0x1FE
    expect(decodeFrame(ascii('500AY4AZFE02'), ON)).toStrictEqual({
      kind: 'unknown',
      code: '50',
      body: '0',
      sequence: 4,
      checksummed: true,
    });
    expect(decodeFrame(ascii('00'), OFF)).toMatchObject({ kind: 'unknown', code: '00', body: '' });
  });

  it('still requires the checksum of unknown messages when error detection is on', () => {
    expectDecodeError(() => decodeFrame(ascii('500'), ON), 'missing-checksum');
    expectDecodeError(() => decodeFrame(ascii('500AY4AZFE03'), ON), 'bad-checksum');
  });
});

describe('checksumOptional (how an ACS reads requests)', () => {
  const LENIENT = { ...ON, checksumOptional: true } as const;

  it('accepts a frame without AY/AZ as not checksummed', () => {
    expect(decodeFrame(ascii('9900802.00'), LENIENT)).toStrictEqual({
      kind: 'message',
      message: { code: '99', statusCode: 0, maxPrintWidth: 80, protocolVersion: '2.00' },
      sequence: null,
      checksummed: false,
    });
  });

  it('still verifies a frame that carries AZ, with or without AY', () => {
    // sum("9900802.00AY1AZ") = 0x360
    expect(decodeFrame(ascii('9900802.00AY1AZFCA0'), LENIENT)).toMatchObject({ sequence: 1, checksummed: true });
    expectDecodeError(() => decodeFrame(ascii('9900802.00AY1AZFCA1'), LENIENT), 'bad-checksum');
    // sum("9900802.00AZ") = 0x295
    expect(decodeFrame(ascii('9900802.00AZFD6B'), LENIENT)).toMatchObject({ sequence: null, checksummed: true });
  });

  it('changes nothing with error detection off', () => {
    // off: a wrong "checksum" is message text, as before
    expect(decodeFrame(ascii('36Y20261121    172931AOi|AAp|AZ0000'), { ...OFF, checksumOptional: true })).toMatchObject(
      {
        checksummed: false,
        message: { code: '36', extra: [['AZ', '0000']] },
      },
    );
  });
});

describe('decodeFrame refuses what is not SIP2', () => {
  it('NUL bytes', () => {
    expectDecodeError(() => decodeFrame(ascii('94\u00001'), OFF), 'nul-byte');
    expectDecodeError(() => decodeFrame(ascii('941AY0AZFDFD\u0000'), ON), 'nul-byte');
  });

  it('a missing or non-numeric message code', () => {
    expectDecodeError(() => decodeFrame(Buffer.alloc(0), OFF), 'bad-message-code');
    expectDecodeError(() => decodeFrame(ascii('9'), OFF), 'bad-message-code');
    expectDecodeError(() => decodeFrame(ascii('X41'), OFF), 'bad-message-code');
    expectDecodeError(() => decodeFrame(ascii(' 941'), OFF), 'bad-message-code');
    expectDecodeError(() => decodeFrame(ascii('HTTP/1.1 400 Bad Request'), OFF), 'bad-message-code');
  });

  it('fewer characters than the fixed fields need', () => {
    expectDecodeError(() => decodeFrame(ascii('94'), OFF), 'truncated-fixed-fields');
    expectDecodeError(() => decodeFrame(ascii('9900302.0'), OFF), 'truncated-fixed-fields');
    expectDecodeError(() => decodeFrame(ascii(`64              001${D}00000000`), OFF), 'truncated-fixed-fields');
    // the trailer does not count as fixed fields: sum("94AY0AZ") = 0x1D2
    expectDecodeError(() => decodeFrame(ascii('94AY0AZFE2E'), ON), 'truncated-fixed-fields');
  });

  it('a variable-length part that does not start with a two-character field id', () => {
    expectDecodeError(() => decodeFrame(ascii('941x'), OFF), 'bad-field-tag');
    expectDecodeError(() => decodeFrame(ascii('941|AOx|'), OFF), 'bad-field-tag');
    expectDecodeError(() => decodeFrame(ascii('941A|'), OFF), 'bad-field-tag');
    expectDecodeError(() => decodeFrame(ascii(`36Y${D}AOi||AAp|`), OFF), 'bad-field-tag');
    expectDecodeError(() => decodeFrame(ascii(`36Y${D}AOi| AAp|`), OFF), 'bad-field-tag');
  });

  it('does not echo message bytes in errors', () => {
    const error = expectDecodeError(() => decodeFrame(ascii('941AY0AZ0000'), ON), 'bad-checksum');
    expect(error.message).not.toContain('941');
  });
});

describe('decodeFrame, the decoded message', () => {
  it('is a plain object: code, fixed fields, tagged fields in wire order, defaults, extra', () => {
    const decoded = decodeFrame(ascii(`36Y${D}AAp|AFhi|AOinst|ZZx|AFho|`), OFF);
    if (decoded.kind !== 'message') throw new Error('not decoded');
    const message = decoded.message as unknown as Record<string, unknown>;
    expect(Object.getPrototypeOf(message)).toBe(Object.prototype);
    expect(message.constructor).toBe(Object);
    expect(Object.keys(message)).toEqual([
      'code',
      'endSession',
      'transactionDate',
      'patronIdentifier',
      'screenMessage',
      'institutionId',
      'extra',
    ]);
    expect(JSON.parse(JSON.stringify(message))).toEqual({
      code: '36',
      endSession: true,
      transactionDate: { ...DATE },
      patronIdentifier: 'p',
      screenMessage: ['hi', 'ho'],
      institutionId: 'inst',
      extra: [['ZZ', 'x']],
    });
  });
});

describe('decodeFrame, lenient parts', () => {
  it('accepts a last field without its delimiter', () => {
    expect(decodeFrame(ascii(`36Y${D}AOinst|AA2000001`), OFF)).toMatchObject({
      message: { institutionId: 'inst', patronIdentifier: '2000001' },
    });
  });

  it('reads empty values', () => {
    expect(decodeFrame(ascii(`36Y${D}AO|AA|AF|`), OFF)).toMatchObject({
      message: { institutionId: '', patronIdentifier: '', screenMessage: [''] },
    });
  });

  it('decodes text in the configured charset', () => {
    const cp850 = Buffer.concat([ascii(`36Y${D}AOi|AAp|AFM`), Buffer.from([0x81]), ascii('ller ñ|')]);
    cp850[cp850.length - 2] = 0xa4; // cp850 ñ
    expect(decodeFrame(cp850, OFF)).toMatchObject({ message: { screenMessage: ['Müller ñ'] } });
    const latin1 = Buffer.concat([ascii(`36Y${D}AOi|AAp|AFM`), Buffer.from([0xfc]), ascii('ller|')]);
    expect(decodeFrame(latin1, { charset: 'latin1', errorDetection: false })).toMatchObject({
      message: { screenMessage: ['Müller'] },
    });
    const utf8 = Buffer.from(`36Y${D}AOi|AAp|AF山田 🦊|`, 'utf8');
    expect(decodeFrame(utf8, { charset: 'utf-8', errorDetection: false })).toMatchObject({
      message: { screenMessage: ['山田 🦊'] },
    });
  });
});

describe('splitFields', () => {
  it('splits "XXvalue|" pairs', () => {
    expect(splitFields('')).toEqual([]);
    expect(splitFields('AOinst|')).toEqual([['AO', 'inst']]);
    expect(splitFields('AOinst|AA|AFa b c|')).toEqual([
      ['AO', 'inst'],
      ['AA', ''],
      ['AF', 'a b c'],
    ]);
    expect(splitFields('AOinst|AAlast')).toEqual([
      ['AO', 'inst'],
      ['AA', 'last'],
    ]);
    expect(splitFields('AO')).toEqual([['AO', '']]);
    expect(splitFields('zz1|')).toEqual([['zz', '1']]);
  });
});

describe('helpers', () => {
  it('extraField returns the first value of an unmodelled field', () => {
    const message = {
      extra: [
        ['PA', '20271231'],
        ['PB', '19800101'],
        ['PA', 'second'],
      ] as [string, string][],
    };
    expect(extraField(message, 'PA')).toBe('20271231');
    expect(extraField(message, 'PB')).toBe('19800101');
    expect(extraField(message, 'PX')).toBeUndefined();
    expect(extraField({}, 'PA')).toBeUndefined();
  });

  it('noPatronFlags has all 14 flags false', () => {
    const flags = noPatronFlags();
    expect(Object.keys(flags)).toHaveLength(14);
    expect(Object.values(flags).every((v) => v === false)).toBe(true);
    const response: PatronStatusResponse = {
      code: '24',
      patronStatus: flags,
      language: '000',
      transactionDate: DATE,
      institutionId: 'i',
      patronIdentifier: 'p',
      personalName: 'n',
    };
    expect(encodeMessage(response, OFF).toString('latin1')).toBe(`24${' '.repeat(14)}000${D}AOi|AAp|AEn|\r`);
  });
});

describe('encodeMessage refuses what SIP2 cannot carry', () => {
  const login = (password: string): Login => ({
    code: '93',
    uidAlgorithm: '0',
    pwdAlgorithm: '0',
    loginUserId: 'scclient',
    loginPassword: password,
  });

  it.each([
    ['|', 'Zebra|Quux'],
    ['CR', 'Zebra\rQuux'],
    ['LF', 'Zebra\nQuux'],
    ['NUL', 'Zebra\u0000Quux'],
    ['a trailing |', 'ZebraQuux|'],
  ])('a value containing %s, without echoing the value', (_, password) => {
    for (const options of [ON, OFF, { charset: 'utf-8', errorDetection: true } as const]) {
      const error = expectEncodeError(() => encodeMessage(login(password), options), 'loginPassword');
      expect(error.message).not.toContain('Zebra');
      expect(error.message).not.toContain('Quux');
    }
  });

  it('checks every value of repeated fields and unknown fields too', () => {
    const patron: PatronInformation = {
      code: '63',
      language: '000',
      transactionDate: DATE,
      summary: null,
      institutionId: 'i',
      patronIdentifier: 'p',
    };
    expectEncodeError(() => encodeMessage({ ...patron, patronPassword: 'Ge|heim' }, OFF), 'patronPassword');
    expectEncodeError(
      () =>
        encodeMessage(
          {
            code: '36',
            endSession: true,
            transactionDate: DATE,
            institutionId: 'i',
            patronIdentifier: 'p',
            screenMessage: ['ok', 'b|ad'],
          },
          OFF,
        ),
      'screenMessage',
    );
    const error = expectEncodeError(() => encodeMessage({ ...patron, extra: [['PX', 'sec|ret']] }, OFF), 'PX');
    expect(error.message).not.toContain('sec');
  });

  it('values longer than 255 characters; exactly 255 is fine', () => {
    expect(MAX_FIELD_LENGTH).toBe(255);
    const ok = 'p'.repeat(255);
    expect(encodeMessage(login(ok), OFF).toString('latin1')).toBe(`9300CNscclient|CO${ok}|\r`);
    const long = `Secret${'p'.repeat(250)}`;
    expect(long).toHaveLength(256);
    const error = expectEncodeError(() => encodeMessage(login(long), OFF), 'loginPassword');
    expect(error.message).not.toContain('Secret');
    expect(error.message).not.toContain('pppp');
  });

  it('characters the charset cannot represent (Japanese in cp850)', () => {
    const error = expectEncodeError(() => encodeMessage(login('山田パス'), ON), 'loginPassword');
    expect(error.message).not.toContain('山田');
    expect(error.message).toContain('cp850');
    // but cp850 does have ü, ñ, £ and box drawing
    expect(encodeMessage(login('ü£ñ╬'), OFF)).toEqual(
      Buffer.concat([ascii('9300CNscclient|CO'), Buffer.from([0x81, 0x9c, 0xa4, 0xce]), ascii('|\r')]),
    );
  });

  it('in latin1, characters above U+00FF are refused, not aliased onto their low byte', () => {
    // U+0141 would become 0x41 'A' if only the low byte were kept
    expectEncodeError(
      () => encodeMessage(login('Łódź'), { charset: 'latin1', errorDetection: false }),
      'loginPassword',
    );
    expectEncodeError(() => encodeMessage(login('€'), { charset: 'latin1', errorDetection: false }), 'loginPassword');
    expect(encodeMessage(login('ÿé'), { charset: 'latin1', errorDetection: false })).toEqual(
      Buffer.concat([ascii('9300CNscclient|CO'), Buffer.from([0xff, 0xe9]), ascii('|\r')]),
    );
  });

  it('in utf-8, lone surrogates are refused and everything else is carried', () => {
    expectEncodeError(
      () => encodeMessage(login('a\ud800b'), { charset: 'utf-8', errorDetection: false }),
      'loginPassword',
    );
    expectEncodeError(
      () => encodeMessage(login('\udc00'), { charset: 'utf-8', errorDetection: false }),
      'loginPassword',
    );
    expect(encodeMessage(login('山田🦊'), { charset: 'utf-8', errorDetection: false })).toEqual(
      Buffer.from('9300CNscclient|CO山田🦊|\r', 'utf8'),
    );
  });

  it('with unencodable: "replace", writes ? for each character the charset lacks', () => {
    const replace: EncodeOptions = { charset: 'cp850', errorDetection: false, unencodable: 'replace' };
    const response: Sip2Message = {
      code: '36',
      endSession: true,
      transactionDate: DATE,
      institutionId: 'i',
      patronIdentifier: 'p',
      screenMessage: ['山田 Müller 🦊'],
    };
    expect(encodeMessage(response, replace)).toEqual(
      Buffer.concat([ascii(`36Y${D}AOi|AAp|AF?? M`), Buffer.from([0x81]), ascii('ller ?|\r')]),
    );
    expect(
      encodeMessage(response, {
        charset: 'latin1',
        errorDetection: true,
        sequence: 0,
        unencodable: 'replace',
      }).toString('latin1'),
    ).toMatch(new RegExp(`^36Y${D}AOi\\|AAp\\|AF\\?\\? Müller \\?\\|AY0AZ[0-9A-F]{4}\\r$`));
  });

  it('"replace" never lets a delimiter or an over-long value through', () => {
    const replace: EncodeOptions = { charset: 'cp850', errorDetection: false, unencodable: 'replace' };
    expectEncodeError(() => encodeMessage(login('山|田'), replace), 'loginPassword');
    expectEncodeError(() => encodeMessage(login('山'.repeat(256)), replace), 'loginPassword');
  });

  it('fixed fields of the wrong length or form', () => {
    const base: PatronInformation = {
      code: '63',
      language: '001',
      transactionDate: DATE,
      summary: null,
      institutionId: 'i',
      patronIdentifier: 'p',
    };
    expectEncodeError(() => encodeMessage({ ...base, language: 'en' }, OFF), 'language');
    expectEncodeError(() => encodeMessage({ ...base, language: '0001' }, OFF), 'language');
    expectEncodeError(() => encodeMessage({ ...base, language: '0|1' }, OFF), 'language');
    expectEncodeError(() => encodeMessage({ ...base, language: 'dé1' }, OFF), 'language');
    expectEncodeError(() => encodeMessage({ ...base, language: '00\r' }, OFF), 'language');
    expectEncodeError(
      () => encodeMessage({ ...base, transactionDate: { ...DATE, year: 12026 } }, OFF),
      'transactionDate',
    );
    expectEncodeError(
      () => encodeMessage({ ...base, transactionDate: { ...DATE, zone: 'Z' } }, OFF),
      'transactionDate',
    );
    expectEncodeError(
      () => encodeMessage({ ...base, transactionDate: { ...DATE, zone: '  |Z' } }, OFF),
      'transactionDate',
    );

    const status = { code: '99', statusCode: 0, maxPrintWidth: 40, protocolVersion: '2.00' } as const;
    expectEncodeError(() => encodeMessage({ ...status, maxPrintWidth: 1000 }, OFF), 'maxPrintWidth');
    expectEncodeError(() => encodeMessage({ ...status, maxPrintWidth: -1 }, OFF), 'maxPrintWidth');
    expectEncodeError(() => encodeMessage({ ...status, maxPrintWidth: 4.5 }, OFF), 'maxPrintWidth');
    expectEncodeError(() => encodeMessage({ ...status, maxPrintWidth: Number.NaN }, OFF), 'maxPrintWidth');
    expectEncodeError(() => encodeMessage({ ...status, statusCode: 10 }, OFF), 'statusCode');
    expectEncodeError(() => encodeMessage({ ...status, protocolVersion: '2.0' }, OFF), 'protocolVersion');
    expect(encodeMessage({ ...status, maxPrintWidth: 999 }, OFF).toString('latin1')).toBe('9909992.00\r');
    expect(encodeMessage({ ...status, maxPrintWidth: 0 }, OFF).toString('latin1')).toBe('9900002.00\r');

    const fee = {
      code: '37',
      transactionDate: DATE,
      feeType: 1,
      paymentType: 0,
      currencyType: 'EUR',
      feeAmount: '1.00',
      institutionId: 'i',
      patronIdentifier: 'p',
    } as const;
    expectEncodeError(() => encodeMessage({ ...fee, currencyType: 'EU' }, OFF), 'currencyType');
    expectEncodeError(() => encodeMessage({ ...fee, feeType: 100 }, OFF), 'feeType');
    expect(encodeMessage(fee, OFF).toString('latin1')).toBe(`37${D}0100EURBV1.00|AOi|AAp|\r`);

    const renewed = {
      code: '30',
      ok: true,
      renewalOk: true,
      magneticMedia: 'YN',
      desensitize: 'N',
      transactionDate: DATE,
      institutionId: 'i',
      patronIdentifier: 'p',
      itemIdentifier: 'b',
      titleIdentifier: 't',
      dueDate: 'd',
    } as const;
    expectEncodeError(() => encodeMessage(renewed, OFF), 'magneticMedia');
  });

  it('a sequence number that is not a digit 0-9', () => {
    const message = login('pw');
    for (const sequence of [10, -1, 1.5, Number.NaN]) {
      expectEncodeError(() => encodeMessage(message, { ...ON, sequence }), 'sequence');
    }
    // ignored (not checked) without error detection, and for 96/97
    expect(encodeMessage(message, { ...OFF, sequence: 42 }).toString('latin1')).toBe('9300CNscclient|COpw|\r');
    expect(encodeMessage({ code: '97' }, { ...ON, sequence: 42 }).toString('latin1')).toBe('97AZFEF5\r');
  });

  it('unknown fields with ids that are not two letters/digits, or that are AY/AZ', () => {
    const message = login('pw');
    for (const tag of ['A', 'ABC', 'A|', 'A\r', '', 'AY', 'AZ', 'Ä1']) {
      const error = expectEncodeError(() => encodeMessage({ ...message, extra: [[tag, 'x']] }, OFF), 'extra');
      expect(error.message).not.toContain('pw');
    }
  });
});

describe('encodeMessage, field forms', () => {
  it('writes a required field that is missing (untyped callers) as an empty field', () => {
    const untyped = {
      code: '24',
      patronStatus: noPatronFlags(),
      language: '000',
      transactionDate: DATE,
      institutionId: 'i',
    };
    expect(encodeMessage(untyped as unknown as Sip2Message, OFF).toString('latin1')).toBe(
      `24${' '.repeat(14)}000${D}AOi|AA|AE|\r`,
    );
  });

  it('writes missing fixed fields as their "none" form where SIP2 has one', () => {
    const untyped = { code: '64', language: '000', institutionId: 'i', patronIdentifier: 'p', personalName: 'n' };
    expect(encodeMessage(untyped as unknown as Sip2Message, OFF).toString('latin1')).toBe(
      `64${' '.repeat(14)}000${'0'.repeat(18)}${' '.repeat(24)}AOi|AAp|AEn|\r`,
    );
  });

  it('writes tagged Y/N fields as Y and N', () => {
    const base = {
      code: '65',
      transactionDate: DATE,
      institutionId: 'i',
      patronIdentifier: 'p',
    } as const;
    expect(encodeMessage({ ...base, feeAcknowledged: true }, OFF).toString('latin1')).toBe(`65${D}AOi|AAp|BOY|\r`);
    expect(encodeMessage({ ...base, feeAcknowledged: false }, OFF).toString('latin1')).toBe(`65${D}AOi|AAp|BON|\r`);
    expect(encodeMessage(base, OFF).toString('latin1')).toBe(`65${D}AOi|AAp|\r`);
  });

  it('writes fields in catalogue order whatever the object key order, unknown fields last', () => {
    const message = {
      extra: [
        ['ZZ', 'z'],
        ['PA', 'a'],
      ],
      patronIdentifier: 'p',
      screenMessage: ['m1', 'm2'],
      institutionId: 'i',
      transactionDate: DATE,
      endSession: false,
      code: '36',
    } as Sip2Message;
    expect(encodeMessage(message, OFF).toString('latin1')).toBe(`36N${D}AOi|AAp|AFm1|AFm2|ZZz|PAa|\r`);
  });

  it('writes CRLF when asked, with or without error detection', () => {
    expect(encodeMessage({ code: '94', ok: true }, { ...OFF, terminator: '\r\n' }).toString('latin1')).toBe('941\r\n');
    expect(encodeMessage({ code: '94', ok: true }, { ...ON, terminator: '\r\n' }).toString('latin1')).toBe(
      '941AY0AZFDFD\r\n',
    );
  });
});

describe('redactSecrets', () => {
  it('hides AC, AD and CO values and nothing else', () => {
    expect(redactSecrets('9300CNpaia|COpaia-secret|CPMAIN|AY0AZF1E5')).toBe('9300CNpaia|CO***|CPMAIN|AY0AZF1E5');
    expect(redactSecrets('63001' + '20260315    120000' + '  Y       AODEMO|AAalice|ADalice-pass|BP1|AY2AZ0000')).toBe(
      '63001' + '20260315    120000' + '  Y       AODEMO|AAalice|AD***|BP1|AY2AZ0000',
    );
    expect(redactSecrets('1720260315    120000AODEMO|ABit-1|ACterminal-secret|')).toBe(
      '1720260315    120000AODEMO|ABit-1|AC***|',
    );
    // a secret as the first tagged field, right after the fixed part
    expect(redactSecrets('3520260315    120000ADpatron-pw|AODEMO|AAx|')).toBe('3520260315    120000AD***|AODEMO|AAx|');
    // a name containing "AD" is left alone, and an unknown message still has its fields after "|" masked
    expect(redactSecrets('24              00120260315    120000AODEMO|AAx|AEADam|')).toContain('AEADam|');
    expect(redactSecrets('XXfoo|ADsecret|')).toBe('XXfoo|AD***|');
  });
});
