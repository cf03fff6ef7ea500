import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Charset } from '../../../src/sip2/charset.js';
import { asciiChecksum, checksum } from '../../../src/sip2/checksum.js';
import { decodeFrame, encodeMessage } from '../../../src/sip2/codec.js';
import type { ItemInformationResponse, Login, ScStatus } from '../../../src/sip2/spec.js';
import { expectDecodeError } from './expect-error.js';

/**
 * The vectors of /work/shared/reference/checksum-vectors.md, written out by
 * hand. They agree with the Perl SIPServer; nothing here is recomputed with
 * the code under test.
 */
const LOGIN_TEXT = '9300CNscclient|COclientpwd|CPcirc|AY0AZ';
const SC_STATUS_TEXT = '9900302.00AY1AZ';
const ITEM_TEXT = '1803000120261121    172931AB660|AJHarry Potter y el cáliz de fuego|AY3AZ';
const TITLE = 'Harry Potter y el cáliz de fuego';

/** The 18 vector as bytes in each charset, built without the codec: only 'á' differs. */
function itemBytes(charset: Charset): Buffer {
  const [before, after] = ITEM_TEXT.split('á') as [string, string];
  const aacute = { 'utf-8': [0xc3, 0xa1], latin1: [0xe1], cp850: [0xa0] }[charset];
  return Buffer.concat([Buffer.from(before, 'ascii'), Buffer.from(aacute), Buffer.from(after, 'ascii')]);
}

const ascii = (s: string) => Buffer.from(s, 'ascii');

describe('checksum()', () => {
  it.each([
    [LOGIN_TEXT, 'F1E5'],
    [SC_STATUS_TEXT, 'FCA5'],
    ['97AZ', 'FEF5'],
    ['96AZ', 'FEF6'],
    ['941AY0AZ', 'FDFD'],
  ])('%s -> %s', (text, expected) => {
    expect(checksum(ascii(text))).toBe(expected);
  });

  it.each([
    ['utf-8', 'EAA0'],
    ['latin1', 'EB23'],
    ['cp850', 'EB64'],
  ] as const)('the 18 vector in %s -> %s (computed over wire bytes, not characters)', (charset, expected) => {
    expect(checksum(itemBytes(charset))).toBe(expected);
  });

  it('only sums up to `end` when given', () => {
    expect(checksum(ascii(`${LOGIN_TEXT}F1E5`), LOGIN_TEXT.length)).toBe('F1E5');
    expect(checksum(ascii('97AZ-garbage'), 4)).toBe('FEF5');
  });

  it('of an ASCII text (asciiChecksum) is that of its bytes; a text with any other character has none', () => {
    for (const [text, expected] of [
      [LOGIN_TEXT, 'F1E5'],
      [SC_STATUS_TEXT, 'FCA5'],
      ['941AY0AZ', 'FDFD'],
      ['', '0000'],
      ['\x01', 'FFFF'],
    ] as const)
      expect(asciiChecksum(text)).toBe(expected);
    expect(asciiChecksum(ITEM_TEXT)).toBeNull();
    expect(asciiChecksum('AZ\x80')).toBeNull();
  });

  it('is four upper-case hex digits, zero-padded', () => {
    expect(checksum(Buffer.alloc(0))).toBe('0000');
    // 240 * 0xFF + 0xF1 = 0xF001; -0xF001 & 0xFFFF = 0x0FFF
    expect(checksum(Buffer.concat([Buffer.alloc(240, 0xff), Buffer.from([0xf1])]))).toBe('0FFF');
    // sum 0x10000 wraps to 0
    expect(checksum(Buffer.concat([Buffer.alloc(257, 0xff), Buffer.from([0x01])]))).toBe('0000');
    expect(checksum(Buffer.from([0x01]))).toBe('FFFF');
    expect(checksum(Buffer.from([0x10]))).toBe('FFF0');
  });

  it('satisfies the 3M verification rule: bytes plus checksum value sum to zero mod 2^16', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), (bytes) => {
        const value = checksum(bytes);
        expect(value).toMatch(/^[0-9A-F]{4}$/);
        const sum = bytes.reduce((a, b) => a + b, 0);
        expect((sum + Number.parseInt(value, 16)) % 0x10000).toBe(0);
      }),
      { numRuns: 500 },
    );
  });
});

