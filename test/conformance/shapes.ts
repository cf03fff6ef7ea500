/**
 * Validators for the response shapes of the Patron Account Service spec
 * (spec/patron-account-service.md, "Resources and their fields", "Errors",
 * "Auth methods"). Each returns a list of problems, each naming the field
 * path and what is wrong, so a test can `expect(problems).toEqual([])` and a
 * failure reads like a conformance report.
 *
 * Occurrence (0..1, 1..1, 0..n, 1..n) and data types are checked as the spec
 * defines them; fields the spec does not list are allowed (later revisions
 * and upstream PAIA add some) but must still be named in lowercase a-z.
 */

export type Problems = string[];

// ------------------------------------------------------------ data types

/** money: [0-9]+\.[0-9][0-9] [A-Z][A-Z][A-Z] (the fee total may be negative). */
const MONEY = /^[0-9]+\.[0-9][0-9] [A-Z]{3}$/;
const SIGNED_MONEY = /^-?[0-9]+\.[0-9][0-9] [A-Z]{3}$/;
/** date: YYYY-MM-DD. */
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** Upstream PAIA starttime/endtime: a datetime; a plain date is what its own examples and VuFind use. */
const DATE_OR_DATETIME = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2}))?$/;
/** Simple names: lowercase letters only. */
const SIMPLE_NAME = /^[a-z]+$/;
/** Field names the spec allows despite the a-z rule. */
const NAME_EXCEPTIONS: ReadonlySet<string> = new Set([
  'access_token',
  'token_type',
  'expires_in',
  'error_description',
  'error_uri',
]);
/** email: syntactically correct (a pragmatic subset of RFC 5322 addr-spec). */
const EMAIL =
  /^[^\s@"(),:;<>[\\\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** URI: syntactically correct and absolute (scheme ":" ...), without blanks. */
function isUri(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(value) && URL.canParse(value);
}

/** A real calendar date in YYYY-MM-DD. */
export function isDate(value: unknown): value is string {
  if (typeof value !== 'string' || !DATE.test(value)) return false;
  const d = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value;
}

export function isMoney(value: unknown): value is string {
  return typeof value === 'string' && MONEY.test(value);
}

function isEmail(value: unknown): value is string {
  return typeof value === 'string' && EMAIL.test(value);
}

/** Every key, at any depth, that is neither a-z only nor one of the named exceptions. */
export function fieldNameProblems(value: unknown, path = ''): Problems {
  const problems: Problems = [];
  if (Array.isArray(value)) {
    value.forEach((element, i) => {
      problems.push(...fieldNameProblems(element, `${path}[${i}]`));
    });
  } else if (isObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      const at = path === '' ? key : `${path}.${key}`;
      if (!SIMPLE_NAME.test(key) && !NAME_EXCEPTIONS.has(key)) problems.push(`${at}: field name is not lowercase a-z`);
      problems.push(...fieldNameProblems(child, at));
    }
  }
  return problems;
}

// ------------------------------------------------------------ field checks

type Check = (value: unknown) => boolean;
interface FieldRule {
  occ: '0..1' | '1..1';
  type: string;
  check: Check;
}

const string: Check = (v) => typeof v === 'string';
const uri: Check = isUri;
const date: Check = isDate;
const nonNegativeInteger: Check = isNonNegativeInteger;
const boolean: Check = (v) => typeof v === 'boolean';

function fields(value: unknown, path: string, rules: Record<string, FieldRule>): Problems {
  if (!isObject(value)) return [`${path}: must be a JSON object, got ${describe(value)}`];
  const problems: Problems = [];
  for (const [name, rule] of Object.entries(rules)) {
    const at = `${path}.${name}`;
    if (!(name in value) || value[name] === undefined) {
      if (rule.occ === '1..1') problems.push(`${at}: is mandatory (1..1) but missing`);
      continue;
    }
    if (!rule.check(value[name])) problems.push(`${at}: must be ${rule.type}, got ${describe(value[name])}`);
  }
  problems.push(...fieldNameProblems(value, path));
  return problems;
}

