import type { Context, Hono } from 'hono';
import { type DaiaService, splitQueryId } from '../../backend/daia/service.js';
import type { DaiaAddressLimit } from '../daia-limit.js';
import { methodNotAllowed, notImplemented, tooManyIds, unprocessable } from '../errors.js';
import { readUntil } from '../guard.js';
import { respond } from '../respond.js';
import { ALLOWED_REQUEST_HEADERS } from './mount.js';

export interface DaiaRouteOptions {
  service: DaiaService;
  /** URL of the endpoint, for example `/daia` or `/paia/daia`. */
  path: string;
  /** The endpoint's absolute URL as clients reach it (links start with it); null: the request's own URL. */
  publicUrl: URL | null;
  /** Most request identifiers answered per request; the rest goes into a Link rel="next" URL. */
  maxIds: number;
  /** Ids per client address per minute (429 beyond); none when left out. */
  limit?: DaiaAddressLimit;
  /** The client's address the limit counts (behind a trusted proxy, its X-Forwarded-For hop). */
  clientAddress: (c: Context) => string | undefined;
}

const ALLOW = ['GET', 'HEAD', 'OPTIONS'];

/**
 * DAIA 1.0 query API: GET {path}?id=a|b&format=json. Special parameters
 * (callback, suppress_response_codes) and the charset are handled by
 * paia-format, rendering by respond(), errors by the app's onError.
 */
export function mountDaia(app: Hono, options: DaiaRouteOptions): void {
  const { service, path, publicUrl, limit, clientAddress } = options;
  // A request never asks for more than a minute's ids: it would be refused in any window.
  const maxIds = Math.min(options.maxIds, limit?.idsPerMinute ?? Number.POSITIVE_INFINITY);

  app.get(path, async (c) => {
    const query = c.get('url').searchParams;
    const format = query.get('format');
    if (format === null) throw unprocessable('the format parameter is missing; set format=json');
    if (format !== 'json')
      throw unprocessable(`format ${JSON.stringify(format.slice(0, 40))} is not supported; set format=json`);
    if (query.has('access_token') || c.req.header('authorization') !== undefined) {
      throw notImplemented('patron-specific availability is not supported: send the request without an access token');
    }
    const queryId = query.get('id');
    if (queryId === null || queryId.trim() === '')
      throw unprocessable('the id parameter is missing; give one or more document ids separated by |');

    const ids = splitQueryId(queryId);
    const headers: Record<string, string> = {};
    if (ids.length > maxIds) {
      // DAIA: process a subset and link to a request with the remaining identifiers.
      const next = new URL(publicUrl ?? c.get('url'));
      next.search = c.get('url').search;
      next.searchParams.set('id', ids.slice(maxIds).join('|'));
      headers.Link = `<${next.href}>; rel="next"`;
    }
    const asked = ids.slice(0, maxIds);
    if (limit) {
      const verdict = await limit.take(clientAddress(c), asked.length);
      if (!verdict.allowed) throw tooManyIds(limit.idsPerMinute, verdict.retryAfterSeconds);
    }
    const signal = c.get('callSignal');
    const body = await readUntil(signal, 'daia', () => service.availability(asked, { signal }));
    return respond(c, 200, body, headers);
  });

  app.options(path, (c) =>
    respond(
      c,
      200,
      {},
      {
        Allow: ALLOW.join(', '),
        'Access-Control-Allow-Methods': ALLOW.join(', '),
        'Access-Control-Allow-Headers': ALLOWED_REQUEST_HEADERS,
        'Access-Control-Max-Age': '86400',
      },
    ),
  );

  app.all(path, (c) => {
    throw methodNotAllowed(c.req.method, ALLOW);
  });
}
