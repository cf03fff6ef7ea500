import type { Context, Hono } from 'hono';
import type { ClientAllowlist } from '../../auth/client-allowlist.js';
import type { LoginThrottle } from '../../auth/login-throttle.js';
import { type PasswordPolicy, WEAK_PASSWORD_MESSAGE } from '../../auth/password-policy.js';
import type { RequestLimiter } from '../../auth/request-limit.js';
import type { PatronIds } from '../../auth/patron-ids.js';
import {
  DEFAULT_LOGIN_SCOPES,
  METHOD_SCOPE,
  allowedScopes,
  formatScopes,
  grantScopes,
  parseScopeParameter,
} from '../../auth/scopes.js';
import type { SessionStore } from '../../auth/session-store.js';
import type { Backend, LoginOutcome } from '../../backend/types.js';
import { readBody } from '../body.js';
import type { PaiaEnv } from '../env.js';
import { accessDenied, malformed, notImplemented, unavailable, unprocessable } from '../errors.js';
import { guarded, readUntil } from '../guard.js';
import { paiaAuth } from '../middleware/paia-auth/index.js';
import { requestLog } from '../middleware/request-id/index.js';
import { respond } from '../respond.js';
import { parseLogin, parseLogout } from '../schemas.js';
import { mountMethod } from './mount.js';

export interface AuthRouteOptions {
  backend: Backend;
  sessions: SessionStore;
  patronIds: PatronIds;
  throttle: LoginThrottle;
  /** The client's address for brute-force counting; undefined when unknown. */
  clientAddress: (c: Context<PaiaEnv>) => string | undefined;
  /** Clients that may log in (by clientAddress); undefined or an empty list: any client. */
  allowedClients?: ClientAllowlist;
  /** URL prefix of the auth methods, for example `/auth` or `/paia/auth`. */
  prefix: string;
  maxBodyBytes: number;
  tokenLifetimeSeconds: number;
  passwordPolicy: PasswordPolicy;
  /** Logout ends every session of the patron, not only the token used. */
  logoutAllSessions: boolean;
  /** Requests per minute per token (logout counts too). */
  limiter?: { limiter: RequestLimiter; perMinute: number };
}

/** One answer for an unknown user, a wrong password and a locked-out login. */
const REJECTED = 'login failed: wrong username or password';

/** The answer to a client outside auth.allowedClients. */
export const CLIENT_NOT_ALLOWED = 'this client is not allowed to log in here: its address is not among the allowed clients of this server';

/** Names that must never travel in a URL. */
const CREDENTIAL_PARAMETERS = ['password', 'username', 'old_password', 'new_password'];

