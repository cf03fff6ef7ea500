import type { Context } from 'hono';
import { coreVisibleScopes, formatScopes } from '../auth/scopes.js';
import type { PaiaError } from './errors.js';
import { DEFAULT_FORMAT } from './middleware/paia-format/index.js';
import { applyResponsePolicy } from './middleware/response-policy/index.js';
import { encodeBody, escapeJsonText } from './response-charset.js';

/** The PAIA version this server was checked against (X-PAIA-Version). */
const PAIA_VERSION = '1.4.0';

/** The DAIA version this server was checked against (X-DAIA-Version). */
const DAIA_VERSION = '1.0.0';

/** Response headers a cross-origin client may read. */
const EXPOSED_HEADERS = [
  'X-PAIA-Version',
  'X-OAuth-Scopes',
  'X-Accepted-OAuth-Scopes',
  'WWW-Authenticate',
  'Retry-After',
  'X-Request-Id',
].join(', ');

/** Response headers a cross-origin DAIA client may read. */
const DAIA_EXPOSED_HEADERS = ['X-DAIA-Version', 'Link', 'Retry-After', 'X-Request-Id'].join(', ');

export interface RenderOptions {
  /** Realm of the WWW-Authenticate challenge. */
  realm: string;
}

/**
 * Every response of the app is made here, so every one carries the same
 * contract: a JSON object (or JSONP call) in the negotiated charset with the
 * charset in Content-Type; X-PAIA-Version; X-OAuth-Scopes and
 * X-Accepted-OAuth-Scopes; CORS (per the response policy); X-Request-Id; no
 * caching (patron data and tokens); the secure headers (nosniff,
 * Referrer-Policy, X-Frame-Options, CSP, HSTS over HTTPS when enabled); status
 * 200 when suppress_response_codes was given.
 */
export function respond(
  c: Context,
  status: number,
  body: object,
  headers: Readonly<Record<string, string>> = {},
): Response {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new TypeError('a PAIA response body must be a JSON object');
  }
  const format = c.get('format') ?? DEFAULT_FORMAT;
  const json = escapeJsonText(JSON.stringify(body), format.charset);
  const text = format.callback !== undefined ? `/**/${format.callback}(${json});` : json;
  const mediaType = format.callback !== undefined ? 'application/javascript' : 'application/json';

  // A plain object, not Headers: @hono/node-server writes it as it is (Headers costs a conversion per response).
  const h: Record<string, string> = { 'Content-Type': `${mediaType}; charset=${format.charset}` };
  if (format.api === 'daia') {
    // DAIA is public: no tokens, no scopes.
    h['X-DAIA-Version'] = DAIA_VERSION;
    h['Access-Control-Expose-Headers'] = DAIA_EXPOSED_HEADERS;
  } else {
    h['X-PAIA-Version'] = PAIA_VERSION;
    const tokenScopes = c.get('tokenScopes') ?? [];
    h['X-OAuth-Scopes'] = formatScopes(format.api === 'core' ? coreVisibleScopes(tokenScopes) : tokenScopes);
    h['X-Accepted-OAuth-Scopes'] = c.get('acceptedScopes') ?? '';
    h['Access-Control-Expose-Headers'] = EXPOSED_HEADERS;
  }
  h['Cache-Control'] = 'no-store';
  h.Pragma = 'no-cache';
  const requestId = c.get('requestId');
  if (requestId !== undefined) h['X-Request-Id'] = requestId;
  for (const name in headers) h[name] = headers[name]!;
  applyResponsePolicy(c, h);

  return new Response(encodeBody(text, format.charset), {
    status: format.suppressResponseCodes ? 200 : status,
    headers: h,
  });
}

/**
 * A request error: `{error, code?, error_description}` with a Bearer
 * challenge in WWW-Authenticate (spec: on every request error). `code` is
 * given in core bodies and never in auth bodies (OAuth clients).
 */
export function respondError(c: Context, error: PaiaError, options: RenderOptions): Response {
  const format = c.get('format') ?? DEFAULT_FORMAT;
  c.set('errorCode', error.error);
  const body: Record<string, unknown> = { error: error.error };
  if (format.api !== 'auth') body.code = error.status;
  body.error_description = error.description;
  // DAIA error responses are plain {error, code, error_description}: there is no token to challenge for.
  if (format.api === 'daia') return respond(c, error.status, body, error.headers);
  return respond(c, error.status, body, { ...error.headers, 'WWW-Authenticate': challenge(options.realm, error) });
}

function challenge(realm: string, error: PaiaError): string {
  const params = [`realm="${quote(realm)}"`];
  if (error.challenge.error !== undefined) params.push(`error="${error.challenge.error}"`);
  if (error.challenge.scope !== undefined) params.push(`scope="${quote(error.challenge.scope)}"`);
  return `Bearer ${params.join(', ')}`;
}

/** A quoted-string value without quotes, backslashes or control characters. */
function quote(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters must not reach a header value
  return value.replace(/["\\\u0000-\u001f\u007f-\uffff]/g, '');
}
