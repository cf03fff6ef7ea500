import { z } from 'zod';
import { DEFAULT_LOGIN_SCOPES, METHOD_SCOPE, type PaiaMethod, SCOPES } from '../../auth/scopes.js';
import { feeRecordSchema, feeSchema, paiaDocumentSchema, patronRecordSchema } from '../../backend/paia-schemas.js';
import { VERSION } from '../../version.js';
import { PAIA_ERROR_CODES } from '../errors.js';
import { daiaSchemas } from './daia-schemas.js';

/**
 * The OpenAPI 3.1 description of what this gateway serves: PAIA core, PAIA
 * auth and (when on) DAIA, paths under the base path. Built from the same
 * constants the routes use (METHOD_SCOPE, the base path, maxDocs), so scopes
 * and limits cannot drift; the conformance suite checks every response it
 * receives against this document (test/conformance/openapi-check.ts).
 *
 * Response shapes are derived from the backend's (src/backend/paia-schemas.ts:
 * PatronRecord, PaiaDocument, FeeRecord), request bodies follow src/http/schemas.ts, errors src/http/errors.ts
 * and respond.ts (`code` in core and DAIA error bodies, never in auth ones).
 */

export interface OpenApiOptions {
  /** "" or "/paia", as the app normalises it. */
  basePath: string;
  /** Most documents in one renew, request or cancel. */
  maxDocs: number;
  /** Whether DAIA is served at {basePath}/daia. */
  daia: boolean;
}

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Json) => ({ 'application/json': { schema } });

/** What each error status means here (src/http/errors.ts). */
const ERROR_STATUS: Readonly<Record<number, string>> = {
  400: 'invalid_request: the request cannot be parsed (JSON, content type, charset, body size, callback, access_token given twice)',
  401: 'invalid_grant: no access token, or an unknown or expired one',
  403: 'access_denied (the token belongs to another patron; login: wrong username or password, client not allowed, weak password) or insufficient_scope',
  404: 'not_found: the library system does not know this patron account',
  414: 'invalid_request: the URL is too long',
  422: 'invalid_request: the request parses but does not fit the method (missing or wrong fields, too many documents, unknown format)',
  429: 'service_unavailable: too many requests with this access token (or, for DAIA, ids from this address) this minute; see Retry-After',
  500: 'internal_error: an unexpected error, logged with the request id',
  501: 'not_implemented: the method or variant is not supported by this server',
  502: 'bad_gateway: the library system cannot be reached or sent an answer that could not be understood',
  503: "service_unavailable: the library system or the state store is unavailable, the library system refuses this service's own login, or the server is busy; see Retry-After",
  504: 'gateway_timeout: the library system did not answer in time',
};

const SPECIAL_PARAMETERS = {
  callback: {
    name: 'callback',
    in: 'query',
    required: false,
    description:
      'JSONP: wrap the response in a call of this function (letters, digits and underscores only); the media type is then application/javascript',
    schema: { type: 'string', pattern: '^[A-Za-z0-9_]+$' },
  },
  suppress_response_codes: {
    name: 'suppress_response_codes',
    in: 'query',
    required: false,
    description: 'When present, every response has HTTP status 200; errors are told by the body only',
    schema: { type: 'string' },
    allowEmptyValue: true,
  },
  access_token: {
    name: 'access_token',
    in: 'query',
    required: false,
    description:
      'The access token, instead of "Authorization: Bearer"; both given and different is a 400. Prefer the header: URLs end up in logs',
    schema: { type: 'string' },
  },
  patron: {
    name: 'patron',
    in: 'path',
    required: true,
    description: 'The patron identifier, as the login response names it',
    schema: { type: 'string' },
  },
} as const;

const parameterRef = (name: keyof typeof SPECIAL_PARAMETERS) => ({ $ref: `#/components/parameters/${name}` });

function errors(
  statuses: readonly number[],
  schema: 'CoreError' | 'AuthError' | 'DaiaError',
  more: Readonly<Record<number, string>> = {},
): Json {
  const out: Json = {};
  for (const status of statuses) {
    const also = more[status];
    out[String(status)] = {
      description: also === undefined ? ERROR_STATUS[status] : `${ERROR_STATUS[status]}; ${also}`,
      content: json(ref(schema)),
    };
  }
  return out;
}

