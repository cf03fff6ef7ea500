import type { Logger } from 'pino';
import type { Backend, PatronLookup } from '../backend/types.js';
import { type CancelSignal, delay } from '../cancel-signal.js';
import type { SessionStore } from '../state/sessions.js';
import type { LoginOutcome } from './login.js';
import type { LockoutEvent, LoginThrottle } from './login-throttle.js';
import type { PatronIds } from './patron-ids.js';
import { allowedScopes, DEFAULT_LOGIN_SCOPES, grantScopes } from './scopes.js';
import { startSession } from './session-grant.js';
import type { TrustedClients } from './trusted-clients.js';

/**
 * The OAuth client credentials grant (PAIA 1.4, as VuFind's PAIA driver uses
 * it for single sign-on): a trusted client of auth.clients, authenticated by
 * its secret, logs a patron in by username or barcode without the patron's
 * password. The ILS only confirms that the account exists (63 without a
 * patron password: the terminal account is trusted).
 *
 * Brute-force protection is the password login's: failed secrets count
 * against the client id as the account, in the same store.
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
  tokenLifetimeSeconds: number;
  now?: () => number;
}

/** The throttle's account key of a client: apart from every username. */
const clientAccount = (id: string) => `client\0${id}`;

export class ClientCredentialsLogin {
  readonly #options: ClientLoginOptions;
  readonly #now: () => number;

  constructor(options: ClientLoginOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Rejects only with what the backend or the session store throws (the ILS unreachable ...). */
  async login(request: ClientLoginRequest): Promise<ClientLoginOutcome> {
    const options = this.#options;
    const client = request.clientId === undefined ? undefined : options.clients.find(request.clientId);
    // The client id is public (RFC 6749, 2.2): refusing its addresses before the secret is checked keeps
    // guessing at the secret to the client's own hosts.
    if (client !== undefined && !client.addresses.allows(request.clientAddress)) return { kind: 'client-not-allowed' };
    const offered = client?.scopes ?? DEFAULT_LOGIN_SCOPES;
    if (request.scopes !== undefined && grantScopes(request.scopes, offered).length === 0) {
      return { kind: 'no-grantable-scope', grantable: offered };
    }
    const account = clientAccount(request.clientId ?? '');
    const gate = await options.throttle.begin(account, request.clientAddress, request.signal);
    if (!gate.allowed) {
      if (gate.reason === 'busy') return { kind: 'busy', retryAfterSeconds: gate.retryAfterSeconds };
      return { kind: 'rejected', retryAfterSeconds: gate.retryAfterSeconds };
    }
    const secretOk =
      client !== undefined &&
      request.clientSecret !== undefined &&
      ((await client.verify(request.clientSecret)) ||
        (request.clientSecretAsSent !== undefined && (await client.verify(request.clientSecretAsSent))));
    if (client === undefined || !secretOk) {
      const lockouts = await gate.attempt.failed(undefined);
      for (const lockout of lockouts) logLockout(request.log, lockout, request.clientAddress);
      if (gate.attempt.slowdownMs > 0) await delay(gate.attempt.slowdownMs, request.signal);
      return { kind: 'rejected' };
    }
    // The secret is right: its failures are cleared whatever the ILS says about the patron.
    await gate.attempt.succeeded(account);

    const found: PatronLookup | null = await options.backend.lookupPatron(request.patron, { signal: request.signal });
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
      expiresInSeconds: options.tokenLifetimeSeconds,
    };
  }
}

function logLockout(log: Logger | undefined, lockout: LockoutEvent, address: string | undefined): void {
  log?.warn(
    { lockout: { ...lockout }, address },
    `client credentials lockout: ${lockout.kind} locked for ${lockout.retryAfterSeconds} s after ${lockout.failures} failed client logins`,
  );
}
