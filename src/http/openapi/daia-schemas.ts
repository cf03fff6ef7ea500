/**
 * The DAIA 1.0 response schema (gbv/daia's daia.schema.json, JSON Schema
 * draft-04, kept in test/fixtures/daia) restated for OpenAPI 3.1 (JSON
 * Schema 2020-12): its `types` become components, their names prefixed
 * with Daia. The conformance suite checks DAIA answers against both.
 */

const r = (name: string) => ({ $ref: `#/components/schemas/Daia${name}` });

const URI = { type: 'string', format: 'uri' };
const URL = { type: 'string', format: 'uri', pattern: '^https?:' };
const entity = {
  type: 'object',
  additionalProperties: false,
  properties: { content: { type: 'string' }, href: URL, id: URI },
};
const service = { anyOf: [URI, { enum: ['presentation', 'loan', 'remote', 'interloan', 'openaccess'] }] };
const duration = {
  anyOf: [
    {
      type: 'string',
      pattern: '^-?P([0-9]+Y)?([0-9]+M)?([0-9]+D)?T?([0-9]+H)?([0-9]+M)?([0-9]+(\\.[0-9]+)?S)?$',
    },
    { enum: ['unknown'] },
  ],
};
const anydate = {
  anyOf: [
    { type: 'string', pattern: '^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9](Z|[+-][0-9][0-9]:[0-9][0-9])?$' },
    { enum: ['unknown'] },
  ],
};

export const daiaSchemas = {
  DaiaResponse: {
    type: 'object',
    required: ['document'],
    additionalProperties: false,
    properties: {
      $schema: URL,
      '@context': URL,
      document: { type: 'array', items: r('Document') },
      institution: r('Entity'),
      timestamp: { type: 'string', format: 'date-time' },
    },
  },
  DaiaEntity: entity,
  DaiaDocument: {
    type: 'object',
    required: ['id'],
    additionalProperties: false,
    properties: {
      about: { type: 'string' },
      href: URL,
      id: URI,
      item: { type: 'array', items: r('Item') },
      requested: { type: 'string' },
    },
  },
  DaiaItem: {
    type: 'object',
    additionalProperties: false,
    properties: {
      about: { type: 'string' },
      available: { type: 'array', items: r('Available') },
      chronology: { type: 'object', properties: { about: { type: 'string' } } },
      department: r('Entity'),
      href: URL,
      id: URI,
      label: { type: 'string' },
      part: { enum: ['broader', 'narrower'] },
      storage: r('Entity'),
      unavailable: { type: 'array', items: r('Unavailable') },
    },
  },
  DaiaAvailable: {
    type: 'object',
    required: ['service'],
    additionalProperties: false,
    properties: {
      delay: duration,
      href: URL,
      limitation: { type: 'array', items: r('Entity') },
      service,
      title: { type: 'string' },
    },
  },
  DaiaUnavailable: {
    type: 'object',
    required: ['service'],
    additionalProperties: false,
    properties: {
      expected: anydate,
      href: URL,
      limitation: { type: 'array', items: r('Entity') },
      queue: { type: 'integer', minimum: 1 },
      service,
      title: { type: 'string' },
    },
  },
};
