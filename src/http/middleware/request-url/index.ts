import type { Context } from 'hono';

/**
 * Parses the request URL once, first thing, for every later middleware and
 * handler (format parameters, the access token in the query, DAIA ids, the
 * URL length bound), instead of each parsing it again.
 */

/** What this middleware hands to the handlers after it. */
interface RequestUrlVariables {
  /** The request URL, parsed. */
  url: URL;
}

declare module 'hono' {
  interface ContextVariableMap extends RequestUrlVariables {}
}

/** A request step (request-steps): the first of them. */
export function parseRequestUrl(c: Context): void {
  c.set('url', new URL(c.req.url));
}

/** The parsed request URL; parsed here when the middleware has not run (a response made before it). */
export function urlOf(c: Context): URL {
  const url: URL | undefined = c.get('url');
  return url ?? new URL(c.req.url);
}
