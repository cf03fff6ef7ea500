import type { Context, MiddlewareHandler } from 'hono';

/**
 * A synchronous part of setting a request up: reads the request, sets
 * context variables for what comes after, or throws (a PaiaError, which the
 * app's onError renders).
 */
export type RequestStep = (c: Context) => void;

/**
 * Runs the steps in order, then the rest of the chain, as one middleware.
 * Each middleware is an async layer (a promise, a closure and hono's
 * dispatch, about 1 µs per request each, measured), and the steps need none
 * of that: they only read and set.
 *
 * Past the steps, anything thrown after them (by the handlers and the
 * middlewares that follow) reaches the app's onError: a thrown non-Error
 * value, which hono would not hand to onError, is wrapped into an Error
 * here. The steps themselves throw PaiaErrors only.
 *
 * @example
 * app.use('*', requestSteps(parseRequestUrl, requestIdStep({ logger })))
 */
export function requestSteps(...steps: RequestStep[]): MiddlewareHandler {
  return async function requestStepsMiddleware(c, next) {
    for (const step of steps) step(c);
    try {
      await next();
    } catch (thrown) {
      throw thrown instanceof Error ? thrown : new Error(`non-Error value thrown: ${typeof thrown}`);
    }
  };
}
