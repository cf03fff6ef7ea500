import { z } from 'zod';
import { fieldPathProblem } from '../../backend/daia/records/field-path.js';
import { DEFAULT_FILE_CHECK_MS } from '../../backend/daia/records/file-source.js';
import { HTTP_LOOKUP_DEFAULTS } from '../../backend/daia/records/http-source.js';
import { DEFAULT_MAX_ITEMS_PER_RECORD } from '../../backend/daia/records/mapping.js';
import { filePath, integer, milliseconds, must, secret, section, uriTemplateProblem } from './validators.js';

/** daia.records: DAIA by record, which ids name records and where their copies' barcodes come from. */

/** VuFind's DAIA driver's default daiaIdPrefix (DAIA.php init()), so its record ids are recognised unconfigured. */
const DEFAULT_RECORD_ID_PREFIX = 'ppn:';
const RECORD_PREFIX_MUST_BE =
  'must be the text VuFind\'s DAIA.ini daiaIdPrefix puts before its record ids, starting with a URI scheme (e.g. "ppn:" or "https://lib.example.org/record/"), or null for edition URIs only';
const HEADERS_MUST_BE =
  'must be a list of request headers, e.g. [{name: Authorization, value: "Basic ..."}, {name: x-okapi-tenant, value: diku}], or [] for none';
/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Request headers of the record lookup (an API key or token): a secret, so
 * every problem is reported at the setting itself, never with a value.
 */
const lookupHeaders = z.unknown().transform((value, ctx) => {
  const hidden = (message: string) => {
    ctx.addIssue({ code: 'custom', message, params: { showValue: false } });
    return z.NEVER;
  };
  if (!Array.isArray(value)) return hidden(HEADERS_MUST_BE);
  const headers: { name: string; value: string }[] = [];
  for (const [index, entry] of value.entries()) {
    const {
      name,
      value: text,
      ...rest
    } = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    if (typeof name !== 'string' || typeof text !== 'string' || Object.keys(rest).length > 0)
      return hidden(`has entry ${index + 1}, which is not {name, value}; ${HEADERS_MUST_BE}`);
    if (!HEADER_NAME.test(name))
      return hidden(`has ${JSON.stringify(name.slice(0, 40))}, which is not an HTTP header name; ${HEADERS_MUST_BE}`);
    if (/[\r\n\0]/.test(text))
      return hidden(`has a value for ${name} that is not one line of text; ${HEADERS_MUST_BE}`);
    headers.push({ name, value: text });
  }
  return headers;
});

