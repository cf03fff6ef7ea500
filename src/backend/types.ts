import type { z } from 'zod';
import type { CancelSignal } from '../cancel-signal.js';
import type {
  accountStateSchema,
  feeRecordSchema,
  feeSchema,
  paiaDocumentSchema,
  patronRecordSchema,
  serviceStatusSchema,
} from './paia-schemas.js';

/**
 * PAIA as the backend sees it: plain data in the spec's field names (its
 * shapes declared once, in paia-schemas.ts), and one interface the HTTP
 * layer calls. The backend speaks SIP2; the HTTP layer
 * never does. Patrons are addressed by their ILS barcode here: mapping public
 * patron identifiers to barcodes is the session's job.
 */

/** Service status of a document for a patron (spec: 0 none ... 5 rejected). */
export type ServiceStatus = z.infer<typeof serviceStatusSchema>;

/** Account state: 0 active, 1 inactive, 2 expired, 3 outstanding fees, 4 expired and fees. */
export type AccountState = z.infer<typeof accountStateSchema>;

/** The patron's account (paia-schemas.ts declares its fields). */
export type PatronRecord = z.infer<typeof patronRecordSchema>;

/** One document of items, renew, request and cancel (paia-schemas.ts declares its fields). */
export type PaiaDocument = z.infer<typeof paiaDocumentSchema>;

/** One fee; its amount is money as "x.xx CUR". */
export type Fee = z.infer<typeof feeSchema>;

export type FeeRecord = z.infer<typeof feeRecordSchema>;

/** One element of the doc list of renew, request and cancel. */
export interface DocumentRequest {
  item?: string;
  edition?: string;
  storage?: string;
  storageid?: string;
}

export type CredentialCheck =
  | { ok: true; barcode: string; state: AccountState }
  /**
   * Unknown patron and wrong password look the same to the client, on
   * purpose. `patron`: the ILS named the patron (a known patron, wrong
   * password), so failed logins count against that account whatever
   * spelling of its username was tried.
   */
  | { ok: false; patron?: string };

/** A patron the ILS knows, found without a password (client credentials logins). */
export interface PatronLookup {
  barcode: string;
  state: AccountState;
}

/** Per call: the caller's signal (its deadline, its client going away); SIP2 work not yet sent is then dropped. */
export interface CallOptions {
  signal?: CancelSignal | undefined;
}

export interface Backend {
  /** Checks the patron's credentials with the ILS (63 with AD; BL and CQ). */
  login(username: string, password: string, options?: CallOptions): Promise<CredentialCheck>;
  /**
   * Whether the ILS knows a patron by this username or barcode (63 without a
   * patron password: the terminal account is trusted); null when it does not.
   */
  lookupPatron(identifier: string, options?: CallOptions): Promise<PatronLookup | null>;
  /** Null when the ILS does not know the patron. */
  patron(barcode: string, options?: CallOptions): Promise<PatronRecord | null>;
  items(barcode: string, options?: CallOptions): Promise<PaiaDocument[]>;
  /**
   * Writes answer per document. When the call's signal aborts, documents not
   * yet sent come back "not sent" and those at the ILS "outcome unknown".
   */
  renew(barcode: string, docs: DocumentRequest[], options?: CallOptions): Promise<PaiaDocument[]>;
  request(barcode: string, docs: DocumentRequest[], options?: CallOptions): Promise<PaiaDocument[]>;
  cancel(barcode: string, docs: DocumentRequest[], options?: CallOptions): Promise<PaiaDocument[]>;
  fees(barcode: string, options?: CallOptions): Promise<FeeRecord>;
  /** Ends the patron's ILS session (35); failures are logged, never fatal to a logout. */
  logout(barcode: string, options?: CallOptions): Promise<void>;
}
