import { FileRecordSource, type FileRecordSourceOptions } from '../backend/daia/records/file-source.js';
import { HttpRecordSource, type HttpRecordSourceOptions } from '../backend/daia/records/http-source.js';
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

/** Where DAIA's records come from (daia.records): the mapping file, then the lookup; null for either: not used. */
export interface RecordOptions {
  file: Omit<FileRecordSourceOptions, 'logger'> | null;
  http: Omit<HttpRecordSourceOptions, 'logger'> | null;
}

/** daia.records as options; in demo mode without either source, the demo mapping. */
export function recordOptions(config: Config): RecordOptions {
  const { records } = config.daia;
  const { http } = records;
  const file = records.file ?? (config.sip2.host === null && http.url === null ? DEMO_RECORD_MAPPING : null);
  return {
    file:
      file === null
        ? null
        : {
            path: file,
            maxItemsPerRecord: records.maxItemsPerRecord,
            checkIntervalMs: records.fileCheckMs,
          },
    http:
      http.url === null
        ? null
        : {
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
          },
  };
}

/**
 * DAIA's record source: the mapping file (read now: a file that cannot
 * serve throws), then the lookup; null without either (records are unknown
 * documents).
 */
export function recordSource(options: RecordOptions, logger: Logger): RecordSource | null {
  const sources: RecordSource[] = [];
  if (options.file !== null) sources.push(new FileRecordSource({ ...options.file, logger }));
  if (options.http !== null) sources.push(new HttpRecordSource({ ...options.http, logger }));
  return sources.length === 0 ? null : firstKnown(sources);
}
