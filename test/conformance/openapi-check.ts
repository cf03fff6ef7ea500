/**
 * Checks one HTTP exchange against an OpenAPI 3.1 document: the request's
 * path and method resolve to an operation, the status is among its declared
 * responses, and the body validates against that response's schema (ajv's
 * JSON Schema 2020-12 validator, the dialect of OpenAPI 3.1, with
 * ajv-formats). Refs are resolved inside the document itself.
 *
 * - A path no template matches, or a method the path item does not declare,
 *   must be answered with an error body (404 unknown URL, 405, or an error of
 *   the middleware before any route: 400, 414, 503).
 * - With suppress_response_codes every status is 200: the body must match one
 *   of the operation's declared responses.
 * - HEAD: the status only (there is no body).
 */
import ajv2020 from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';

// CommonJS modules whose module.exports is the class/plugin itself (with a .default alias for TypeScript).
const Ajv2020 = ajv2020 as unknown as typeof ajv2020.default;
const addFormats = ajvFormats as unknown as typeof ajvFormats.default;

type Json = Record<string, unknown>;

export interface Exchange {
  method: string;
  url: URL;
  status: number;
  contentType: string | null;
  /** The parsed body (the JSONP argument for JSONP); undefined when none or not JSON. */
  json: unknown;
}

const DOC_ID = 'https://paia-sip2.invalid/openapi.json';
const ERROR_SCHEMAS = ['CoreError', 'AuthError', 'DaiaError'];

/** JSON pointer segment, URI-encoded for a fragment. */
const pointer = (segments: readonly string[]) =>
  segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

export class OpenApiChecker {
  private readonly ajv;
  private readonly paths: Array<{ template: string; pattern: RegExp; item: Json }>;

  constructor(document: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addFormat('password', true);
    this.ajv.addSchema({ ...document, $id: DOC_ID });
    this.paths = Object.entries((document.paths ?? {}) as Record<string, Json>).map(([template, item]) => ({
      template,
      item,
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}/]+\}/g, '[^/]+')}$`),
    }));
  }

  /** Schema errors of a value against the schema at a JSON pointer of the document; [] when it validates. */
  private errorsAt(segments: readonly string[], value: unknown): string[] {
    const validate = this.ajv.getSchema(`${DOC_ID}#/${pointer(segments)}`);
    if (validate === undefined) return [`no schema at #/${segments.join('/')}`];
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? e.keyword}`);
  }

  private isErrorBody(value: unknown): boolean {
    return ERROR_SCHEMAS.some((name) => this.errorsAt(['components', 'schemas', name], value).length === 0);
  }

  /** What is wrong with this exchange by the document; [] when it conforms. */
  problems(exchange: Exchange): string[] {
    const { method, url, status, json } = exchange;
    const verb = method.toLowerCase();
    const suppressed = url.searchParams.has('suppress_response_codes');
    const path = this.paths.find((p) => p.pattern.test(url.pathname));
    const operation = path?.item[verb] as Json | undefined;
    if (path === undefined || operation === undefined) {
      const where = path === undefined ? 'no documented path' : `${method} is not documented at ${path.template}`;
      if (!suppressed && status < 400) return [`${where}, yet answered ${status}`];
      if (verb !== 'head' && !this.isErrorBody(json)) return [`${where}: the body is not an error body`];
      return [];
    }
    const responses = (operation.responses ?? {}) as Record<string, Json>;
    const base = ['paths', path.template, verb, 'responses'];
    const bodyErrors = (code: string): string[] => {
      const content = responses[code]?.content as Record<string, Json> | undefined;
      if (content === undefined) return [];
      if (!/^application\/(json|javascript)\s*;/i.test(exchange.contentType ?? ''))
        return [`Content-Type ${exchange.contentType} is not JSON`];
      return this.errorsAt([...base, code, 'content', 'application/json', 'schema'], json);
    };
    if (suppressed && status === 200) {
      if (verb === 'head') return [];
      const matches = Object.keys(responses).some((code) => bodyErrors(code).length === 0);
      return matches ? [] : [`${method} ${path.template}: the body matches none of the declared responses`];
    }
    if (responses[String(status)] === undefined) {
      return [`${method} ${path.template}: status ${status} is not among the declared responses`];
    }
    if (verb === 'head') return [];
    return bodyErrors(String(status)).map((problem) => `${method} ${path.template} ${status}: ${problem}`);
  }
}
