import { LRUCache } from 'lru-cache';
import type { CancelSignal } from '../../../cancel-signal.js';
import type { Logger } from '../../../log.js';
import { entryBound } from '../../../lru-bound.js';
import { abortable } from '../../abortable.js';
import { limiter } from '../../parallel.js';
import { SharedCalls } from '../../shared-calls.js';
import { UriTemplate } from '../../uris.js';
import { isSip2Barcode } from '../barcode.js';
import { compileFieldPath, type FieldPath, pickTexts } from './field-path.js';
import { DEFAULT_MAX_ITEMS_PER_RECORD } from './mapping.js';
import type { RecordSource } from './source.js';

/**
 * Records from an ILS API that lists a record's items (daia.records.http):
 * GET the URL template with the record id filled in (percent-encoded), read
 * the JSON answer, pick the barcodes with the field path. Every lookup is
 * bounded: by its timeout (waiting for a free slot included) and by the
 * call's signal, by the size of the answer, and by the items per record;
 * at most `maxConcurrent` run at once, identical ones in flight share one
 * request, and answers are cached. A lookup that fails (timed out,
 * unreachable, an HTTP error, not JSON, another shape, too large) answers
 * no barcodes, so its record is a document without items; it is logged (at
 * most one line a minute), counted, and cached for a short while, so a dead
 * API is not asked again by every request.
 */

/** The defaults of the lookup's bounds (daia.records.http.*). */
export const HTTP_LOOKUP_DEFAULTS = {
  /** Koha's REST API: an array of items, the barcode in external_id. */
  field: '[].external_id',
  /** Well below http.requestTimeoutMs, so the record's document (empty) and the rest of the call still make it. */
  timeoutMs: 3000,
  /** Copies of a record change rarely (acquisitions, withdrawals); their availability comes from SIP2 each time. */
  cacheTtlMs: 300_000,
  /** Long enough that a dead API is not asked by every request, short enough that it serves soon after it is back. */
  failureTtlMs: 30_000,
  maxEntries: 10_000,
  maxConcurrent: 8,
  /** A record with a few hundred items in Koha's answer is about 200 kB. */
  maxBodyBytes: 1024 * 1024,
} as const;

export interface HttpRecordSourceOptions {
  /** The URL template, with {record} once, e.g. https://koha.example.org/api/v1/biblios/{record}/items. */
  url: string;
  /** Where the barcodes are in the answer (field-path.ts), e.g. "[].external_id". */
  field?: string;
  /** Request headers (an API key); never logged. */
  headers?: readonly { readonly name: string; readonly value: string }[];
  /** Bound on one lookup, waiting for a free slot included, in milliseconds. */
  timeoutMs?: number;
  /** How long a record's barcodes are reused, in milliseconds. */
  cacheTtlMs?: number;
  /** How long a failed lookup is remembered (its record answered without items), in milliseconds. */
  failureTtlMs?: number;
  /** Most records cached; the least recently used go first. */
  maxEntries?: number;
  /** Lookups running at once, over all requests. */
  maxConcurrent?: number;
  /** Largest answer read, in bytes. */
  maxBodyBytes?: number;
  /** Most barcodes per record (daia.records.maxItemsPerRecord; default mapping.ts's). */
  maxItemsPerRecord?: number;
  logger?: Logger | undefined;
  /** Called once per failed lookup (metrics). */
  onFailure?: (() => void) | undefined;
}

/** At most one log line of failed lookups per this interval; the rest are counted into the next line. */
const FAILURE_LOG_INTERVAL_MS = 60_000;

/** Statuses that say the ILS has no such record: its document has no items, and that is no failure. */
const NO_SUCH_RECORD = new Set([404, 410]);

/** A lookup that failed: its record is answered without items, and remembered so for failureTtlMs. */
class LookupFailure extends Error {}

export class HttpRecordSource implements RecordSource {
  readonly #options: Required<Omit<HttpRecordSourceOptions, 'headers' | 'logger' | 'onFailure'>> &
    Pick<HttpRecordSourceOptions, 'logger' | 'onFailure'>;
  readonly #template: UriTemplate;
  readonly #origin: string;
  readonly #path: FieldPath;
  readonly #headers: Headers;
  readonly #cache: LRUCache<string, readonly string[]>;
  readonly #inFlight = new SharedCalls<readonly string[]>();
  readonly #slots: ReturnType<typeof limiter>;
  #failures = 0;
  #lastLogAt = Number.NEGATIVE_INFINITY;
  #unlogged = 0;

