import type { Logger } from 'pino';
import type { Backend, PatronLookup } from '../backend/types.js';
import type { CancelSignal } from '../cancel-signal.js';
import type { SessionStore } from '../state/sessions.js';
import type { LoginOutcome } from './login.js';
import type { LockoutEvent, LoginThrottle } from './login-throttle.js';
import type { PatronIds } from './patron-ids.js';
import { allowedScopes, DEFAULT_LOGIN_SCOPES, grantScopes } from './scopes.js';
import { expiresInSecondsOf, startSession } from './session-grant.js';
import type { TrustedClients } from './trusted-clients.js';

/**
 * The OAuth client credentials grant (PAIA 1.4, as VuFind's PAIA driver uses
 * it for single sign-on): a trusted client of auth.clients, authenticated by
 * its secret, logs a patron in by username or barcode without the patron's
 * password. The ILS only confirms that the account exists (63 without a
 * patron password: the terminal account is trusted).
 *
 * Brute-force protection is the password login's: failed secrets count
 * against the client id as an account of its own, in the same store.
 */

export interface ClientLoginRequest {
  /** From the Basic header; undefined when the call had none (or not Basic). */
  clientId: string | undefined;
  clientSecret: string | undefined;
  /** The secret as sent, when it differs from the form-decoded one: tried second (see basicCredentials). */
  clientSecretAsSent?: string | undefined;
  /** The patron's username or barcode. */
  patron: string;
  scopes: readonly string[] | undefined;
  clientAddress: string | undefined;
  signal?: CancelSignal | undefined;
  log?: Logger | undefined;
}

/** What a client credentials login can come to: the password login's outcomes but the weak password. */
export type ClientLoginOutcome = Exclude<LoginOutcome, { kind: 'weak-password' }>;

export interface ClientLoginOptions {
  clients: TrustedClients;
  backend: Pick<Backend, 'lookupPatron'>;
  sessions: SessionStore;
  patronIds: PatronIds;
  throttle: LoginThrottle;
  tokenLifetimeMs: number;
  now?: () => number;
}

export class ClientCredentialsLogin {
  readonly #options: ClientLoginOptions;
  readonly #now: () => number;

  constructor(options: ClientLoginOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Rejects only with what the backend or the session store throws (the ILS unreachable ...).
   *
   * Until the secret is known to be right, an unknown client id, a known one
   * with a wrong secret and a known one called from outside its addresses
   * get the same answer after the same work (a secret check, against a
   * stand-in where there is no client to check it against), so neither the
   * body nor the time tells which ids exist or where they may log in from.
   * Failures from outside a client's addresses count apart from the
   * client's own: no one elsewhere can lock the client out, and its secret
   * can only be guessed from its own hosts.
   */
  async login(request: ClientLoginRequest): Promise<ClientLoginOutcome> {
    const options = this.#options;
    const { signal } = request;
    const client = request.clientId === undefined ? undefined : options.clients.find(request.clientId);
    const fromItsHosts = client?.addresses.allows(request.clientAddress) ?? false;
    // Only what no login can ever grant is refused before the secret: the same answer for every id.
    if (request.scopes !== undefined && grantScopes(request.scopes, DEFAULT_LOGIN_SCOPES).length === 0) {
      return { kind: 'no-grantable-scope', grantable: DEFAULT_LOGIN_SCOPES };
    }
    const gate = await options.throttle.beginClient(
      request.clientId ?? '',
      fromItsHosts,
      request.clientAddress,
      signal,
    );
    if (!gate.allowed) {
      if (gate.reason === 'busy') return { kind: 'busy', retryAfterSeconds: gate.retryAfterSeconds };
      return { kind: 'rejected', retryAfterSeconds: gate.retryAfterSeconds };
    }
    const verify = client !== undefined && fromItsHosts ? client.verify : options.clients.checkWithoutClient;
    let secretOk = false;
    // The secret as form-decoded, then as sent (see basicCredentials): a wrong one costs both checks, whoever asks.
    for (const secret of [request.clientSecret, request.clientSecretAsSent]) {
      if (secret !== undefined && !secretOk) secretOk = await verify(secret);
    }
    if (client === undefined || !fromItsHosts || !secretOk) {
      const lockouts = await gate.attempt.failed(undefined);
      for (const lockout of lockouts) logLockout(request.log, lockout, request.clientAddress, fromItsHosts);
      return { kind: 'rejected' };
    }
    // The secret is right: its failures are cleared whatever the ILS says about the patron.
    await gate.attempt.succeeded(client.id);
    if (request.scopes !== undefined && grantScopes(request.scopes, client.scopes).length === 0) {
      return { kind: 'no-grantable-scope', grantable: client.scopes };
    }

    const found: PatronLookup | null = await options.backend.lookupPatron(request.patron, { signal });
    // Same answer as a wrong secret: a patron name typo and a guessed secret look alike from outside.
    if (found === null) return { kind: 'rejected' };

    const allowed = allowedScopes(found.state);
    // In the canonical order of the account's scopes, whatever order the configuration lists the client's in.
    const granted = grantScopes(request.scopes, allowed).filter((scope) => client.scopes.includes(scope));
    if (granted.length === 0) return { kind: 'scopes-not-allowed', allowed };
    const { patron, token } = await startSession(options, found.barcode, granted, this.#now());
    // The patron stays out of the line: it may be the barcode.
    request.log?.info({ client: client.id }, 'client credentials login');
    return {
      kind: 'granted',
      patron,
      token,
      scopes: granted,
      expiresInSeconds: expiresInSecondsOf(options),
    };
  }
}

/** Longest client id a log line repeats: an unknown id is whatever someone sent. */
const LOGGED_ID_CHARS = 100;

/** A client's lockout names the client (its id is public); one from elsewhere says that the client's own logins go on. */
function logLockout(
  log: Logger | undefined,
  lockout: LockoutEvent,
  address: string | undefined,
  fromItsHosts: boolean,
): void {
  const subject = lockout.subject.slice(0, LOGGED_ID_CHARS);
  const locked = `locked for ${lockout.retryAfterSeconds} s after ${lockout.failures} failed`;
  const message =
    lockout.kind !== 'client'
      ? `client credentials lockout: ${lockout.kind} ${locked} client logins`
      : fromItsHosts
        ? `client credentials lockout: client ${JSON.stringify(subject)} ${locked} logins from its addresses`
        : `client credentials lockout: client id ${JSON.stringify(subject)} ${locked} logins from elsewhere (an unknown id, or outside its allowedAddresses); the client's own logins go on`;
  log?.warn({ lockout: { ...lockout, subject }, address }, message);
}
