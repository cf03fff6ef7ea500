/**
 * The field path that picks a record's barcodes out of an ILS API's JSON
 * answer (src/backend/daia/records/field-path.ts), on the shapes of Koha's
 * GET /api/v1/biblios/{id}/items (an array of items, the barcode in
 * external_id) and FOLIO's GET /inventory/items ({items: [{barcode}]}).
 */
import { describe, expect, it } from 'vitest';
import { compileFieldPath, fieldPathProblem, pickTexts } from '../../../../../src/backend/daia/records/field-path.js';

const pick = (path: string, value: unknown) => pickTexts(value, compileFieldPath(path));

describe('field paths', () => {
  it('pick Koha\'s items: "[].external_id", skipping items without a barcode, numbers as text', () => {
    const koha = [
      { item_id: 1, external_id: 'it-0031', holding_library_id: 'MAIN' },
      { item_id: 2, external_id: null },
      { item_id: 3 },
      { item_id: 4, external_id: 40000123 },
    ];
    expect(pick('[].external_id', koha)).toEqual({ values: ['it-0031', '40000123'] });
  });

  it('pick FOLIO\'s items: "items[].barcode", and nested lists: "holdings[].items[].barcode"', () => {
    expect(pick('items[].barcode', { totalRecords: 2, items: [{ barcode: 'a' }, { barcode: 'b' }] })).toEqual({
      values: ['a', 'b'],
    });
    expect(
      pick('holdings[].items[].barcode', { holdings: [{ items: [{ barcode: 'a' }] }, { items: [{ barcode: 'b' }] }] }),
    ).toEqual({ values: ['a', 'b'] });
    expect(pick('[]', ['a', 'b'])).toEqual({ values: ['a', 'b'] });
    expect(pick('data.ids[]', { data: { ids: ['x'] } })).toEqual({ values: ['x'] });
  });

  it('an empty list is no barcodes, not a problem', () => {
    expect(pick('items[].barcode', { items: [] })).toEqual({ values: [] });
    expect(pick('[].external_id', [])).toEqual({ values: [] });
  });

  it('name what does not fit: an object where an array is expected, a missing field before any [], a non-text barcode', () => {
    expect(pick('[].external_id', { error: 'not found' })).toEqual({
      problem: 'the answer is an object, not an array',
    });
    expect(pick('items[].barcode', { records: [] })).toEqual({ problem: 'the answer has no "items"' });
    expect(pick('items[].barcode', 'garbage')).toEqual({
      problem: 'the answer is a string, not an object with "items"',
    });
    expect(pick('[].external_id', [{ external_id: { nested: true } }])).toEqual({
      problem: '"external_id" of an entry of the answer is an object, not a text',
    });
    expect(pick('[].external_id', ['plain'])).toEqual({
      problem: 'an entry of the answer is a string, not an object with "external_id"',
    });
  });

  it('stops at the bound it is given', () => {
    expect(pickTexts(['a', 'b', 'c'], compileFieldPath('[]'), 2)).toEqual({ values: ['a', 'b'] });
  });

  it('refuses paths that are not: empty steps, stray brackets, spaces or "|"', () => {
    for (const bad of ['', 'items..barcode', 'items[0].barcode', '[]x', 'a b', '|', 'items[']) {
      expect(fieldPathProblem(bad), bad).not.toBeNull();
      expect(() => compileFieldPath(bad), bad).toThrow(/field path/);
    }
    for (const good of ['[].external_id', 'items[].barcode', '[]', 'a.b.c', 'x[][]', '@graph[].schema:barcode'])
      expect(fieldPathProblem(good), good).toBeNull();
  });
});