/** The errors every core method can answer. */
const CORE_ERRORS = [400, 401, 403, 404, 414, 422, 429, 500, 502, 503, 504];

/** A GET (with its HEAD) or POST operation of PAIA core. */
function coreOperation(method: PaiaMethod, summary: string, ok: Json, body?: Json): Json {
  const scope = METHOD_SCOPE[method];
  return {
    operationId: method,
    tags: ['PAIA core'],
    summary,
    description: `Needs an access token with the scope ${scope}.`,
    security: [{ paia: scope === null ? [] : [scope] }],
    parameters: [parameterRef('access_token')],
    ...(body === undefined ? {} : { requestBody: { required: true, content: json(body) } }),
    responses: { '200': { description: 'OK', content: json(ok) }, ...errors(CORE_ERRORS, 'CoreError') },
  };
}

function headOf(operation: Json): Json {
  const responses: Json = {};
  for (const [status, response] of Object.entries(operation.responses as Json)) {
    responses[status] = { description: (response as Json).description };
  }
  return { ...operation, operationId: `${String(operation.operationId)}Head`, summary: 'Headers only', responses };
}

function optionsOperation(id: string, tag: string): Json {
  return {
    operationId: `${id}Options`,
    tags: [tag],
    summary: 'CORS preflight: Allow and Access-Control-* headers, no token needed',
    security: [],
    responses: { '200': { description: 'An empty JSON object', content: json({ type: 'object', maxProperties: 0 }) } },
  };
}

function corePaths(core: string): Json {
  const get = (method: PaiaMethod, summary: string, ok: Json) => {
    const op = coreOperation(method, summary, ok);
    return { get: op, head: headOf(op), options: optionsOperation(method, 'PAIA core') };
  };
  const post = (method: PaiaMethod, summary: string, body: Json) => ({
    post: coreOperation(method, summary, ref('DocumentList'), body),
    options: optionsOperation(method, 'PAIA core'),
  });
  return {
    [`${core}/{patron}`]: get('patron', 'The patron account: name, contact, expiry, account state', ref('Patron')),
    [`${core}/{patron}/items`]: get('items', 'Loans, reservations and requests of the patron', ref('DocumentList')),
    [`${core}/{patron}/renew`]: post('renew', 'Renew loans; each document answers on its own', ref('DocumentRequest')),
    [`${core}/{patron}/request`]: post('request', 'Request or reserve documents', ref('PickupRequest')),
    [`${core}/{patron}/cancel`]: post('cancel', 'Cancel requests or reservations', ref('DocumentRequest')),
    [`${core}/{patron}/fees`]: get('fees', 'Fees the patron owes', ref('Fees')),
  };
}

function authPaths(auth: string): Json {
  const loginBody = ref('LoginRequest');
  return {
    [`${auth}/login`]: {
      post: {
        operationId: 'login',
        tags: ['PAIA auth'],
        summary: 'Log in with username and password (OAuth 2.0 password grant); answers an access token',
        security: [],
        requestBody: {
          required: true,
          content: { ...json(loginBody), 'application/x-www-form-urlencoded': { schema: loginBody } },
        },
        responses: {
          '200': { description: 'Logged in', content: json(ref('LoginResponse')) },
          ...errors([400, 403, 414, 422, 500, 502, 503, 504], 'AuthError', {
            400: 'unsupported_grant_type: grant_type client_credentials where no trusted clients are configured',
          }),
        },
      },
      options: optionsOperation('login', 'PAIA auth'),
    },
    [`${auth}/logout`]: {
      post: {
        operationId: 'logout',
        tags: ['PAIA auth'],
        summary: "End the access token's session (and the patron's session at the library system)",
        security: [{ paia: [] }],
        parameters: [parameterRef('access_token')],
        requestBody: {
          required: true,
          content: {
            ...json(ref('LogoutRequest')),
            'application/x-www-form-urlencoded': { schema: ref('LogoutRequest') },
          },
        },
        responses: {
          '200': { description: 'Logged out', content: json(ref('LogoutResponse')) },
          ...errors([400, 401, 403, 414, 422, 429, 500, 503, 504], 'AuthError'),
        },
      },
      options: optionsOperation('logout', 'PAIA auth'),
    },
    [`${auth}/change`]: {
      post: {
        operationId: 'change',
        tags: ['PAIA auth'],
        summary: 'Change the password: not supported (SIP2 cannot change passwords), always 501',
        security: [{ paia: [METHOD_SCOPE.change] }],
        responses: errors([400, 414, 501], 'AuthError'),
      },
      options: optionsOperation('change', 'PAIA auth'),
    },
  };
}

