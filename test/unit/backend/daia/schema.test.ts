import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DAIA_FIXTURES, daiaSchemaErrors } from '../../../helpers/daia-schema.js';

const read = (name: string): unknown => JSON.parse(readFileSync(`${DAIA_FIXTURES}${name}`, 'utf8'));

describe('the official DAIA schema and examples (gbv/daia)', () => {
  const responses = readdirSync(DAIA_FIXTURES)
    .filter((name) => /^response-\d+\.json$/.test(name))
    .sort();

  it('has the examples', () => {
    expect(responses.length).toBeGreaterThanOrEqual(7);
  });

  for (const name of responses.filter((n) => n !== 'response-7.json')) {
    it(`${name} is valid`, () => {
      expect(daiaSchemaErrors(read(name))).toEqual([]);
    });
  }

  it('response-7.json fails only the strict uri format (a URN with an en dash), as the reference README says', () => {
    const errors = daiaSchemaErrors(read('response-7.json'));
    expect(errors.map((e) => [e.instancePath, e.keyword, e.params.format])).toEqual([
      ['/document/0/id', 'format', 'uri'],
    ]);
  });

  const invalid = readFileSync(`${DAIA_FIXTURES}invalid.ldjson`, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
  it('invalid.ldjson has lines', () => {
    expect(invalid.length).toBeGreaterThan(0);
  });
  invalid.forEach((line, i) => {
    it(`invalid.ldjson line ${i + 1} is rejected: ${line.slice(0, 60)}`, () => {
      expect(daiaSchemaErrors(JSON.parse(line)).length).toBeGreaterThan(0);
    });
  });
});
