import type { Context, Hono } from 'hono';
import type { ClientCredentialsLogin, ClientLoginOutcome } from '../../auth/client-login.js';
import type { LoginOutcome, LoginService } from '../../auth/login.js';
import { WEAK_PASSWORD_MESSAGE } from '../../auth/password-policy.js';
import { formatScopes, METHOD_SCOPE, parseScopeParameter } from '../../auth/scopes.js';
import type { TokenRateLimit } from '../../auth/token-rate-limit.js';
import { basicCredentials } from '../../auth/trusted-clients.js';
import type { Backend } from '../../backend/types.js';
import type { SessionStore } from '../../state/sessions.js';
import { readBody } from '../body.js';
import {
  accessDenied,
  malformed,
  notImplemented,
  unavailable,
  unprocessable,
  unsupportedGrantType,
} from '../errors.js';
import { guarded, readUntil } from '../guard.js';
import { paiaAuth } from '../middleware/paia-auth/index.js';
import { requestLog } from '../middleware/request-id/index.js';
import { respond } from '../respond.js';
import { isClientCredentialsGrant, parseClientCredentials, parseLogin, parseLogout } from '../schemas.js';
import { mountMethod } from './mount.js';

export interface AuthRouteOptions {
  /** Decides logins (allowlist, password policy, throttle, the ILS, scopes, the new session). */
  login: LoginService;
  /** The client credentials grant (auth.clients); undefined: off, and such a login is answered unsupported_grant_type. */
  clientLogin?: ClientCredentialsLogin;
  /** Logout: the token's session ends, and the patron's ILS session (35). */
  backend: Pick<Backend, 'logout'>;
  sessions: SessionStore;
  /** The client's address for the allowlist and brute-force counting; undefined when unknown. */
  clientAddress: (c: Context) => string | undefined;
  /** URL prefix of the auth methods, for example `/auth` or `/paia/auth`. */
  prefix: string;
  maxBodyBytes: number;
  /** Logout ends every session of the patron, not only the token used. */
  logoutAllSessions: boolean;
  /** Requests per minute per token (logout counts too). */
  rateLimit?: TokenRateLimit;
}

/** One answer for an unknown user, a wrong password and a locked-out login. */
const REJECTED = 'login failed: wrong username or password';

/** One answer for an unknown client, a wrong client secret, a locked-out client and an unknown patron. */
const CLIENT_REJECTED = 'login failed: unknown client, wrong client secret or unknown patron';

/** The answer to a client_credentials login where no trusted clients (auth.clients) are configured. */
const CLIENT_CREDENTIALS_OFF =
  'this server offers no client_credentials login (no trusted clients are configured); log in with grant_type "password"';

/** The answer to a client outside auth.allowedClients. */
export const CLIENT_NOT_ALLOWED =
  'this client is not allowed to log in here: its address is not among the allowed clients of this server';

/** Names that must never travel in a URL. */
const CREDENTIAL_PARAMETERS = ['password', 'username', 'old_password', 'new_password'];

/** PAIA auth: login, logout, change (not implemented: SIP2 cannot change passwords). */
export function mountAuth(app: Hono, options: AuthRouteOptions): void {
  const { backend, sessions, login, prefix } = options;

  mountMethod(app, {
    path: `${prefix}/login`,
    verb: 'POST',
    scope: METHOD_SCOPE.login,
    handler: async (c) => {
      const clientAddress = options.clientAddress(c);
      // Checked first, before the body is read: a refused client learns nothing else.
      if (!login.admits(clientAddress)) throw accessDenied(CLIENT_NOT_ALLOWED);
      const query = c.get('url').searchParams;
      if (CREDENTIAL_PARAMETERS.some((name) => query.has(name))) {
        throw malformed('credentials are never accepted in the URL: send username and password in the POST body');
      }
      const body = await readBody(c, { maxBytes: options.maxBodyBytes, acceptForm: true });
      const signal = c.get('callSignal');
      const { clientLogin } = options;
      let outcome: LoginOutcome | ClientLoginOutcome;
      let rejected = REJECTED;
      if (isClientCredentialsGrant(body)) {
        if (clientLogin === undefined) throw unsupportedGrantType(CLIENT_CREDENTIALS_OFF);
        const input = parseClientCredentials(body);
        // RFC 6749, 2.3.1: the client authenticates with HTTP Basic; the header is redacted in logs.
        const client = basicCredentials(c.req.header('authorization'));
        rejected = CLIENT_REJECTED;
        outcome = await readUntil(signal, 'login', () =>
          clientLogin.login({
            clientId: client?.id,
            clientSecret: client?.secret,
            clientSecretAsSent: client?.secretAsSent,
            patron: input.patron,
            scopes: parseScopeParameter(input.scope),
            clientAddress,
            signal,
            log: requestLog(c),
          }),
        );
      } else {
        const input = parseLogin(body);
        outcome = await readUntil(signal, 'login', () =>
          login.login({
            username: input.username,
            password: input.password,
            scopes: parseScopeParameter(input.scope),
            clientAddress,
            signal,
            log: requestLog(c),
          }),
        );
      }
      switch (outcome.kind) {
        case 'client-not-allowed':
          throw accessDenied(CLIENT_NOT_ALLOWED);
        case 'no-grantable-scope':
          throw unprocessable(
            `none of the requested scopes can be granted; this server grants ${formatScopes(outcome.grantable)}`,
          );
        case 'weak-password':
          throw accessDenied(WEAK_PASSWORD_MESSAGE);
        case 'busy':
          throw unavailable('too many logins right now; please try again in a second', outcome.retryAfterSeconds);
        case 'rejected':
          throw accessDenied(
            rejected,
            outcome.retryAfterSeconds === undefined ? undefined : { 'Retry-After': String(outcome.retryAfterSeconds) },
          );
        case 'scopes-not-allowed':
          throw unprocessable(
            `this account is expired or blocked, so only ${formatScopes(outcome.allowed)} can be granted, and none of these was requested`,
          );
        case 'granted':
          c.set('tokenScopes', outcome.scopes);
          return respond(
            c,
            200,
            {
              patron: outcome.patron,
              access_token: outcome.token,
              token_type: 'Bearer',
              scope: formatScopes(outcome.scopes),
              expires_in: outcome.expiresInSeconds,
            },
            { 'Cache-Control': 'no-store', Pragma: 'no-cache' },
          );
      }
    },
  });

  mountMethod(app, {
    path: `${prefix}/logout`,
    verb: 'POST',
    scope: METHOD_SCOPE.logout,
    guard: paiaAuth({ sessions, ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}) }),
    handler: async (c) => {
      const body = await readBody(c, { maxBytes: options.maxBodyBytes, acceptForm: true });
      const { patron } = parseLogout(body);
      const { session, token } = c.get('auth');
      if (patron !== session.patron) throw accessDenied('the patron does not match the access token');
      await guarded('session store', () => sessions.delete(token));
      if (options.logoutAllSessions) await guarded('session store', () => sessions.deleteAllFor(session.patron));
      // The ILS session end (35) is a courtesy: the token is already dead, a failure changes nothing.
      const log = requestLog(c);
      void guarded('backend', () => backend.logout(session.barcode)).catch((error: unknown) => {
        log?.warn(
          { err: { message: error instanceof Error ? error.message : String(error) } },
          'backend logout failed',
        );
      });
      return respond(c, 200, { patron });
    },
  });

  mountMethod(app, {
    path: `${prefix}/change`,
    verb: 'POST',
    scope: METHOD_SCOPE.change,
    handler: () => {
      throw notImplemented(
        'changing the password is not supported by this server; please change it through your library',
      );
    },
  });
}
