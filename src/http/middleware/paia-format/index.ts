import { malformed } from '../../errors.js';
import { negotiateCharset, type ResponseCharset } from '../../response-charset.js';
import type { RequestStep } from '../request-steps/index.js';
import { urlOf } from '../request-url/index.js';

/** What this middleware hands to the handlers and the renderer after it. */
interface PaiaFormatVariables {
  /** How to render the response. */
  format: ResponseFormat;
}

declare module 'hono' {
  interface ContextVariableMap extends PaiaFormatVariables {}
}

/** How the response to this request is rendered. */
export interface ResponseFormat {
  charset: ResponseCharset;
  /** JSONP function name, only when valid. */
  callback?: string;
  /** `suppress_response_codes` was present: every status becomes 200. */
  suppressResponseCodes: boolean;
  /** Which API the URL belongs to: auth error bodies never carry `code`; daia answers carry X-DAIA-Version instead of the PAIA headers. */
  api: 'core' | 'auth' | 'daia';
}

export interface PaiaFormatOptions {
  /** URL prefix of the auth methods, for example `/auth` or `/paia/auth`. */
  authPrefix: string;
  /** URL of the DAIA endpoint, for example `/daia`; none when DAIA is not served. */
  daiaPath?: string;
}

export const DEFAULT_FORMAT: ResponseFormat = { charset: 'utf-8', suppressResponseCodes: false, api: 'core' };

/** Spec: a callback may contain only alphanumeric characters and underscores. */
const CALLBACK = /^[A-Za-z0-9_]+$/;

/**
 * A request step (request-steps): reads the special request parameters that
 * shape every response (`callback`, `suppress_response_codes`) and
 * negotiates the charset from Accept-Charset and Accept; stores the result
 * as `format`. A bad callback is a 400, rendered as plain JSON.
 *
 * @example
 * app.use(requestFrame([parseRequestUrl, paiaFormatStep({ authPrefix: '/auth' })], onError))
 */
export function paiaFormatStep(options: PaiaFormatOptions): RequestStep {
  const { authPrefix, daiaPath } = options;
  const authPath = `${authPrefix}/`;
  return function negotiateFormat(c) {
    const url = urlOf(c);
    // Without a query there are no parameters: no URLSearchParams to make.
    const query = url.search === '' ? null : url.searchParams;
    const path = c.req.path;
    const format: ResponseFormat = {
      charset: negotiateCharset(c.req.header('accept-charset'), c.req.header('accept')),
      suppressResponseCodes: query?.has('suppress_response_codes') ?? false,
      api:
        path === authPrefix || path.startsWith(authPath)
          ? 'auth'
          : daiaPath !== undefined && path === daiaPath
            ? 'daia'
            : 'core',
    };
    c.set('format', format);
    const callback = query?.get('callback') ?? null;
    if (callback !== null) {
      if (!CALLBACK.test(callback)) {
        throw malformed('the callback parameter may contain only letters A-Z and a-z, digits and underscores');
      }
      format.callback = callback;
    }
  };
}