function daiaPaths(daia: string): Json {
  const get = {
    operationId: 'daia',
    tags: ['DAIA'],
    summary: 'Availability of documents (DAIA 1.0), public: no access token',
    security: [],
    parameters: [
      {
        name: 'id',
        in: 'query',
        required: true,
        description:
          'One or more document ids separated by |: item URIs or barcodes, and records (edition URIs, or record ids with the configured prefix, "ppn:" by default) when the gateway has a record mapping; beyond the per-request limit the rest is in a Link rel="next" URL',
        schema: { type: 'string' },
      },
      { name: 'format', in: 'query', required: true, schema: { type: 'string', enum: ['json'] } },
    ],
    responses: {
      '200': { description: 'DAIA response', content: json(ref('DaiaResponse')) },
      ...errors([400, 414, 422, 429, 500, 501, 502, 503, 504], 'DaiaError'),
    },
  };
  return { [daia]: { get, head: headOf(get), options: optionsOperation('daia', 'DAIA') } };
}

/**
 * The backend's PAIA data as OpenAPI components, derived from its schemas (backend/paia-schemas.ts): a
 * fee list refers to Fee. zod writes a numeric literal union as "number" and an int's upper bound as
 * MAX_SAFE_INTEGER; both are put as the description always said them (integer, no upper bound), and the
 * `$schema` and `$id` zod puts on each are left out (components of this document, not documents).
 */
