/**
 * The DAIA 1.0 response format (gbv/daia, "DAIA Response"), as far as this
 * gateway produces it. Fields left out are unknown to the library system.
 */

export interface DaiaEntity {
  id?: string;
  href?: string;
  content?: string;
}

type DaiaServiceType = 'presentation' | 'loan' | 'remote' | 'interloan' | 'openaccess';

export interface DaiaAvailable {
  service: DaiaServiceType;
  /** Where the patron can ask for the copy (a request for a copy on the shelf); an http(s) URL. */
  href?: string;
  /** ISO 8601 duration or "unknown". */
  delay?: string;
}

export interface DaiaUnavailable {
  service: DaiaServiceType;
  /** Where the patron can ask for the copy (a hold or recall); an http(s) URL. */
  href?: string;
  /** YYYY-MM-DD or "unknown"; absent: not known when or whether it comes back. */
  expected?: string;
  /** Waiting requests, >= 1. */
  queue?: number;
}

export interface DaiaItem {
  id?: string;
  label?: string;
  about?: string;
  department?: DaiaEntity;
  storage?: DaiaEntity;
  available?: DaiaAvailable[];
  unavailable?: DaiaUnavailable[];
}

export interface DaiaDocument {
  id: string;
  requested?: string;
  about?: string;
  item?: DaiaItem[];
}

export interface DaiaResponse {
  document: DaiaDocument[];
  institution?: DaiaEntity;
  timestamp?: string;
}
