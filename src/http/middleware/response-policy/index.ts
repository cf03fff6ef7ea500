import type { Context } from 'hono';
import { DEFAULT_CORS_ORIGINS } from '../../defaults.js';
import { lastForwardedHop } from '../../forwarded.js';
import type { RequestStep } from '../request-steps/index.js';
import { urlOf } from '../request-url/index.js';

/** What this middleware hands to the renderer. */
interface ResponsePolicyVariables {
  responsePolicy: ResponsePolicy;
}

declare module 'hono' {
  interface ContextVariableMap extends ResponsePolicyVariables {}
}

/** How responses are guarded: which origins may read them cross-site, and whether HSTS is sent. */
export interface ResponsePolicy {
  /** "*" = any origin (Access-Control-Allow-Origin: *); otherwise the exact origins (scheme://host[:port]) allowed. */
  readonly corsOrigins: '*' | ReadonlySet<string>;
  /** Send Strict-Transport-Security on requests that came over HTTPS. */
  readonly hsts: boolean;
}

/** What a response looks like when no policy was set: today's public CORS, no HSTS. */
const DEFAULT_RESPONSE_POLICY: ResponsePolicy = { corsOrigins: '*', hsts: false };

/** The headers every response carries: a JSON API serves no documents to frame, embed or refer from. */
const SECURE_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
};

const HSTS_VALUE = 'max-age=31536000';

/**
 * Turns the corsOrigins setting into a policy: ["*"] (the default) or a list
 * of origins. Throws on "*" mixed with origins; the config loader reports
 * malformed entries before this.
 */
export function responsePolicy(options: {
  corsOrigins?: readonly string[] | undefined;
  hsts?: boolean | undefined;
}): ResponsePolicy {
  const origins = options.corsOrigins ?? DEFAULT_CORS_ORIGINS;
  const hsts = options.hsts ?? false;
  if (origins.includes('*')) {
    if (origins.length !== 1)
      throw new Error('corsOrigins: "*" must stand alone (any origin), or list origins without it');
    return { corsOrigins: '*', hsts };
  }
  return { corsOrigins: new Set(origins), hsts };
}

/** A request step (request-steps) that stores the response policy for respond(). Among the first, so that every response sees it. */
export function responsePolicyStep(policy: ResponsePolicy): RequestStep {
  return (c) => c.set('responsePolicy', policy);
}

/** Whether the request reached us over HTTPS: directly, or per X-Forwarded-Proto (believed only when hsts is on, i.e. with TLS or a trusted proxy). */
function overHttps(c: Context): boolean {
  if (urlOf(c).protocol === 'https:') return true;
  return lastForwardedHop(c.req.header('x-forwarded-proto'))?.toLowerCase() === 'https';
}

/**
 * Adds the secure headers and settles CORS on a response's headers (called
 * last, after route-specific headers): with "*" any origin may read it; with
 * a list only a listed Origin is echoed (with Vary: Origin), and for any other
 * origin every Access-Control-* header is dropped. The response itself is
 * still sent: browsers enforce CORS.
 */
export function applyResponsePolicy(c: Context, h: Record<string, string>): void {
  const policy: ResponsePolicy | undefined = c.get('responsePolicy');
  const applied = policy ?? DEFAULT_RESPONSE_POLICY;
  Object.assign(h, SECURE_HEADERS);
  if (applied.hsts && overHttps(c)) h['Strict-Transport-Security'] = HSTS_VALUE;

  if (applied.corsOrigins === '*') {
    h['Access-Control-Allow-Origin'] = '*';
    return;
  }
  h.Vary = 'Origin';
  const origin = c.req.header('origin');
  if (origin !== undefined && applied.corsOrigins.has(origin)) {
    h['Access-Control-Allow-Origin'] = origin;
    return;
  }
  for (const name of Object.keys(h)) {
    if (name.toLowerCase().startsWith('access-control-')) delete h[name];
  }
}