  /** Throws when the URL template or the field path is not valid. */
  constructor(options: HttpRecordSourceOptions) {
    const defaults = HTTP_LOOKUP_DEFAULTS;
    this.#options = {
      url: options.url,
      field: options.field ?? defaults.field,
      timeoutMs: options.timeoutMs ?? defaults.timeoutMs,
      cacheTtlMs: options.cacheTtlMs ?? defaults.cacheTtlMs,
      failureTtlMs: options.failureTtlMs ?? defaults.failureTtlMs,
      maxEntries: options.maxEntries ?? defaults.maxEntries,
      maxConcurrent: options.maxConcurrent ?? defaults.maxConcurrent,
      maxBodyBytes: options.maxBodyBytes ?? defaults.maxBodyBytes,
      maxItemsPerRecord: options.maxItemsPerRecord ?? DEFAULT_MAX_ITEMS_PER_RECORD,
      logger: options.logger,
      onFailure: options.onFailure,
    };
    this.#template = new UriTemplate(options.url, 'record');
    this.#origin = new URL(this.#template.build('x')).origin;
    this.#path = compileFieldPath(this.#options.field);
    this.#headers = new Headers({ Accept: 'application/json' });
    for (const { name, value } of options.headers ?? []) this.#headers.set(name, value);
    this.#cache = new LRUCache({ ...entryBound(this.#options.maxEntries), ttl: this.#options.cacheTtlMs });
    this.#slots = limiter(this.#options.maxConcurrent);
  }

  /** Failed lookups since start. */
  get failures(): number {
    return this.#failures;
  }

  barcodesOf(record: string, signal?: CancelSignal): Promise<readonly string[]> {
    const cached = this.#cache.get(record);
    if (cached !== undefined) return Promise.resolve(cached);
    return this.#inFlight.run(record, (shared) => this.#lookUp(record, shared), signal);
  }

  close(): void {
    // Nothing runs in the background: lookups in flight end with their timeout.
  }

  /** One lookup for whoever waits (SharedCalls); `shared` aborts once none of them waits any more. */
  async #lookUp(record: string, shared: CancelSignal): Promise<readonly string[]> {
    const { timeoutMs } = this.#options;
    const controller = new AbortController();
    let asking = false;
    // Remembered either way: an API too slow for the lookups asked of it gets fewer of them for a while.
    const timer = setTimeout(() => {
      controller.abort(
        new LookupFailure(
          asking
            ? `gave no answer within ${timeoutMs} ms (daia.records.http.timeoutMs)`
            : `could not be asked within ${timeoutMs} ms: ${this.#options.maxConcurrent} lookups were running (daia.records.http.maxConcurrent)`,
        ),
      );
    }, timeoutMs);
    const stop = () => controller.abort(shared.reason);
    shared.addEventListener('abort', stop);
    try {
      const task = this.#slots(() => {
        // A task whose caller went on (timeout, call over) frees its slot at once.
        if (controller.signal.aborted) return Promise.reject(controller.signal.reason);
        asking = true;
        return this.#fetch(record, controller.signal);
      });
      // The wait for a slot counts: past the timeout the caller goes on, and the queued task finds its signal aborted.
      const barcodes = await abortable(task, controller.signal, () => controller.signal.reason);
      this.#cache.set(record, barcodes);
      return barcodes;
    } catch (error) {
      // Nobody waits any more (the calls are over): nothing to tell, nothing to remember.
      if (shared.aborted) throw error;
      const failure =
        error instanceof LookupFailure ? error : new LookupFailure(`could not be asked: ${(error as Error).message}`);
      this.#failed(record, failure);
      return [];
    } finally {
      clearTimeout(timer);
      shared.removeEventListener('abort', stop);
    }
  }

  async #fetch(record: string, signal: AbortSignal): Promise<readonly string[]> {
    let response: Response;
    try {
      response = await fetch(this.#template.build(record), { headers: this.#headers, signal });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new LookupFailure(`could not be reached: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
    }
    if (NO_SUCH_RECORD.has(response.status)) {
      await response.body?.cancel();
      return [];
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new LookupFailure(`answered HTTP ${response.status}`);
    }
    const text = await this.#readBody(response, signal);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new LookupFailure('answered something that is not JSON');
    }
    const picked = pickTexts(json, this.#path, Number.POSITIVE_INFINITY);
    if ('problem' in picked)
      throw new LookupFailure(
        `answered JSON of another shape: ${picked.problem} (daia.records.http.field "${this.#path.text}")`,
      );
    const barcodes = [...new Set(picked.values.map((value) => value.trim()).filter(isSip2Barcode))];
    return barcodes.slice(0, this.#options.maxItemsPerRecord);
  }

  /** The answer's text, at most maxBodyBytes of it: a larger one is a failure, not read to its end. */
  async #readBody(response: Response, signal: AbortSignal): Promise<string> {
    const { maxBodyBytes } = this.#options;
    const tooLarge = () =>
      new LookupFailure(`answered more than ${maxBodyBytes} bytes (daia.records.http.maxBodyBytes)`);
    if (Number(response.headers.get('content-length') ?? 0) > maxBodyBytes) {
      await response.body?.cancel();
      throw tooLarge();
    }
    if (response.body === null) return '';
    const chunks: Uint8Array[] = [];
    let size = 0;
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > maxBodyBytes) {
          await reader.cancel();
          throw tooLarge();
        }
        chunks.push(value);
      }
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw error instanceof LookupFailure
        ? error
        : new LookupFailure(`broke off its answer: ${(error as Error).message}`);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  #failed(record: string, failure: LookupFailure): void {
    this.#failures += 1;
    this.#options.onFailure?.();
    this.#cache.set(record, [], { ttl: this.#options.failureTtlMs });
    const now = performance.now();
    if (now - this.#lastLogAt < FAILURE_LOG_INTERVAL_MS) {
      this.#unlogged += 1;
      return;
    }
    const unlogged = this.#unlogged;
    this.#lastLogAt = now;
    this.#unlogged = 0;
    this.#options.logger?.warn(
      { api: this.#origin, record, problem: failure.message, ...(unlogged > 0 ? { moreFailures: unlogged } : {}) },
      `the record lookup at ${this.#origin} ${failure.message}: record ${JSON.stringify(record)} is answered without items${unlogged > 0 ? ` (and ${unlogged} more failed lookups in the last minute)` : ''}`,
    );
  }
}