function describe(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

// ------------------------------------------------------------ resources

const DOCUMENT_RULES: Record<string, FieldRule> = {
  status: { occ: '1..1', type: 'a service status (number 0 to 5)', check: (v) => isNonNegativeInteger(v) && v <= 5 },
  item: { occ: '0..1', type: 'a URI', check: uri },
  edition: { occ: '0..1', type: 'a URI', check: uri },
  requested: { occ: '0..1', type: 'a URI', check: uri },
  about: { occ: '0..1', type: 'a string', check: string },
  label: { occ: '0..1', type: 'a string', check: string },
  queue: { occ: '0..1', type: 'a nonnegative integer', check: nonNegativeInteger },
  renewals: { occ: '0..1', type: 'a nonnegative integer', check: nonNegativeInteger },
  reminder: { occ: '0..1', type: 'a nonnegative integer', check: nonNegativeInteger },
  duedate: { occ: '0..1', type: 'a date YYYY-MM-DD', check: date },
  cancancel: { occ: '0..1', type: 'a boolean', check: boolean },
  canrenew: { occ: '0..1', type: 'a boolean', check: boolean },
  error: { occ: '0..1', type: 'a string', check: string },
  storage: { occ: '0..1', type: 'a string', check: string },
  storageid: { occ: '0..1', type: 'a URI', check: uri },
  // upstream PAIA (VuFind reads endtime)
  starttime: {
    occ: '0..1',
    type: 'a date or datetime',
    check: (v) => typeof v === 'string' && DATE_OR_DATETIME.test(v),
  },
  endtime: { occ: '0..1', type: 'a date or datetime', check: (v) => typeof v === 'string' && DATE_OR_DATETIME.test(v) },
};

/** Document: status 1..1, item/edition URIs (at least one), the optional fields with their types. */
function documentProblems(doc: unknown, path = 'doc'): Problems {
  const problems = fields(doc, path, DOCUMENT_RULES);
  if (isObject(doc) && doc.item === undefined && doc.edition === undefined) {
    problems.push(`${path}: each document MUST have an item URI or an edition URI (or both)`);
  }
  return problems;
}

/**
 * A `{doc: [...]}` response: doc is an array (repeatable fields are arrays),
 * each element a valid document, item+edition unique within the list.
 * `min` is 0 for items (0..n) and 1 for renew/request/cancel (1..n).
 */
export function docListProblems(body: unknown, min: 0 | 1): Problems {
  if (!isObject(body)) return [`response: must be a JSON object, got ${describe(body)}`];
  if (!Array.isArray(body.doc)) {
    // items: doc 0..n, so an absent doc is an empty list
    if (body.doc === undefined && min === 0) return fieldNameProblems(body);
    return [`doc: must be an array of documents, got ${describe(body.doc)}`];
  }
  const problems: Problems = [];
  if (body.doc.length < min) problems.push(`doc: must hold at least ${min} document(s) (${min}..n)`);
  body.doc.forEach((doc, i) => {
    problems.push(...documentProblems(doc, `doc[${i}]`));
  });
  problems.push(...fieldNameProblems({ ...body, doc: undefined }));
  return problems;
}

/** Item and edition together MUST identify a document uniquely among a patron's documents. */
export function duplicateDocuments(docs: readonly unknown[]): string[] {
  const seen = new Map<string, number>();
  for (const doc of docs) {
    if (!isObject(doc)) continue;
    const key = `${String(doc.item ?? '')} ${String(doc.edition ?? '')}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return [...seen].filter(([, n]) => n > 1).map(([key]) => key);
}

const PATRON_RULES: Record<string, FieldRule> = {
  name: { occ: '1..1', type: 'a string', check: string },
  email: { occ: '0..1', type: 'an email address', check: isEmail },
  expires: { occ: '0..1', type: 'a date YYYY-MM-DD', check: date },
  status: { occ: '0..1', type: 'an account state (nonnegative integer as a JSON number)', check: nonNegativeInteger },
  // upstream PAIA
  address: { occ: '0..1', type: 'a string', check: string },
  type: { occ: '0..1', type: 'a list of URIs', check: (v) => Array.isArray(v) && v.every(isUri) },
};

/** Patron record: name 1..1, email, expires, status. */
export function patronProblems(body: unknown): Problems {
  return fields(body, 'patron', PATRON_RULES);
}

const FEE_RULES: Record<string, FieldRule> = {
  amount: { occ: '1..1', type: 'money ("0.00 EUR")', check: isMoney },
  date: { occ: '0..1', type: 'a date YYYY-MM-DD', check: date },
  about: { occ: '0..1', type: 'a string', check: string },
  item: { occ: '0..1', type: 'a URI', check: uri },
  edition: { occ: '0..1', type: 'a URI', check: uri },
  // upstream PAIA (VuFind reads feetype and feeid)
  feetype: { occ: '0..1', type: 'a string', check: string },
  feeid: { occ: '0..1', type: 'a URI', check: uri },
};

/** Fee record: amount 0..1 money (the sum; may be negative), fee 0..n, each fee.amount 1..1 money. */
export function feeRecordProblems(body: unknown): Problems {
  const problems = fields(body, 'fees', {
    amount: {
      occ: '0..1',
      type: 'money (a negative sum allowed)',
      check: (v) => typeof v === 'string' && SIGNED_MONEY.test(v),
    },
  });
  if (!isObject(body)) return problems;
  if (body.fee !== undefined) {
    if (!Array.isArray(body.fee)) problems.push(`fees.fee: must be an array (0..n), got ${describe(body.fee)}`);
    else {
      body.fee.forEach((fee, i) => {
        problems.push(...fields(fee, `fees.fee[${i}]`, FEE_RULES));
      });
    }
  }
  return [...new Set(problems)];
}

const LOGIN_RULES: Record<string, FieldRule> = {
  patron: { occ: '1..1', type: 'a string', check: (v) => typeof v === 'string' && v !== '' },
  access_token: { occ: '1..1', type: 'a non-empty string', check: (v) => typeof v === 'string' && v !== '' },
  token_type: { occ: '1..1', type: '"Bearer" or "bearer"', check: (v) => v === 'Bearer' || v === 'bearer' },
  scope: {
    occ: '1..1',
    type: 'a string of space-separated scopes',
    check: (v) => typeof v === 'string' && /^(?:[\x21\x23-\x5b\x5d-\x7e]+(?: [\x21\x23-\x5b\x5d-\x7e]+)*)?$/.test(v),
  },
  expires_in: { occ: '0..1', type: 'a nonnegative integer', check: nonNegativeInteger },
};

/** Login response: patron, access_token, token_type, scope 1..1; expires_in 0..1. */
export function loginProblems(body: unknown): Problems {
  return fields(body, 'login', LOGIN_RULES);
}

/** Logout and change: patron 1..1. */
export function patronOnlyProblems(body: unknown): Problems {
  return fields(body, 'response', { patron: { occ: '1..1', type: 'a string', check: string } });
}

const ERROR_CODES = [
  'not_found',
  'not_implemented',
  'invalid_request',
  'invalid_grant',
  'insufficient_scope',
  'access_denied',
  'internal_error',
  'service_unavailable',
  'bad_gateway',
  'gateway_timeout',
];

/** Auth's login is an OAuth token endpoint: of OAuth's own error codes (RFC 6749 5.2), the one the gateway uses. */
const OAUTH_LOGIN_ERROR_CODES = ['unsupported_grant_type'];

/**
 * Request error body: error 1..1 (alphanumerical code), code 0..1
 * (nonnegative integer; REQUIRED in core with suppress_response_codes,
 * SHOULD be omitted in auth), error_description 0..1, error_uri 0..1.
 */
export function errorBodyProblems(
  body: unknown,
  options: { api: 'core' | 'auth'; status: number; suppressed?: boolean },
): Problems {
  const problems = fields(body, 'error', {
    error: {
      occ: '1..1',
      type: options.api === 'auth' ? 'an error code of the spec or of OAuth' : 'an error code of the spec',
      check: (v) =>
        typeof v === 'string' &&
        (ERROR_CODES.includes(v) || (options.api === 'auth' && OAUTH_LOGIN_ERROR_CODES.includes(v))),
    },
    code: { occ: '0..1', type: 'a nonnegative integer (the HTTP status)', check: nonNegativeInteger },
    error_description: { occ: '0..1', type: 'a string', check: string },
    error_uri: { occ: '0..1', type: 'a string', check: string },
  });
  if (!isObject(body)) return problems;
  if (body.code !== undefined && body.code !== options.status)
    problems.push(`error.code: is ${describe(body.code)}, the error's status is ${options.status}`);
  if (options.api === 'core' && options.suppressed && body.code === undefined) {
    problems.push('error.code: is REQUIRED in core responses when suppress_response_codes is given');
  }
  if (options.api === 'auth' && body.code !== undefined)
    problems.push('error.code: SHOULD be omitted in auth responses (OAuth clients)');
  return problems;
}