describe('encodeMessage produces the vector bytes', () => {
  const login: Login = {
    code: '93',
    uidAlgorithm: '0',
    pwdAlgorithm: '0',
    loginUserId: 'scclient',
    loginPassword: 'clientpwd',
    locationCode: 'circ',
  };

  it('93 login with AY0 -> ...AY0AZF1E5<CR>', () => {
    const bytes = encodeMessage(login, { charset: 'cp850', errorDetection: true, sequence: 0 });
    expect(bytes.toString('latin1')).toBe('9300CNscclient|COclientpwd|CPcirc|AY0AZF1E5\r');
  });

  it('the sequence defaults to 0', () => {
    expect(encodeMessage(login, { charset: 'utf-8', errorDetection: true }).toString('latin1')).toBe(
      '9300CNscclient|COclientpwd|CPcirc|AY0AZF1E5\r',
    );
  });

  it('a CRLF terminator does not change the checksum', () => {
    const bytes = encodeMessage(login, { charset: 'latin1', errorDetection: true, sequence: 0, terminator: '\r\n' });
    expect(bytes.toString('latin1')).toBe('9300CNscclient|COclientpwd|CPcirc|AY0AZF1E5\r\n');
  });

  it('99 SC status with AY1 -> 9900302.00AY1AZFCA5', () => {
    const status: ScStatus = { code: '99', statusCode: 0, maxPrintWidth: 30, protocolVersion: '2.00' };
    expect(encodeMessage(status, { charset: 'cp850', errorDetection: true, sequence: 1 }).toString('latin1')).toBe(
      '9900302.00AY1AZFCA5\r',
    );
  });

  it('97 and 96 never carry a sequence number, even if one is given', () => {
    expect(
      encodeMessage({ code: '97' }, { charset: 'cp850', errorDetection: true, sequence: 7 }).toString('latin1'),
    ).toBe('97AZFEF5\r');
    expect(
      encodeMessage({ code: '96' }, { charset: 'cp850', errorDetection: true, sequence: 3 }).toString('latin1'),
    ).toBe('96AZFEF6\r');
  });

  it('without error detection there is no trailer at all', () => {
    expect(encodeMessage({ code: '97' }, { charset: 'cp850', errorDetection: false }).toString('latin1')).toBe('97\r');
    expect(encodeMessage(login, { charset: 'cp850', errorDetection: false, sequence: 4 }).toString('latin1')).toBe(
      '9300CNscclient|COclientpwd|CPcirc|\r',
    );
  });

  const item: ItemInformationResponse = {
    code: '18',
    circulationStatus: 3,
    securityMarker: 0,
    feeType: 1,
    transactionDate: { year: 2026, month: 11, day: 21, hour: 17, minute: 29, second: 31, zone: '    ' },
    itemIdentifier: '660',
    titleIdentifier: TITLE,
  };

  it.each([
    ['utf-8', 'EAA0'],
    ['latin1', 'EB23'],
    ['cp850', 'EB64'],
  ] as const)('18 item information in %s -> checksum %s over the encoded bytes', (charset, expected) => {
    const bytes = encodeMessage(item, { charset, errorDetection: true, sequence: 3 });
    expect(bytes).toEqual(Buffer.concat([itemBytes(charset), ascii(`${expected}\r`)]));
  });
});

describe('decodeFrame verifies the vectors', () => {
  it('decodes the real exchange 941AY0AZFDFD', () => {
    expect(decodeFrame(ascii('941AY0AZFDFD'), { charset: 'cp850', errorDetection: true })).toStrictEqual({
      kind: 'message',
      message: { code: '94', ok: true },
      sequence: 0,
      checksummed: true,
    });
  });

  it('decodes the 93 vector to the typed login', () => {
    expect(decodeFrame(ascii(`${LOGIN_TEXT}F1E5`), { charset: 'cp850', errorDetection: true })).toStrictEqual({
      kind: 'message',
      message: {
        code: '93',
        uidAlgorithm: '0',
        pwdAlgorithm: '0',
        loginUserId: 'scclient',
        loginPassword: 'clientpwd',
        locationCode: 'circ',
      },
      sequence: 0,
      checksummed: true,
    });
  });

  it('decodes 97AZFEF5 and 96AZFEF6 with no sequence', () => {
    expect(decodeFrame(ascii('97AZFEF5'), { charset: 'cp850', errorDetection: true })).toStrictEqual({
      kind: 'message',
      message: { code: '97' },
      sequence: null,
      checksummed: true,
    });
    expect(decodeFrame(ascii('96AZFEF6'), { charset: 'utf-8', errorDetection: true })).toStrictEqual({
      kind: 'message',
      message: { code: '96' },
      sequence: null,
      checksummed: true,
    });
  });

  it.each([
    ['utf-8', 'EAA0'],
    ['latin1', 'EB23'],
    ['cp850', 'EB64'],
  ] as const)('decodes the 18 vector in %s, title intact', (charset, sum) => {
    const decoded = decodeFrame(Buffer.concat([itemBytes(charset), ascii(sum)]), { charset, errorDetection: true });
    expect(decoded.kind).toBe('message');
    if (decoded.kind !== 'message' || decoded.message.code !== '18') throw new Error('not an 18');
    expect(decoded.sequence).toBe(3);
    expect(decoded.message.titleIdentifier).toBe(TITLE);
    expect(decoded.message.itemIdentifier).toBe('660');
    expect(decoded.message.circulationStatus).toBe(3);
  });

  it.each([
    ['utf-8', 'EB23'],
    ['latin1', 'EB64'],
    ['cp850', 'EAA0'],
  ] as const)("rejects the 18 vector in %s carrying another charset's checksum %s", (charset, sum) => {
    expectDecodeError(
      () => decodeFrame(Buffer.concat([itemBytes(charset), ascii(sum)]), { charset, errorDetection: true }),
      'bad-checksum',
    );
  });
});
