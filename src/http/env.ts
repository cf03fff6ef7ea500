import type { Session } from '../auth/session-store.js';
import type { Logger } from '../log.js';
import type { ResponseFormat } from './middleware/paia-format/index.js';
import type { DeadlineVariables } from './middleware/deadline/index.js';
import type { ResponsePolicy } from './security.js';

/** A request that passed the bearer-token check. The token is kept for logout only and never logged. */
export interface Authenticated {
  session: Session;
  token: string;
}

/** The Hono environment of the PAIA app: what middleware hands to handlers and to the renderer. */
export interface PaiaEnv {
  Variables: DeadlineVariables & {
    /** Set first of all: CORS origins and HSTS, applied by the renderer. */
    responsePolicy: ResponsePolicy;
    /** Set by request-id: the id echoed in X-Request-Id and bound to every log line. */
    requestId: string;
    /** Set by request-id: the app's logger, from which requestLog(c) makes the request's child on first use. */
    appLog: Logger;
    /** The request's child logger (bound to its id), made by requestLog(c) when something is logged. */
    log: Logger;
    /** Set by paia-format: how to render the response. */
    format: ResponseFormat;
    /** Set by paia-method: the value of X-Accepted-OAuth-Scopes. */
    acceptedScopes: string;
    /** Set once a token is accepted (or issued by login): the value of X-OAuth-Scopes. */
    tokenScopes: readonly string[];
    /** Set by paia-auth. */
    auth: Authenticated;
    /** Set by the renderer for error responses: the PAIA error code, for the access log. */
    errorCode: string;
  };
}
