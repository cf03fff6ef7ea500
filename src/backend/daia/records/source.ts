import type { CancelSignal } from '../../../cancel-signal.js';

/**
 * Where a record's item barcodes come from (daia.records): a mapping file
 * or an ILS API. SIP2 has no message that lists a record's items, so DAIA
 * asks this first and then each item's 17 as for any item.
 */
export interface RecordSource {
  /**
   * The record's item barcodes, in the source's order, at most the
   * per-record bound; [] when the source does not know the record, and also
   * when it could not say (a lookup that failed: the source logs and counts
   * that, the record is answered without items). Rejects only when `signal`
   * aborts (the call is over).
   */
  barcodesOf(record: string, signal?: CancelSignal): Promise<readonly string[]>;
  /** Lookups that failed since start, their records answered without items (metrics); a file has none. */
  readonly failures: number;
  /** Stops what the source runs in the background (the file check); lookups still answer. */
  close(): void;
}

/**
 * Several sources in order (daia.records.file before daia.records.http): a
 * record is answered by the first that names copies for it, so a file can
 * list records an ILS API does not know.
 */
export function firstKnown(sources: readonly RecordSource[]): RecordSource {
  if (sources.length === 1) return sources[0] as RecordSource;
  return {
    async barcodesOf(record, signal) {
      for (const source of sources) {
        const barcodes = await source.barcodesOf(record, signal);
        if (barcodes.length > 0) return barcodes;
      }
      return [];
    },
    get failures() {
      return sources.reduce((sum, source) => sum + source.failures, 0);
    },
    close() {
      for (const source of sources) source.close();
    },
  };
}
