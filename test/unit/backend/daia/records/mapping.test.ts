/**
 * Reading a record mapping file (src/backend/daia/records/mapping.ts): the
 * CSV and JSON a library exports from its ILS (record id, barcode), broken
 * lines named by their line number and left out, a file none of which can
 * serve refused as a whole.
 */
import { describe, expect, it } from 'vitest';
import { jsonEntries } from '../../../../../src/backend/daia/records/json-lines.js';
import { parseRecordMapping, RecordMappingError } from '../../../../../src/backend/daia/records/mapping.js';

const records = (text: string, maxItemsPerRecord?: number) =>
  Object.fromEntries(parseRecordMapping(text, { maxItemsPerRecord }).mapping.records);
const problems = (text: string, maxItemsPerRecord?: number) => parseRecordMapping(text, { maxItemsPerRecord }).problems;

describe('CSV mappings', () => {
  it('one record,barcode pair per line; a header naming the barcode, comments, blank lines, CRLF and a BOM are skipped', () => {
    const text =
      '\uFEFFbiblionumber,barcode\r\n# exported 2025-03-10\r\n1234,it-0001\r\n\r\n1234,it-0002\r\n99,it-0099\r\n';
    expect(records(text)).toEqual({ '1234': ['it-0001', 'it-0002'], '99': ['it-0099'] });
    expect(problems(text)).toEqual([]);
    expect(parseRecordMapping(text).mapping.copies).toBe(3);
    expect(parseRecordMapping(text).format).toBe('csv');
  });

  it('without a header; separated by semicolons or tabs as the first line is; quoted fields; further columns ignored', () => {
    expect(records('1234,it-0001\n')).toEqual({ '1234': ['it-0001'] });
    expect(records('MMS Id;Barcode\n991;"B 1"\n992;B2;Faust\n')).toEqual({ '991': ['B 1'], '992': ['B2'] });
    expect(records('instance\tbarcode\nuuid-1\tb1\n')).toEqual({ 'uuid-1': ['b1'] });
    expect(records('"rec, with comma","bar ""quoted"""\n')).toEqual({ 'rec, with comma': ['bar "quoted"'] });
  });

  it('repeats are kept once, in file order', () => {
    expect(records('r,b2\nr,b1\nr,b2\n')).toEqual({ r: ['b2', 'b1'] });
  });

  it('names each broken line by its number and keeps the rest', () => {
    const text = [
      'record,barcode', // 1
      'r1,b1', // 2
      'just-one-field', // 3
      ',b3', // 4
      'r5,', // 5
      'r6,"unclosed', // 6
      'r7,bad|barcode', // 7
      'r8,b8', // 8
    ].join('\n');
    expect(records(text)).toEqual({ r1: ['b1'], r8: ['b8'] });
    expect(problems(text)).toEqual([
      { line: 3, message: 'has one field only, needs a record id and a barcode separated by ","' },
      { line: 4, message: 'has no record id' },
      { line: 5, message: 'has no barcode for record "r5"' },
      { line: 6, message: 'has a quoted field that is not closed' },
      {
        line: 7,
        message:
          'has a barcode SIP2 cannot carry (control characters, "|" or more than 255 characters) for record "r7"',
      },
    ]);
  });

  it('keeps at most maxItemsPerRecord copies of a record and names the first one left out', () => {
    const text = 'r,b1\nr,b2\nr,b3\nr,b4\ns,b5\n';
    expect(records(text, 2)).toEqual({ r: ['b1', 'b2'], s: ['b5'] });
    expect(problems(text, 2)).toEqual([
      {
        line: 3,
        message:
          'is copy 3 of record "r": only the first 2 copies of a record are answered (daia.records.maxItemsPerRecord)',
      },
    ]);
  });

  it('an empty file (or a header alone) maps nothing; lines none of which is usable are no mapping', () => {
    expect(records('')).toEqual({});
    expect(records('biblionumber,barcode\n')).toEqual({});
    expect(() => parseRecordMapping('one\ntwo\n')).toThrow(RecordMappingError);
    expect(() => parseRecordMapping('one\ntwo\n')).toThrow(
      'has no usable record id and barcode in 2 entries: line 1 has one field only',
    );
  });
});

describe('JSON mappings', () => {
  it('{"record": ["barcode", ...]}: broken entries named by their line, integer-like record ids too', () => {
    const text = [
      '{', // 1
      '  "t-faust": ["it-0030"],', // 2
      '  "12345": ["a", "b"],', // 3
      '  "t-none": {"barcode": "x"},', // 4
      '  "t-split": [', // 5
      '    "ok",', // 6
      '    {"not": "a barcode"},', // 7
      '    "also-ok"', // 8
      '  ],', // 9
      '  "t-single": "it-1"', // 10
      '}',
    ].join('\n');
    expect(records(text)).toEqual({
      't-faust': ['it-0030'],
      '12345': ['a', 'b'],
      't-split': ['ok', 'also-ok'],
      't-single': ['it-1'],
    });
    expect(problems(text)).toEqual([
      { line: 4, message: 'has "t-none" with neither a barcode nor a list of barcodes' },
      { line: 7, message: 'has no barcode for record "t-split"' },
    ]);
    expect(parseRecordMapping(text).format).toBe('json');
  });

  it('[{"record": ..., "barcode": ...}]: numbers as text, broken entries named by their line', () => {
    const text = [
      '[', // 1
      '  {"record": 1234, "barcode": "it-1"},', // 2
      '  {"record": "1234", "barcode": 40000123},', // 3
      '  ["not", "an object"],', // 4
      '  {"record": "r", "barcode": true}', // 5
      ']',
    ].join('\n');
    expect(records(text)).toEqual({ '1234': ['it-1', '40000123'] });
    expect(problems(text)).toEqual([
      { line: 4, message: 'is not an object {"record": ..., "barcode": ...}' },
      { line: 5, message: 'has no barcode for record "r"' },
    ]);
  });

  it('JSON that does not parse, or is neither form, is no mapping at all', () => {
    expect(() => parseRecordMapping('{"r": ["a"],')).toThrow(/is not valid JSON/);
    expect(() => parseRecordMapping('[1, 2]')).toThrow(/has no usable record id and barcode in 2 entries/);
    expect(() => parseRecordMapping('  {"r": 3.5}')).toThrow(RecordMappingError);
  });

  it('finds where entries start, strings with escaped quotes and brackets included', () => {
    const text = '{\n "a\\"[": [\n  "x",\n  "y]"\n ],\n "b": 1\n}';
    expect(jsonEntries(text)).toEqual([
      { line: 2, key: 'a"[', entries: [3, 4] },
      { line: 6, key: 'b', entries: [] },
    ]);
  });
});
