/**
 * The SIP2 client as the rest of the gateway (and the simulator) sees it:
 * every import from outside src/sip2/ comes through here
 * (test/unit/architecture.test.ts checks it). What is not listed is the
 * folder's own business: the pool's parts, the framer's and codec's
 * helpers, the checksum.
 */

export { ANOMALY_KINDS, type AnomalyKind, AnomalyLog } from './anomalies.js';
export { CHARSETS, type Charset, decodeText, encodeText, isCharset } from './charset.js';
export { type CircuitState, DEFAULT_CIRCUIT_OPTIONS } from './circuit.js';
export {
  type Decoded,
  decodeFrame,
  encodeMessage,
  endsWithChecksum,
  extraField,
  MAX_FIELD_LENGTH,
  noPatronFlags,
  redactSecrets,
} from './codec.js';
export {
  type ConnectionOptions,
  type RoundTripEvent,
  Sip2Connection,
  sip2Sessions,
  type TlsSessionInfo,
} from './connection.js';
export { formatSip2Date, isoDateOf, parseSip2Date, type Sip2DateTime, sip2DateFrom, toDate } from './date.js';
export {
  BUILTIN_DIALECTS,
  BUILTIN_DIALECTS_TEXT,
  type DateFormat,
  DIALECT_NAME,
  type Dialect,
  formatDialectDate,
  formatFineItem,
  isIsoDate,
  loadDialect,
  parseDialectDate,
  parseFineItem,
  terminatorOf,
} from './dialect.js';
export {
  CallCancelled,
  cancelled,
  IlsProtocolError,
  IlsTimeout,
  IlsUnavailable,
  isSip2Failure,
  PoolRefused,
  type ProtocolReason,
  Sip2DecodeError,
  Sip2EncodeError,
  type Sip2ErrorCode,
  type Sip2Failure,
} from './errors.js';
export { FrameDecoder } from './framer.js';
export { isTimeZone, maintenancePause, minutesOf, WEEKDAYS } from './maintenance.js';
export { SC_STATUS, Sip2Messages } from './messages.js';
export {
  DEFAULT_MAX_LIST_ENTRIES,
  fetchPatronList,
  firstPageRange,
  LIST_FIELD,
  listCount,
  type PagingOptions,
  type PatronList,
} from './paging.js';
export { POOL_DEFAULTS, Sip2Pool } from './pool/sip2-pool.js';
export type { PoolOptions } from './pool/types.js';
export { follow, Waiters } from './pool/waiters.js';
/** The message catalogue: every message type, code and table is public by nature. */
export * from './spec.js';
