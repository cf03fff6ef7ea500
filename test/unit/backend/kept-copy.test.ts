import { describe, expect, it } from 'vitest';
import { keptCopy } from '../../../src/backend/kept-copy.js';
import { decodeFrame } from '../../../src/sip2/index.js';

describe('keptCopy', () => {
  it('copies a decoded 18 exactly: every field, its dates, flags, nulls and extra fields in order', () => {
    const text =
      '1803000120261121    172931CF0|AH20261221    235900|ABbi-00001-7|AJBencher, A Long Title of a Book|AQMAIN|APMAIN|CSBX 0001 2|ZZsomething else|';
    const decoded = decodeFrame(Buffer.from(text, 'latin1'), { charset: 'cp850', errorDetection: false });
    if (decoded.kind !== 'message') throw new Error('not decoded');
    const copy = keptCopy(decoded.message);
    expect(copy).toEqual(decoded.message);
    expect(copy).not.toBe(decoded.message);
  });

  it('leaves out properties whose value is undefined, as a JSON answer does', () => {
    expect(keptCopy({ status: 1, about: undefined, item: 'http://x/item/1' })).toStrictEqual({
      status: 1,
      item: 'http://x/item/1',
    });
  });
});
