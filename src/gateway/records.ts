import { FileRecordSource } from '../backend/daia/records/file-source.js';
import { HttpRecordSource } from '../backend/daia/records/http-source.js';
import { firstKnown, type RecordSource } from '../backend/daia/records/source.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../log.js';
import { packagePath } from '../package-root.js';

/**
 * The demo library's records (sip2-simulator/data/demo.json: each title's
 * titleId and its copies), what demo mode maps records with when
 * daia.records names no source: an edition URI of a demo title lists its
 * copies.
 */
export const DEMO_RECORD_MAPPING = packagePath('sip2-simulator', 'data', 'demo-records.json');

/**
 * Where DAIA's records come from (daia.records): the mapping file (read now:
 * a file that cannot serve throws), then the lookup; in demo mode without
 * either the demo mapping; else none (records are unknown documents).
 */
export function recordSource(config: Config, logger: Logger): RecordSource | null {
  const { records } = config.daia;
  const { http } = records;
  const file = records.file ?? (config.sip2.host === null && http.url === null ? DEMO_RECORD_MAPPING : null);
  const sources: RecordSource[] = [];
  if (file !== null) {
    sources.push(
      new FileRecordSource({
        path: file,
        maxItemsPerRecord: records.maxItemsPerRecord,
        checkIntervalMs: records.fileCheckMs,
        logger,
      }),
    );
  }
  if (http.url !== null) {
    sources.push(
      new HttpRecordSource({
        url: http.url,
        field: http.field,
        headers: http.headers,
        timeoutMs: http.timeoutMs,
        cacheTtlMs: http.cacheMs,
        failureTtlMs: http.failureCacheMs,
        maxEntries: http.maxEntries,
        maxConcurrent: http.maxConcurrent,
        maxBodyBytes: http.maxBodyBytes,
        maxItemsPerRecord: records.maxItemsPerRecord,
        logger,
      }),
    );
  }
  return sources.length === 0 ? null : firstKnown(sources);
}
