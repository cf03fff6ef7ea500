import type { Context, ErrorHandler, MiddlewareHandler } from 'hono';

/**
 * A synchronous part of setting a request up: reads the request, sets
 * context variables for what comes after, or throws (a PaiaError, which the
 * app's onError renders).
 */
export type RequestStep = (c: Context) => void;

/**
 * A part of every request that also has something to do once its response is
 * made: `start` as a step, `finish` with the response in `c.res` (an error's
 * too). The access line, the metrics and the call's deadline are layers.
 */
export interface RequestLayer {
  start: RequestStep;
  /** Runs once the response is made, for every layer whose start ran, the last started first; must not throw. */
  finish(c: Context): void;
}

/**
 * The frame of every request, composed once at start-up into one middleware:
 * each part (a step, or a layer with a finish) in order, then the rest of the
 * chain, then the finishes of the layers that started, in reverse order. The
 * same order as one middleware per part, without what each middleware costs
 * every request: an async layer, a promise and hono's dispatch (measured in
 * bench/README.md, CPU per request).
 *
 * As hono does at each middleware: whatever a part's start or the rest of the
 * chain throws becomes the response of `onError` (the app's error handler; a
 * thrown non-Error is wrapped into an Error first) before the finishes run,
 * so that they see the status of the answer the client gets.
 *
 * @example
 * app.use('*', requestFrame([httpMetrics(...), accessLog(...), parseRequestUrl, deadline(...)], onError))
 */
export function requestFrame(
  parts: ReadonlyArray<RequestStep | RequestLayer>,
  onError: ErrorHandler,
): MiddlewareHandler {
  const starts = parts.map((part) => (typeof part === 'function' ? part : part.start));
  // Per start, the finish to run when it has run (null for a step), so that a refused request finishes only what started.
  const finishes = parts.map((part) => (typeof part === 'function' ? null : part));
  return async function requestFrameMiddleware(c, next) {
    let started = 0;
    try {
      for (; started < starts.length; started++) starts[started]!(c);
      await next();
    } catch (thrown) {
      c.res = await onError(asError(thrown), c);
    } finally {
      for (let i = started - 1; i >= 0; i--) finishes[i]?.finish(c);
    }
  };
}

function asError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(`non-Error value thrown: ${typeof thrown}`);
}
