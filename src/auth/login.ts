import type { Logger } from 'pino';
import type { Backend, CredentialCheck } from '../backend/types.js';
import type { CancelSignal } from '../cancel-signal.js';
import type { SessionStore } from '../state/sessions.js';
import type { ClientAllowlist } from './client-allowlist.js';
import type { LockoutEvent, LoginThrottle } from './login-throttle.js';
import type { PasswordPolicy } from './password-policy.js';
import type { PatronIds } from './patron-ids.js';
import { allowedScopes, DEFAULT_LOGIN_SCOPES, grantScopes, type Scope } from './scopes.js';
import { expiresInSecondsOf, startSession } from './session-grant.js';

/**
 * PAIA login as a service: client allowlist, password policy, brute-force
 * throttle, the ILS's verdict, the scopes the account may have, and the new
 * session. It returns what happened as a typed outcome; the HTTP route only
 * maps outcomes to answers (and never learns more than it needs to say).
 */

export interface LoginRequest {
  username: string;
  password: string;
  /** Scopes asked for (the OAuth scope parameter, split); undefined: not given. */
  scopes: readonly string[] | undefined;
  /** The client's address, for the allowlist and the brute-force counters; undefined when unknown. */
  clientAddress: string | undefined;
  /** The call's signal (deadline, client gone), passed on to the ILS check. */
  signal?: CancelSignal | undefined;
  /** Where lockouts are logged (the request's logger, so lines carry its id). */
  log?: Logger | undefined;
}

export type LoginOutcome =
  | { kind: 'granted'; patron: string; token: string; scopes: readonly Scope[]; expiresInSeconds: number }
  /** The client's address is not in auth.allowedClients. */
  | { kind: 'client-not-allowed' }
  /** None of the requested scopes is one a login can ever grant. */
  | { kind: 'no-grantable-scope'; grantable: readonly Scope[] }
  /** The password is weak: refused before anything else, whether it is right or not. */
  | { kind: 'weak-password' }
  /** Wrong username or password, or a lockout (retryAfterSeconds set): the same answer either way. */
  | { kind: 'rejected'; retryAfterSeconds?: number }
  /** The global login ceiling protects the ILS: try again shortly. */
  | { kind: 'busy'; retryAfterSeconds: number }
  /** Right credentials, but the account (expired, blocked) may have none of the requested scopes. */
  | { kind: 'scopes-not-allowed'; allowed: readonly Scope[] };

export interface LoginServiceOptions {
  backend: Pick<Backend, 'login'>;
  sessions: SessionStore;
  patronIds: PatronIds;
  throttle: LoginThrottle;
  passwordPolicy: PasswordPolicy;
  /** Clients that may log in; undefined or open: any client. */
  allowedClients?: ClientAllowlist | undefined;
  /** How long a token is valid, in milliseconds: at least 1000 (expires_in is in whole seconds). */
  tokenLifetimeMs: number;
  /** Clock in epoch milliseconds; for tests. */
  now?: () => number;
}

export class LoginService {
  private readonly options: LoginServiceOptions;
  private readonly now: () => number;

  constructor(options: LoginServiceOptions) {
    if (!Number.isInteger(options.tokenLifetimeMs) || options.tokenLifetimeMs < 1000) {
      throw new RangeError(`tokenLifetimeMs must be a whole number of at least 1000, got ${options.tokenLifetimeMs}`);
    }
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  /**
   * Whether a client may log in at all (spec: "An auth server SHOULD restrict
   * access to specific clients"). The route asks first, before it reads the
   * body: a refused client learns nothing else.
   */
  admits(clientAddress: string | undefined): boolean {
    const allowed = this.options.allowedClients;
    return allowed === undefined || allowed.open || allowed.allows(clientAddress);
  }

  /**
   * Decides one login. Rejects only with what the backend or the session
   * store throws (the ILS unreachable ...): then the attempt is not counted.
   */
  async login(request: LoginRequest): Promise<LoginOutcome> {
    const { options } = this;
    if (!this.admits(request.clientAddress)) return { kind: 'client-not-allowed' };
    if (request.scopes !== undefined && grantScopes(request.scopes, DEFAULT_LOGIN_SCOPES).length === 0) {
      return { kind: 'no-grantable-scope', grantable: DEFAULT_LOGIN_SCOPES };
    }
    // Weak passwords are refused before anything else, the ILS included. The
    // answer is then the same whether the password is right or wrong and
    // whether the account exists, so it confirms nothing to someone trying
    // common passwords (checking after the ILS would tell them "right, but
    // weak"), costs the ILS nothing, and is not counted as a failure. A
    // patron whose real password is weak cannot get a token: the account is
    // blocked here until the password is changed at the library.
    if (options.passwordPolicy.weakness(request.password) !== null) return { kind: 'weak-password' };

    const gate = await options.throttle.begin(request.username, request.clientAddress, request.signal);
    if (!gate.allowed) {
      // The ceiling protects the ILS: a temporary failure of the service, not an answer about these credentials.
      if (gate.reason === 'busy') return { kind: 'busy', retryAfterSeconds: gate.retryAfterSeconds };
      // Same answer as a wrong password (plus Retry-After): nothing says whether the account exists.
      return { kind: 'rejected', retryAfterSeconds: gate.retryAfterSeconds };
    }
    let verdict: CredentialCheck;
    try {
      verdict = await options.backend.login(request.username, request.password, { signal: request.signal });
    } catch (error) {
      // The ILS never judged the credentials: nothing to count. The ILS's error is the answer, not the store's.
      await gate.attempt.undo().catch(() => {});
      throw error;
    }
    if (!verdict.ok) {
      const lockouts = await gate.attempt.failed(verdict.patron);
      for (const lockout of lockouts) logLockout(request.log, lockout, request.clientAddress);
      return { kind: 'rejected' };
    }
    await gate.attempt.succeeded(verdict.barcode);

    const allowed = allowedScopes(verdict.state);
    const granted = grantScopes(request.scopes, allowed);
    if (granted.length === 0) return { kind: 'scopes-not-allowed', allowed };
    const started = await startSession(options, verdict.barcode, granted, this.now());
    const { patron, session } = started;
    let { token } = started;
    // Spec: a token never equals the user's password. 2^-256, but cheap to rule out.
    while (token === request.password) {
      await options.sessions.delete(token);
      token = await options.sessions.create(session);
    }
    return { kind: 'granted', patron, token, scopes: granted, expiresInSeconds: expiresInSecondsOf(options) };
  }
}

/** Never the password; the username only as a short hash (it is often the library card barcode). */
function logLockout(log: Logger | undefined, lockout: LockoutEvent, address: string | undefined): void {
  log?.warn(
    { lockout: { ...lockout }, address },
    `login lockout: ${lockout.kind} locked for ${lockout.retryAfterSeconds} s after ${lockout.failures} failed logins`,
  );
}
