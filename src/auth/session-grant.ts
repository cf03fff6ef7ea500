import type { Session, SessionStore } from '../state/sessions.js';
import type { PatronIds } from './patron-ids.js';

/** What issuing a session needs: where sessions live, the patron ids, the token lifetime. */
export interface SessionGrantOptions {
  sessions: SessionStore;
  patronIds: PatronIds;
  /** How long a token is valid, in milliseconds. */
  tokenLifetimeMs: number;
}

/** expires_in of a login's answer: whole seconds (OAuth 2.0), never more than the session has. */
export function expiresInSecondsOf(options: Pick<SessionGrantOptions, 'tokenLifetimeMs'>): number {
  return Math.floor(options.tokenLifetimeMs / 1000);
}

/**
 * Stores a session of the patron with the ILS barcode `barcode` and the
 * granted scopes, for the token lifetime from `now` (epoch milliseconds):
 * the public patron id, the session and its new token. Both logins, with a
 * password and with client credentials, end here.
 */
export async function startSession(
  options: SessionGrantOptions,
  barcode: string,
  scopes: string[],
  now: number,
): Promise<{ patron: string; session: Session; token: string }> {
  const patron = options.patronIds.fromBarcode(barcode);
  const session: Session = { patron, barcode, scopes, expiresAt: now + options.tokenLifetimeMs };
  return { patron, session, token: await options.sessions.create(session) };
}
