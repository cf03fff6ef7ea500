import type { Context, Next } from 'hono';

/** What this middleware hands to the renderer. */
interface PaiaMethodVariables {
  /** The value of X-Accepted-OAuth-Scopes. */
  acceptedScopes: string;
}

declare module 'hono' {
  interface ContextVariableMap extends PaiaMethodVariables {}
}

export interface PaiaMethodOptions {
  /** The scope the method at this URL checks (X-Accepted-OAuth-Scopes); null or absent for none. */
  scope?: string | null;
}

/** A route's first handler, or a middleware. */
type RouteHandler<R> = (c: Context, next: Next) => R;

/**
 * Marks a route as a PAIA method: its scope goes into the
 * X-Accepted-OAuth-Scopes header of every response at this URL, including
 * OPTIONS, 405 and errors. It wraps the route's first handler rather than
 * being a middleware of its own: an async layer costs every request a
 * promise and a dispatch.
 *
 * @example
 * const method = paiaMethod({ scope: 'read_items' });
 * app.get('/core/:patron/items', method(handler))
 */
export function paiaMethod(options: PaiaMethodOptions = {}): <R>(handler: RouteHandler<R>) => RouteHandler<R> {
  const scope = options.scope ?? '';
  return (handler) =>
    function paiaMethodHandler(c, next) {
      c.set('acceptedScopes', scope);
      return handler(c, next);
    };
}
