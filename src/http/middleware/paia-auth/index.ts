import type { Context } from 'hono';
import type { TokenRateLimit } from '../../../auth/token-rate-limit.js';
import { MAX_TOKEN_CHARS, type Session, type SessionStore } from '../../../state/sessions.js';
import { hashToken } from '../../../state/tokens.js';
import { accessDenied, insufficientScope, invalidGrant, malformed, tooManyRequests } from '../../errors.js';
import { guarded } from '../../guard.js';
import { urlOf } from '../request-url/index.js';

/** What a route checks before its handler (routes/mount.ts): sets context variables for it, or rejects (a PaiaError). */
export type RouteGuard = (c: Context) => Promise<void>;

/** A request that passed the bearer-token check. The token is kept for logout only and never logged. */
interface Authenticated {
  session: Session;
  token: string;
}

/** What this middleware hands to the handlers and the renderer after it. */
interface PaiaAuthVariables {
  auth: Authenticated;
  /** The value of X-OAuth-Scopes (the login route sets it too, for the token it issues). */
  tokenScopes: readonly string[];
}

declare module 'hono' {
  interface ContextVariableMap extends PaiaAuthVariables {}
}

export interface PaiaAuthOptions {
  sessions: SessionStore;
  /** Scope the method needs; absent or null: any valid token will do (logout). */
  scope?: string | null;
  /**
   * Route parameter with the patron identifier the token must belong to
   * (core methods). Hono hands it over URI-decoded, so a patron id sent
   * unescaped (VuFind) and one sent escaped compare the same.
   */
  patronParam?: string;
  /** Requests per minute per token; checked once the token is known to be valid (429 beyond it). */
  rateLimit?: TokenRateLimit;
}

/**
 * Bearer-token check of a route, run before its handler (mountMethod's `guard`). The token comes from `Authorization: Bearer` or
 * the `access_token` query parameter (both present and different: 400).
 * Order of checks, so that patron identifiers never leak: token missing,
 * unknown or expired -> 401 invalid_grant; token of another patron -> 403
 * access_denied; scope missing -> 403 insufficient_scope. Sets `auth` and
 * `tokenScopes`.
 *
 * @example
 * mountMethod(app, { ..., guard: paiaAuth({ sessions, scope: 'read_patron', patronParam: 'patron' }), handler })
 */
export function paiaAuth(options: PaiaAuthOptions): RouteGuard {
  const { sessions, scope, patronParam, rateLimit } = options;
  return async function paiaAuthGuard(c) {
    const url = urlOf(c);
    // Without a query there is no access_token parameter: no URLSearchParams to make.
    const fromQuery = url.search === '' ? NO_VALUES : url.searchParams.getAll('access_token');
    const token = bearerToken(c.req.header('authorization'), fromQuery);
    if (token === undefined) {
      throw invalidGrant(
        'an access token is required: send it as "Authorization: Bearer <token>" or as the access_token parameter',
        false,
      );
    }
    // Longer than any token: unknown, without hashing it.
    if (token.length > MAX_TOKEN_CHARS) throw unknownToken();
    // Hashed once, for the session lookup and the rate limit.
    const tokenHash = hashToken(token);
    const session = await guarded('session store', () => sessions.get(token, tokenHash));
    if (session === null) throw unknownToken();
    c.set('auth', { session, token });
    c.set('tokenScopes', session.scopes);
    if (rateLimit) {
      // Keyed by the token's hash: the rate limit never holds a usable token.
      const verdict = await guarded('state store', () => rateLimit.take(tokenHash));
      if (!verdict.allowed) throw tooManyRequests(rateLimit.perMinute, verdict.retryAfterSeconds);
    }
    if (patronParam !== undefined && c.req.param(patronParam) !== session.patron) {
      throw accessDenied('the access token does not belong to this patron');
    }
    if (scope && !session.scopes.includes(scope)) throw insufficientScope(scope);
  };
}

const NO_VALUES: readonly string[] = [];

/** 401: unknown, expired and impossible tokens look the same to the client. */
function unknownToken() {
  return invalidGrant('the access token is invalid or has expired; log in again', true);
}

/** The token of a request, or undefined when none is given. Throws 400 when header and query disagree. */
function bearerToken(authorization: string | undefined, queryValues: readonly string[]): string | undefined {
  const fromQuery = queryValues.length === 0 ? queryValues : [...new Set(queryValues.filter((value) => value !== ''))];
  if (fromQuery.length > 1)
    throw malformed('the access_token parameter is given more than once, with different values');
  let fromHeader: string | undefined;
  if (authorization !== undefined) {
    const match = /^[ \t]*Bearer[ \t]+([^ \t]+)[ \t]*$/i.exec(authorization);
    if (match) fromHeader = match[1];
  }
  const queryToken = fromQuery[0];
  if (fromHeader !== undefined && queryToken !== undefined && fromHeader !== queryToken) {
    throw malformed(
      'the access token is given both in the Authorization header and as access_token parameter, with different values',
    );
  }
  return fromHeader ?? queryToken;
}
