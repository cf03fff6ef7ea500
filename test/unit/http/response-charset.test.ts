import { describe, expect, it } from 'vitest';
import { encodeBody, escapeJsonText, negotiateCharset } from '../../../src/http/response-charset.js';

describe('negotiateCharset', () => {
  it('defaults to UTF-8', () => {
    expect(negotiateCharset(undefined, undefined)).toBe('utf-8');
    expect(negotiateCharset(undefined, 'application/json')).toBe('utf-8');
    expect(negotiateCharset('koi8-r', 'application/json; charset=koi8-r')).toBe('utf-8');
    expect(negotiateCharset(',,;;=', ';charset')).toBe('utf-8');
  });

  it('takes Accept-Charset first, by q then order, with aliases and *', () => {
    expect(negotiateCharset('ISO-8859-1', undefined)).toBe('iso-8859-1');
    expect(negotiateCharset('latin1', undefined)).toBe('iso-8859-1');
    expect(negotiateCharset('utf-8;q=0.5, iso-8859-1;q=0.9', undefined)).toBe('iso-8859-1');
    expect(negotiateCharset('iso-8859-1, utf-8', undefined)).toBe('iso-8859-1');
    expect(negotiateCharset('koi8-r, UTF8', undefined)).toBe('utf-8');
    expect(negotiateCharset('*', undefined)).toBe('utf-8');
    expect(negotiateCharset('utf-8;q=0, *', undefined)).toBe('iso-8859-1');
    expect(negotiateCharset('iso-8859-1', 'application/json; charset=utf-8')).toBe('iso-8859-1');
  });

  it('then the charset parameter of Accept', () => {
    expect(negotiateCharset(undefined, 'application/json; charset=ISO-8859-1')).toBe('iso-8859-1');
    expect(negotiateCharset(undefined, 'application/json;charset="iso-8859-1";q=0.9, */*;q=0.1')).toBe('iso-8859-1');
    expect(negotiateCharset('koi8-r', 'application/json; charset=iso-8859-1')).toBe('iso-8859-1');
    expect(negotiateCharset(undefined, 'application/json; charset=iso-8859-1; q=0')).toBe('utf-8');
  });

  it('uses ISO-8859-1 when UTF-8 alone is refused', () => {
    expect(negotiateCharset('utf-8;q=0', undefined)).toBe('iso-8859-1');
  });
});

describe('escapeJsonText', () => {
  it('makes ISO-8859-1 output pure ASCII and lossless', () => {
    const value = { name: 'Émile', about: 'L’Assommoir – 😀', ctl: '\u2028' };
    const text = escapeJsonText(JSON.stringify(value), 'iso-8859-1');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range, NUL included
    expect(text).toMatch(/^[\x00-\x7f]*$/);
    expect(text).toContain('\\u00c9mile');
    expect(JSON.parse(text)).toEqual(value);
    const bytes = encodeBody(text, 'iso-8859-1');
    expect(JSON.parse(Buffer.from(bytes).toString('latin1'))).toEqual(value);
  });

  it('keeps UTF-8 output as is except U+2028/2029', () => {
    const text = escapeJsonText(JSON.stringify({ a: 'Émile\u2028\u2029' }), 'utf-8');
    expect(text).toBe('{"a":"Émile\\u2028\\u2029"}');
    expect(Buffer.from(encodeBody(text, 'utf-8')).toString('utf8')).toBe(text);
  });
});
