/**
 * The demo's record mapping (sip2-simulator/data/demo-records.json), which
 * demo mode serves DAIA records from: it must say what the demo library
 * says (sip2-simulator/data/demo.json: each item's titleId), no more, no
 * less, so that an edition URI of a demo title lists exactly its copies.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseRecordMapping } from '../../../src/backend/daia/records/mapping.js';
import { DEMO_RECORD_MAPPING } from '../../../src/gateway/records.js';
import { packagePath } from '../../../src/package-root.js';

describe('the demo record mapping', () => {
  it("lists every demo title's copies, as demo.json has them, and reads without a broken line", () => {
    const demo = JSON.parse(readFileSync(packagePath('sip2-simulator', 'data', 'demo.json'), 'utf8')) as {
      items: Array<{ barcode: string; titleId: string }>;
    };
    const expected = new Map<string, string[]>();
    for (const { barcode, titleId } of demo.items) expected.set(titleId, [...(expected.get(titleId) ?? []), barcode]);
    const { mapping, problems } = parseRecordMapping(readFileSync(DEMO_RECORD_MAPPING, 'utf8'));
    expect(problems).toEqual([]);
    expect(new Map(mapping.records)).toEqual(expected);
    expect(expected.get('t-verwandlung')).toEqual(['it-0031', 'it-0032']);
  });
});
