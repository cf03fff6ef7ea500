import type { Session, SessionStore } from '../state/sessions.js';
import type { PatronIds } from './patron-ids.js';

/** What issuing a session needs: where sessions live, the patron ids, the token lifetime. */
export interface SessionGrantOptions {
  sessions: SessionStore;
  patronIds: PatronIds;
  tokenLifetimeSeconds: number;
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
  const session: Session = { patron, barcode, scopes, expiresAt: now + options.tokenLifetimeSeconds * 1000 };
  return { patron, session, token: await options.sessions.create(session) };
}