/** Records: ids of the discovery system's bibliographic records, turned into item barcodes by a mapping file or an ILS API. */
export const recordsSection = section({
  /**
   * Request ids starting with this name records: what VuFind's DAIA.ini
   * daiaIdPrefix puts before its record ids ("ppn:" there too unless set),
   * so the two must be the same text. It must start with a URI scheme: the
   * document id is the id as requested, and DAIA wants a URI there. Edition
   * URIs (paia.editionUri) always name records. null: edition URIs only.
   */
  idPrefix: z
    .string(must(RECORD_PREFIX_MUST_BE))
    .regex(/^[A-Za-z][A-Za-z0-9+.-]*:[^\s|]*$/, must(RECORD_PREFIX_MUST_BE))
    .nullable()
    .default(DEFAULT_RECORD_ID_PREFIX),
  /** Most copies answered per record (the first ones of the file or of the lookup's answer). */
  maxItemsPerRecord: integer(1, 10_000, 'must be a whole number of copies between 1 and 10000').default(
    DEFAULT_MAX_ITEMS_PER_RECORD,
  ),
  /**
   * A mapping file, record id and barcode, as exported from the ILS: CSV
   * (record,barcode per line) or JSON ({"record": ["barcode", ...]} or
   * [{"record": ..., "barcode": ...}]). Re-read when it changes. With
   * http.url too, the file answers the records it lists and the lookup the
   * others. null: no file (demo mode without http.url: the demo library's
   * sip2-simulator/data/demo-records.json).
   */
  file: filePath('must be the path of a CSV or JSON file of record ids and barcodes, or null').nullable().default(null),
  /** How often the mapping file is checked for changes (its size, modification time and inode). */
  fileCheckMs: milliseconds(1000, 3_600_000, DEFAULT_FILE_CHECK_MS).default(DEFAULT_FILE_CHECK_MS),
  /** An ILS API that lists a record's items, asked per record (for the records a mapping file does not list). */
  http: section({
    /**
     * URL template with {record} (filled in percent-encoded), e.g. Koha's
     * "https://koha.example.org/api/v1/biblios/{record}/items" or FOLIO's
     * "https://folio.example.org/inventory/items?query=instance.id=={record}".
     * null: no lookup.
     */
    url: z
      .string(must('must be an http(s) URL template containing {record}, or null'))
      .superRefine((value, ctx) => {
        const example = 'https://koha.example.org/api/v1/biblios/{record}/items';
        const problem =
          uriTemplateProblem(value, 'record', example) ??
          (/^https?:\/\//i.test(value) ? null : `must be an http:// or https:// URL, e.g. "${example}"`);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .nullable()
      .default(null),
    /** Where the barcodes are in the answer: "[].external_id" (Koha), "items[].barcode" (FOLIO); "[]" an entry of every array. */
    field: z
      .string(must('must be a field path such as "[].external_id" or "items[].barcode"'))
      .superRefine((value, ctx) => {
        const problem = fieldPathProblem(value);
        if (problem)
          ctx.addIssue({
            code: 'custom',
            message: `${problem}; write a field path such as "[].external_id" (Koha) or "items[].barcode" (FOLIO)`,
          });
      })
      .default(HTTP_LOOKUP_DEFAULTS.field),
    /**
     * Request headers, [{name, value}, ...]: e.g. Koha's Authorization (Basic
     * or Bearer), FOLIO's x-okapi-tenant and x-okapi-token. Secret: never
     * shown; best given as JSON in PAIA_DAIA_RECORDS_HTTP_HEADERS or the file
     * PAIA_DAIA_RECORDS_HTTP_HEADERS_FILE names. [] = none.
     */
    headers: secret(lookupHeaders.default([])),
    /** Bound on one lookup (below http.requestTimeoutMs); past it the record is answered without items. */
    timeoutMs: integer(100, 600_000, 'must be milliseconds between 100 and 600000 (e.g. 3000 for 3 s)').default(
      HTTP_LOOKUP_DEFAULTS.timeoutMs,
    ),
    /** How long a record's barcodes are reused before the API is asked again. */
    cacheMs: milliseconds(1000, 86_400_000, HTTP_LOOKUP_DEFAULTS.cacheTtlMs).default(HTTP_LOOKUP_DEFAULTS.cacheTtlMs),
    /** How long a failed lookup is remembered (the record answered without items meanwhile), so a dead API is not asked by every request. */
    failureCacheMs: milliseconds(1000, 3_600_000, HTTP_LOOKUP_DEFAULTS.failureTtlMs).default(
      HTTP_LOOKUP_DEFAULTS.failureTtlMs,
    ),
    /** Most records cached; the least recently used go first. */
    maxEntries: integer(1, 1_000_000, 'must be a whole number between 1 and 1000000').default(
      HTTP_LOOKUP_DEFAULTS.maxEntries,
    ),
    /** Lookups running at once, over all requests; more wait (within timeoutMs). */
    maxConcurrent: integer(1, 1000, 'must be a whole number between 1 and 1000').default(
      HTTP_LOOKUP_DEFAULTS.maxConcurrent,
    ),
    /** Largest answer read; a larger one is a failed lookup. */
    maxBodyBytes: integer(1024, 64 * 1024 * 1024, 'must be a size in bytes between 1024 and 67108864').default(
      HTTP_LOOKUP_DEFAULTS.maxBodyBytes,
    ),
  }),
});
