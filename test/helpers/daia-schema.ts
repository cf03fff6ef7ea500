/**
 * The official DAIA JSON Schema (test/fixtures/daia, from gbv/daia) compiled
 * with ajv-draft-04 + ajv-formats, strict mode off, as the reference README says.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ajvDraft04 from 'ajv-draft-04';
import ajvFormats from 'ajv-formats';

// CommonJS modules whose module.exports is the class/plugin itself (with a .default alias for TypeScript).
const Ajv04 = ajvDraft04 as unknown as typeof ajvDraft04.default;
const addFormats = ajvFormats as unknown as typeof ajvFormats.default;

export const DAIA_FIXTURES = fileURLToPath(new URL('../fixtures/daia/', import.meta.url));

const schema = JSON.parse(readFileSync(`${DAIA_FIXTURES}daia.schema.json`, 'utf8')) as object;
const ajv = new Ajv04({ strict: false, allErrors: true });
addFormats(ajv);
const validate = ajv.compile(schema);

export interface SchemaError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** The schema errors of a value; [] when it is a valid DAIA response. */
export function daiaSchemaErrors(value: unknown): SchemaError[] {
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => ({
    instancePath: e.instancePath,
    keyword: e.keyword,
    ...(e.message === undefined ? {} : { message: e.message }),
    params: e.params as Record<string, unknown>,
  }));
}