function paiaSchemas(): Json {
  const registry = z.registry<{ id: string }>();
  registry.add(patronRecordSchema, { id: 'Patron' });
  registry.add(paiaDocumentSchema, { id: 'Document' });
  registry.add(feeSchema, { id: 'Fee' });
  registry.add(feeRecordSchema, { id: 'Fees' });
  const { schemas } = z.toJSONSchema(registry, {
    uri: (id) => `#/components/schemas/${id}`,
    override: ({ jsonSchema }) => {
      if (jsonSchema.type === 'number' && jsonSchema.enum?.every((value) => Number.isInteger(value)))
        jsonSchema.type = 'integer';
      if (jsonSchema.type === 'integer' && jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
    },
  });
  const out: Json = {};
  for (const [id, { $schema: _schema, $id: _id, ...schema }] of Object.entries(schemas)) out[id] = schema;
  return out;
}

function schemas(maxDocs: number): Json {
  const identified = { anyOf: [{ required: ['item'] }, { required: ['edition'] }] };
  const docList = (element: string) => ({
    type: 'object',
    required: ['doc'],
    properties: { doc: { type: 'array', minItems: 1, maxItems: maxDocs, items: ref(element) } },
  });
  return {
    ...paiaSchemas(),
    DocumentList: {
      type: 'object',
      required: ['doc'],
      additionalProperties: false,
      properties: { doc: { type: 'array', items: ref('Document') } },
    },
    DocumentRequest: docList('DocumentSelector'),
    DocumentSelector: {
      type: 'object',
      properties: { item: { type: 'string' }, edition: { type: 'string' } },
      ...identified,
    },
    PickupRequest: docList('PickupSelector'),
    PickupSelector: {
      type: 'object',
      properties: {
        item: { type: 'string' },
        edition: { type: 'string' },
        storage: { type: 'string', description: 'Pickup location (name)' },
        storageid: { type: 'string', description: 'Pickup location (URI)' },
      },
      ...identified,
    },
    LoginRequest: {
      oneOf: [
        {
          type: 'object',
          title: 'password',
          required: ['username', 'password', 'grant_type'],
          properties: {
            username: { type: 'string', minLength: 1 },
            password: { type: 'string', minLength: 1, format: 'password' },
            grant_type: { type: 'string', enum: ['password'] },
            scope: {
              type: 'string',
              description: `Space-separated scopes; default ${DEFAULT_LOGIN_SCOPES.join(' ')}`,
            },
          },
        },
        {
          type: 'object',
          title: 'client_credentials',
          description:
            'A trusted client (auth.clients, authenticated with HTTP Basic: client id and secret) logs a patron in without the password (single sign-on); off unless configured (then 400 unsupported_grant_type)',
          required: ['patron', 'grant_type'],
          properties: {
            patron: { type: 'string', minLength: 1, description: "The patron's username or barcode" },
            grant_type: { type: 'string', enum: ['client_credentials'] },
            scope: { type: 'string', description: "Space-separated scopes; at most the client's" },
          },
        },
      ],
    },
    LoginResponse: {
      type: 'object',
      required: ['patron', 'access_token', 'token_type', 'scope', 'expires_in'],
      additionalProperties: false,
      properties: {
        patron: { type: 'string' },
        access_token: { type: 'string' },
        token_type: { type: 'string', enum: ['Bearer'] },
        scope: { type: 'string' },
        expires_in: { type: 'integer', minimum: 1 },
      },
    },
    LogoutRequest: {
      type: 'object',
      required: ['patron'],
      properties: { patron: { type: 'string', minLength: 1 } },
    },
    LogoutResponse: {
      type: 'object',
      required: ['patron'],
      additionalProperties: false,
      properties: { patron: { type: 'string' } },
    },
    CoreError: errorSchema(true),
    DaiaError: errorSchema(true),
    AuthError: errorSchema(false),
    ...daiaSchemas,
  };
}

/**
 * `{error, code, error_description}`; auth bodies have no `code` (OAuth clients, spec: SHOULD NOT), and only
 * the login (auth) answers OAuth's unsupported_grant_type.
 */
function errorSchema(withCode: boolean): Json {
  const codes = withCode ? PAIA_ERROR_CODES.filter((code) => code !== 'unsupported_grant_type') : PAIA_ERROR_CODES;
  return {
    type: 'object',
    required: withCode ? ['error', 'code', 'error_description'] : ['error', 'error_description'],
    additionalProperties: false,
    properties: {
      error: { type: 'string', enum: [...codes] },
      ...(withCode ? { code: { type: 'integer', minimum: 400, maximum: 599 } } : {}),
      error_description: { type: 'string' },
    },
  };
}

/** Adds the path's own parameters and the special ones every method takes (callback, suppress_response_codes) to each path item. */
function withParameters(paths: Json, own: Json[]): Json {
  const out: Json = {};
  for (const [path, item] of Object.entries(paths)) {
    out[path] = {
      parameters: [...own, parameterRef('callback'), parameterRef('suppress_response_codes')],
      ...(item as Json),
    };
  }
  return out;
}

/** The OpenAPI 3.1 document for these settings. */
export function openApiDocument(options: OpenApiOptions): Json {
  const base = options.basePath;
  return {
    openapi: '3.1.0',
    info: {
      title: 'paia-sip2: PAIA and DAIA over SIP2',
      version: VERSION,
      description:
        'PAIA core and auth (Patrons Account Information API, https://gbv.github.io/paia/) and DAIA (Document Availability Information API, https://gbv.github.io/daia/) as this gateway serves them. Log in with the Authorize button (password flow) to try the core methods.',
    },
    paths: {
      ...withParameters(corePaths(`${base}/core`), [parameterRef('patron')]),
      ...withParameters(authPaths(`${base}/auth`), []),
      ...(options.daia ? withParameters(daiaPaths(`${base}/daia`), []) : {}),
    },
    components: {
      schemas: schemas(options.maxDocs),
      parameters: SPECIAL_PARAMETERS,
      securitySchemes: {
        paia: {
          type: 'oauth2',
          // One flow: a second one (client credentials) would put a second login form on the /docs page.
          description:
            'PAIA auth: POST username and password to the login method; send the token as Bearer. Trusted clients (auth.clients) may log a patron in with grant_type=client_credentials and HTTP Basic instead (see LoginRequest)',
          flows: {
            password: {
              tokenUrl: `${base}/auth/login`,
              scopes: Object.fromEntries(SCOPES.map((scope) => [scope, SCOPE_DESCRIPTION[scope]])),
            },
          },
        },
      },
    },
  };
}

const SCOPE_DESCRIPTION: Readonly<Record<(typeof SCOPES)[number], string>> = {
  read_patron: 'Read the patron account',
  read_fees: 'Read fees',
  read_items: 'Read loans and requests',
  write_items: 'Renew, request and cancel',
  change_password: 'Change the password (never granted here)',
};
