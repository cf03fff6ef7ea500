import type { Hono, MiddlewareHandler } from 'hono';
import { methodNotAllowed } from '../errors.js';
import { paiaMethod } from '../middleware/paia-method/index.js';
import { respond } from '../respond.js';

/** The headers an OPTIONS answer allows (spec: at least these three). */
export const ALLOWED_REQUEST_HEADERS = 'Content-Type, Authorization, Accept-Language';

export interface MethodRoute {
  path: string;
  verb: 'GET' | 'POST';
  /** Scope listed in X-Accepted-OAuth-Scopes. */
  scope: string | null;
  handlers: MiddlewareHandler[];
}

/**
 * Mounts one PAIA method URL: its verb (HEAD too for GET, Hono runs the GET
 * route and drops the body), OPTIONS without a token, and 405 with Allow
 * for every other verb.
 */
export function mountMethod(app: Hono, route: MethodRoute): void {
  const allow = route.verb === 'GET' ? ['GET', 'HEAD', 'OPTIONS'] : ['POST', 'OPTIONS'];
  const method = paiaMethod({ scope: route.scope });
  const [first, ...rest] = route.handlers;
  if (first === undefined) throw new Error(`no handler for ${route.verb} ${route.path}`);
  app.on(route.verb, route.path, method(first), ...rest);
  app.options(
    route.path,
    method((c) =>
      respond(
        c,
        200,
        {},
        {
          Allow: allow.join(', '),
          'Access-Control-Allow-Methods': allow.join(', '),
          'Access-Control-Allow-Headers': ALLOWED_REQUEST_HEADERS,
          'Access-Control-Max-Age': '86400',
        },
      ),
    ),
  );
  app.all(
    route.path,
    method((c) => {
      throw methodNotAllowed(c.req.method, allow);
    }),
  );
}
