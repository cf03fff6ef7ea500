import type { Hono } from 'hono';
import { METHOD_SCOPE, type PaiaMethod } from '../../auth/scopes.js';
import type { TokenRateLimit } from '../../auth/token-rate-limit.js';
import type { Backend, CallOptions, DocumentRequest, PaiaDocument } from '../../backend/types.js';
import type { SessionStore } from '../../state/sessions.js';
import { readBody } from '../body.js';
import { notFound } from '../errors.js';
import { guarded, readUntil } from '../guard.js';
import { paiaAuth } from '../middleware/paia-auth/index.js';
import { respond } from '../respond.js';
import { parseDocuments } from '../schemas.js';
import { mountMethod } from './mount.js';

export interface CoreRouteOptions {
  backend: Backend;
  sessions: SessionStore;
  /** URL prefix of the core methods, for example `/core` or `/paia/core`. */
  prefix: string;
  maxDocs: number;
  maxBodyBytes: number;
  /** Requests per minute per token. */
  rateLimit?: TokenRateLimit;
}

/** PAIA core: patron, items, renew, request, cancel, fees. */
export function mountCore(app: Hono, options: CoreRouteOptions): void {
  const { backend, sessions, prefix } = options;
  const auth = (method: PaiaMethod) =>
    paiaAuth({
      sessions,
      scope: METHOD_SCOPE[method],
      patronParam: 'patron',
      ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
    });

  mountMethod(app, {
    path: `${prefix}/:patron`,
    verb: 'GET',
    scope: METHOD_SCOPE.patron,
    guard: auth('patron'),
    handler: async (c) => {
      const { barcode } = c.get('auth').session;
      const signal = c.get('callSignal');
      const record = await readUntil(signal, 'backend', () => backend.patron(barcode, { signal }));
      if (record === null) throw notFound('the library system does not know this patron account');
      return respond(c, 200, record);
    },
  });

  mountMethod(app, {
    path: `${prefix}/:patron/items`,
    verb: 'GET',
    scope: METHOD_SCOPE.items,
    guard: auth('items'),
    handler: async (c) => {
      const { barcode } = c.get('auth').session;
      const signal = c.get('callSignal');
      const doc = await readUntil(signal, 'backend', () => backend.items(barcode, { signal }));
      return respond(c, 200, { doc });
    },
  });

  const writes: Array<
    [
      'renew' | 'request' | 'cancel',
      (barcode: string, docs: DocumentRequest[], options: CallOptions) => Promise<PaiaDocument[]>,
    ]
  > = [
    ['renew', (barcode, docs, options) => backend.renew(barcode, docs, options)],
    ['request', (barcode, docs, options) => backend.request(barcode, docs, options)],
    ['cancel', (barcode, docs, options) => backend.cancel(barcode, docs, options)],
  ];
  for (const [method, call] of writes) {
    mountMethod(app, {
      path: `${prefix}/:patron/${method}`,
      verb: 'POST',
      scope: METHOD_SCOPE[method],
      guard: auth(method),
      handler: async (c) => {
        const body = await readBody(c, { maxBytes: options.maxBodyBytes, acceptForm: false });
        const docs = parseDocuments(body, { maxDocs: options.maxDocs, pickup: method === 'request' });
        const { barcode } = c.get('auth').session;
        // Document errors (unknown URI, refused renewal) come back inside doc[], status 200. At the deadline the
        // backend answers at once: documents not sent, or with their outcome unknown (never raced to a 504 here).
        const doc = await guarded('backend', () => call(barcode, docs, { signal: c.get('callSignal') }));
        return respond(c, 200, { doc });
      },
    });
  }

  mountMethod(app, {
    path: `${prefix}/:patron/fees`,
    verb: 'GET',
    scope: METHOD_SCOPE.fees,
    guard: auth('fees'),
    handler: async (c) => {
      const { barcode } = c.get('auth').session;
      const signal = c.get('callSignal');
      const fees = await readUntil(signal, 'backend', () => backend.fees(barcode, { signal }));
      return respond(c, 200, fees);
    },
  });
}
