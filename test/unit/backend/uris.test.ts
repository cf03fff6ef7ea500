import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileUriTemplates, UriTemplate } from '../../../src/backend/uris.js';

const item = new UriTemplate('https://lib.example.org/item/{barcode}', 'barcode');

describe('UriTemplate.build', () => {
  it('puts the value in place', () => {
    expect(item.build('it-0001')).toBe('https://lib.example.org/item/it-0001');
  });

  it('percent-encodes what is not safe in a URI', () => {
    expect(item.build('a b/c?d#e%f&g')).toBe('https://lib.example.org/item/a%20b%2Fc%3Fd%23e%25f%26g');
    expect(item.build('Ångström')).toBe('https://lib.example.org/item/%C3%85ngstr%C3%B6m');
    expect(item.build('ノルウェイ')).toBe('https://lib.example.org/item/%E3%83%8E%E3%83%AB%E3%82%A6%E3%82%A7%E3%82%A4');
  });

  it('keeps text after the placeholder', () => {
    const t = new UriTemplate('http://x.org/t/{title}.json?x=1', 'title');
    expect(t.build('t-faust')).toBe('http://x.org/t/t-faust.json?x=1');
    expect(t.match('http://x.org/t/t-faust.json?x=1')).toBe('t-faust');
  });

  it('survives a lone surrogate instead of throwing', () => {
    expect(item.build('a\uD800b')).toBe('https://lib.example.org/item/a%EF%BF%BDb');
  });
});

describe('UriTemplate.match', () => {
  it('gives back the value of a built URI', () => {
    expect(item.match('https://lib.example.org/item/it-0001')).toBe('it-0001');
    expect(item.match('https://lib.example.org/item/a%20b%2Fc')).toBe('a b/c');
  });

  it('round-trips any string', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, unit: 'grapheme' }), (value) => {
        expect(item.match(item.build(value))).toBe(value);
      }),
    );
  });

  it('accepts lower-case escapes and escaped unreserved characters', () => {
    expect(item.match('https://lib.example.org/item/a%2fb')).toBe('a/b');
    expect(item.match('https://lib.example.org/item/%61bc')).toBe('abc');
  });

  it.each([
    ['another host', 'https://evil.example.org/item/it-0001'],
    ['another scheme', 'http://lib.example.org/item/it-0001'],
    ['another path', 'https://lib.example.org/items/it-0001'],
    ['an empty value', 'https://lib.example.org/item/'],
    ['the prefix only, shorter', 'https://lib.example.org/item'],
    ['a raw slash', 'https://lib.example.org/item/a/b'],
    ['a query', 'https://lib.example.org/item/it-0001?x=1'],
    ['a fragment', 'https://lib.example.org/item/it-0001#x'],
    ['a raw blank', 'https://lib.example.org/item/a b'],
    ['a broken escape', 'https://lib.example.org/item/a%2'],
    ['an escape that is not UTF-8', 'https://lib.example.org/item/%FF'],
    ['a case change in the prefix', 'HTTPS://lib.example.org/item/it-0001'],
    ['an empty string', ''],
    ['an unrelated text', 'it-0001'],
  ])('refuses %s', (_, uri) => {
    expect(item.match(uri)).toBeNull();
  });

  it('refuses what does not end with the suffix', () => {
    const t = new UriTemplate('urn:x:{location}:loc', 'location');
    expect(t.match('urn:x:MAIN:loc')).toBe('MAIN');
    expect(t.match('urn:x:MAIN:lo')).toBeNull();
    expect(t.match('urn:x::loc')).toBeNull();
  });
});

describe('templates', () => {
  it.each([
    ['no placeholder', 'https://x.org/item/'],
    ['the wrong placeholder', 'https://x.org/item/{title}'],
    ['the placeholder twice', 'https://x.org/{barcode}/{barcode}'],
    ['another placeholder too', 'https://x.org/{barcode}/{other}'],
    ['no scheme', '//x.org/item/{barcode}'],
    ['a relative path', '/item/{barcode}'],
  ])('refuses a template with %s', (_, template) => {
    expect(() => new UriTemplate(template, 'barcode')).toThrow(/template/);
  });

  it('compiles the four templates, storage and patron type optional', () => {
    const uris = compileUriTemplates({
      item: 'https://x.org/i/{barcode}',
      edition: 'https://x.org/t/{title}',
      storage: 'https://x.org/l/{location}',
      patronType: 'https://x.org/pt/{class}',
    });
    expect(uris.item.build('1')).toBe('https://x.org/i/1');
    expect(uris.edition.build('t')).toBe('https://x.org/t/t');
    expect(uris.storage?.build('MAIN')).toBe('https://x.org/l/MAIN');
    expect(uris.patronType?.build('adult')).toBe('https://x.org/pt/adult');
    const bare = compileUriTemplates({
      item: 'https://x.org/i/{barcode}',
      edition: 'https://x.org/t/{title}',
      storage: null,
      patronType: null,
    });
    expect(bare.storage).toBeNull();
    expect(bare.patronType).toBeNull();
    expect(() =>
      compileUriTemplates({
        item: 'https://x.org/i/{title}',
        edition: 'https://x.org/t/{title}',
        storage: null,
        patronType: null,
      }),
    ).toThrow();
  });
});
