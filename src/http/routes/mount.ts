import type { Context, Hono } from 'hono';
import { methodNotAllowed } from '../errors.js';
import type { RouteGuard } from '../middleware/paia-auth/index.js';
import { paiaMethod } from '../middleware/paia-method/index.js';
import { respond } from '../respond.js';

/** The headers an OPTIONS answer allows (spec: at least these three). */
export const ALLOWED_REQUEST_HEADERS = 'Content-Type, Authorization, Accept-Language';

export interface MethodRoute {
  path: string;
  verb: 'GET' | 'POST';
  /** Scope listed in X-Accepted-OAuth-Scopes. */
  scope: string | null;
  /** Checked before the handler (paiaAuth): sets context variables for it, or throws. */
  guard?: RouteGuard;
  handler: (c: Context) => Response | Promise<Response>;
}

/**
 * Mounts one PAIA method URL: its verb (HEAD too for GET, Hono runs the GET
 * route and drops the body), OPTIONS without a token, and 405 with Allow
 * for every other verb.
 */
export function mountMethod(app: Hono, route: MethodRoute): void {
  const allow = route.verb === 'GET' ? ['GET', 'HEAD', 'OPTIONS'] : ['POST', 'OPTIONS'];
  const method = paiaMethod({ scope: route.scope });
  const { guard, handler } = route;
  // The guard and the handler as one: a second route handler would cost every request hono's dispatch and a promise.
  const answer =
    guard === undefined
      ? handler
      : async (c: Context) => {
          await guard(c);
          return handler(c);
        };
  app.on(route.verb, route.path, method(answer));
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
