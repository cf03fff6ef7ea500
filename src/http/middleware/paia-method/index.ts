import type { MiddlewareHandler } from 'hono';

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

/**
 * Marks a route as a PAIA method: its scope goes into the
 * X-Accepted-OAuth-Scopes header of every response at this URL, including
 * OPTIONS, 405 and errors.
 *
 * @example
 * app.get('/core/:patron/items', paiaMethod({ scope: 'read_items' }), handler)
 */
export function paiaMethod(options: PaiaMethodOptions = {}): MiddlewareHandler {
  const scope = options.scope ?? '';
  return async function paiaMethodMiddleware(c, next) {
    c.set('acceptedScopes', scope);
    await next();
  };
}