/** PAIA auth: login, logout, change (not implemented: SIP2 cannot change passwords). */
export function mountAuth(app: Hono<PaiaEnv>, options: AuthRouteOptions): void {
  const { backend, sessions, patronIds, throttle, prefix } = options;

  mountMethod(app, {
    path: `${prefix}/login`,
    verb: 'POST',
    scope: METHOD_SCOPE.login,
    handlers: [
      async (c) => {
        // Spec: "An auth server SHOULD restrict access to specific clients". Checked
        // first, before the body is read: a refused client learns nothing else.
        if (options.allowedClients !== undefined && !options.allowedClients.allows(options.clientAddress(c))) {
          throw accessDenied(CLIENT_NOT_ALLOWED);
        }
        const query = new URL(c.req.url).searchParams;
        if (CREDENTIAL_PARAMETERS.some((name) => query.has(name))) {
          throw malformed('credentials are never accepted in the URL: send username and password in the POST body');
        }
        const body = await readBody(c, { maxBytes: options.maxBodyBytes, acceptForm: true });
        const input = parseLogin(body);
        const requested = parseScopeParameter(input.scope);
        if (requested !== undefined && grantScopes(requested, DEFAULT_LOGIN_SCOPES).length === 0) {
          throw unprocessable(`none of the requested scopes can be granted; this server grants ${formatScopes(DEFAULT_LOGIN_SCOPES)}`);
        }

        // Weak passwords are refused before anything else, the ILS included. The
        // answer is then the same whether the password is right or wrong and
        // whether the account exists, so it confirms nothing to someone trying
        // common passwords (checking after the ILS would tell them "right, but
        // weak"), costs the ILS nothing, and is not counted as a failure. A
        // patron whose real password is weak cannot get a token: the account is
        // blocked here until the password is changed at the library.
        if (options.passwordPolicy.weakness(input.password) !== null) throw accessDenied(WEAK_PASSWORD_MESSAGE);

        const address = options.clientAddress(c);
        const gate = throttle.begin(input.username, address);
        if (!gate.allowed) {
          const log = requestLog(c);
          for (const lockout of gate.lockouts) {
            // Never the password; the username only as a short hash (it is often the library card barcode).
            log?.warn({ lockout: { ...lockout }, address }, `login lockout: ${lockout.kind} locked for ${lockout.retryAfterSeconds} s after ${lockout.failures} failed logins`);
          }
          // The ceiling protects the ILS: a temporary failure of the service, not an answer about these credentials.
          if (gate.reason === 'busy') throw unavailable('too many logins right now; please try again in a second', gate.retryAfterSeconds);
          // Same answer as a wrong password (plus Retry-After): nothing says whether the account exists.
          throw accessDenied(REJECTED, { 'Retry-After': String(gate.retryAfterSeconds) });
        }
        let outcome: LoginOutcome;
        try {
          const signal = c.get('callSignal');
          outcome = await readUntil(signal, 'backend', () => backend.login(input.username, input.password, { signal }));
        } catch (error) {
          gate.attempt.undo();
          throw error;
        }
        if (!outcome.ok) {
          gate.attempt.failed();
          throw accessDenied(REJECTED);
        }
        gate.attempt.succeeded();

        const granted = grantScopes(requested, allowedScopes(outcome.state));
        if (granted.length === 0) {
          throw unprocessable(
            `this account is expired or blocked, so only ${formatScopes(allowedScopes(outcome.state))} can be granted, and none of these was requested`,
          );
        }
        const patron = patronIds.fromBarcode(outcome.barcode);
        const session = {
          patron,
          barcode: outcome.barcode,
          scopes: granted,
          expiresAt: Date.now() + options.tokenLifetimeSeconds * 1000,
        };
        let token = await guarded('session store', () => sessions.create(session));
        // Spec: a token never equals the user's password. 2^-256, but cheap to rule out.
        while (token === input.password) {
          await guarded('session store', () => sessions.delete(token));
          token = await guarded('session store', () => sessions.create(session));
        }
        c.set('tokenScopes', granted);
        return respond(
          c,
          200,
          {
            patron,
            access_token: token,
            token_type: 'Bearer',
            scope: formatScopes(granted),
            expires_in: options.tokenLifetimeSeconds,
          },
          { 'Cache-Control': 'no-store', Pragma: 'no-cache' },
        );
      },
    ],
  });

  mountMethod(app, {
    path: `${prefix}/logout`,
    verb: 'POST',
    scope: METHOD_SCOPE.logout,
    handlers: [
      paiaAuth({ sessions, ...(options.limiter ? { limiter: options.limiter } : {}) }),
      async (c) => {
        const body = await readBody(c, { maxBytes: options.maxBodyBytes, acceptForm: true });
        const { patron } = parseLogout(body);
        const { session, token } = c.get('auth');
        if (patron !== session.patron) throw accessDenied('the patron does not match the access token');
        await guarded('session store', () => sessions.delete(token));
        if (options.logoutAllSessions) await guarded('session store', () => sessions.deleteAllFor(session.patron));
        // The ILS session end (35) is a courtesy: the token is already dead, a failure changes nothing.
        const log = requestLog(c);
        void guarded('backend', () => backend.logout(session.barcode)).catch((error: unknown) => {
          log?.warn({ err: { message: error instanceof Error ? error.message : String(error) } }, 'backend logout failed');
        });
        return respond(c, 200, { patron });
      },
    ],
  });

  mountMethod(app, {
    path: `${prefix}/change`,
    verb: 'POST',
    scope: METHOD_SCOPE.change,
    handlers: [
      () => {
        throw notImplemented('changing the password is not supported by this server; please change it through your library');
      },
    ],
  });
}
