import type { CancelSignal } from '../../cancel-signal.js';
import {
  type ItemInformation,
  type ItemInformationResponse,
  Sip2EncodeError,
  type Sip2Messages,
} from '../../sip2/index.js';
import { inBackendTerms } from '../errors.js';
import { type ItemInfoCache, type ItemLookup, itemLookup } from '../item-cache.js';
import { DEFAULT_MAX_PARALLEL, limiter } from '../parallel.js';
import type { PoolShare } from '../pool-share.js';
import { SharedReads } from '../shared-reads.js';
import type { UriTemplates } from '../uris.js';
import { isSip2Barcode } from './barcode.js';
import { type DaiaMappingContext, type DepartmentSettings, daiaDocument, libraryDepartment } from './mapping.js';
import { recordDocument } from './records/document.js';
import { type RecordIds, recordIdOf } from './records/ids.js';
import type { RecordSource } from './records/source.js';
import type { RequestLink } from './request-link.js';
import type { DaiaDocument, DaiaResponse } from './types.js';

/** Sends one 17 through the pool (Sip2Pool.send). */
type ItemInformationSend = (
  message: ItemInformation,
  options?: { signal?: CancelSignal | undefined },
) => Promise<ItemInformationResponse>;

export interface DaiaServiceOptions {
  send: ItemInformationSend;
  messages: Pick<Sip2Messages, 'itemInformation'>;
  dialect: DaiaMappingContext['dialect'];
  uris: Pick<UriTemplates, 'item' | 'storage'>;
  /** sip2.institution: the response's institution entity. */
  institution: string;
  /** Item information answers to reuse (shared with the PAIA backend). */
  itemCache?: ItemInfoCache | null;
  /** At most this many 17s of one request in the pool at once (default 32; the gateway uses DAIA's share of the pool). */
  maxParallel?: number;
  /**
   * DAIA's share of the pool (daia.poolShare): every 17 of every request goes
   * through it, so patrons' calls keep the rest of the connections. Without
   * it, DAIA may use the whole pool.
   */
  share?: PoolShare | null;
  /** Where identical reads of concurrent requests meet (shared with the PAIA backend); default: this service's own. */
  sharedReads?: SharedReads;
  /** Clock for `timestamp` (tests). */
  now?: () => Date;
  /** Every item's department (daia.department; see libraryDepartment); default: the institution. */
  department?: DepartmentSettings & {
    /** The library's name in the ILS's latest 98 (AM), read at each item: a reconnect may bring another. */
    libraryName?: (() => string | undefined) | undefined;
  };
  /** Request links on the services (DAIA `href`); absent or null: none. */
  requests?: {
    /** daia.requestUrl, compiled. */
    link: RequestLink;
    /** Whether the ILS takes holds (its latest 98's BX, as acsSupportsHoldsOf reads it); undefined (unknown): no links on unavailable services. */
    acsSupportsHolds: () => boolean | undefined;
    /** daia.shelfRequests: links on available services too. */
    onShelf: boolean;
  } | null;
  /**
   * Records (daia.records): which request ids name records, and where their
   * item barcodes come from. Without it a record id is an unknown document.
   */
  records?: { source: RecordSource; ids: RecordIds } | null | undefined;
}

/** A request identifier resolved: a barcode to ask the ILS about, a record whose copies to ask about, or a URI that is none of ours. */
export type ResolvedId =
  | { kind: 'barcode'; barcode: string; id: string }
  | { kind: 'record'; record: string; id: string }
  | { kind: 'foreign'; id: string };

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** Splits a DAIA query id at vertical bars; empty identifiers are dropped, repeated ones kept once (first wins). */
export function splitQueryId(queryId: string): string[] {
  return [...new Set(queryId.split('|').filter((id) => id.trim() !== ''))];
}

/**
 * DAIA availability over SIP2 item information: one 17 per distinct item,
 * in parallel through the pool, at most maxParallel of them at once per
 * request and, with a share, at most the share's of all requests together.
 */
export class DaiaService {
  private readonly options: DaiaServiceOptions;
  private readonly ctx: DaiaMappingContext;
  private readonly itemInformation: ItemLookup;

  constructor(options: DaiaServiceOptions) {
    this.options = options;
    const { share } = options;
    // With a share, the share answers a caller that gives up; the 17 it let through runs to its end holding it.
    const viaShare: ItemInformationSend = share
      ? (message, callOptions) => share.run(() => options.send(message), callOptions?.signal)
      : options.send;
    // Requests asking about the same item at once share one 17 (and one slot of the share).
    const sharedReads = options.sharedReads ?? new SharedReads();
    const send: ItemInformationSend = (message, callOptions) =>
      sharedReads.send(message, callOptions ?? {}, viaShare as Parameters<SharedReads['send']>[2], 'daia');
    this.itemInformation = itemLookup(send, options.messages, options.itemCache);
    const { department, requests } = options;
    this.ctx = {
      dialect: options.dialect,
      uris: options.uris,
      institution: options.institution,
      // Getters: what the ILS's 98 says is read at each item, not once at start (the pool's sessions come and go).
      get department() {
        return libraryDepartment(department ?? {}, department?.libraryName?.(), options.institution);
      },
      get requests() {
        return requests
          ? { link: requests.link, holds: requests.acsSupportsHolds() === true, onShelf: requests.onShelf }
          : null;
      },
    };
  }

  /**
   * Maps a request identifier: an item URI from our template, else a record
   * (an edition URI or the record prefix, when records are configured; the
   * document id is the identifier as requested), else any other URI (not
   * ours: an unknown document), else a plain barcode. A barcode SIP2 cannot
   * carry is unknown too, and never sent.
   */
  resolve(requested: string): ResolvedId {
    const fromUri = this.options.uris.item.match(requested);
    if (fromUri !== null)
      return isSip2Barcode(fromUri)
        ? { kind: 'barcode', barcode: fromUri, id: requested }
        : { kind: 'foreign', id: requested };
    const { records } = this.options;
    const record = records ? recordIdOf(requested, records.ids) : null;
    if (record !== null) return { kind: 'record', record, id: requested };
    if (SCHEME.test(requested)) return { kind: 'foreign', id: requested };
    const id = this.options.uris.item.build(requested);
    return isSip2Barcode(requested) ? { kind: 'barcode', barcode: requested, id } : { kind: 'foreign', id };
  }

  /**
   * The DAIA response for request identifiers: one document per distinct
   * document id, in request order; unknown ids are documents without items.
   * Failures of the library system reject the whole call (BackendFailure).
   */
  availability(
    requestIds: readonly string[],
    options: { signal?: CancelSignal | undefined } = {},
  ): Promise<DaiaResponse> {
    return inBackendTerms(() => this.lookUpAll(requestIds, options.signal));
  }

  private async lookUpAll(requestIds: readonly string[], signal: CancelSignal | undefined): Promise<DaiaResponse> {
    const documents = new Map<string, { requested: string; resolved: ResolvedId }>();
    for (const requested of requestIds) {
      const resolved = this.resolve(requested);
      if (!documents.has(resolved.id)) documents.set(resolved.id, { requested, resolved });
    }
    // One 17 per distinct barcode of the request, whether asked for itself or as a record's copy; the
    // plain ones start at once, in request order, a record's as soon as its source has named them.
    const limit = limiter(this.options.maxParallel ?? DEFAULT_MAX_PARALLEL);
    const reads = new Map<string, Promise<ItemInformationResponse | null>>();
    const read = (barcode: string): Promise<ItemInformationResponse | null> => {
      let answer = reads.get(barcode);
      if (answer === undefined) {
        answer = limit(() => this.lookup(barcode, signal));
        reads.set(barcode, answer);
      }
      return answer;
    };
    const document = await Promise.all(
      [...documents.values()].map(async ({ requested, resolved }): Promise<DaiaDocument> => {
        switch (resolved.kind) {
          case 'foreign':
            return resolved.id === requested ? { id: resolved.id } : { id: resolved.id, requested };
          case 'barcode': {
            const info = read(resolved.barcode);
            return daiaDocument(requested, resolved.barcode, await info, this.ctx);
          }
          case 'record':
            return this.documentOfRecord(resolved.id, resolved.record, read, signal);
        }
      }),
    );
    return {
      document,
      institution: { content: this.options.institution },
      timestamp: (this.options.now?.() ?? new Date()).toISOString(),
    };
  }

  /** A record's document: its barcodes from the record source, each answered as an item is. */
  private async documentOfRecord(
    id: string,
    record: string,
    read: (barcode: string) => Promise<ItemInformationResponse | null>,
    signal: CancelSignal | undefined,
  ): Promise<DaiaDocument> {
    const barcodes = (await this.options.records?.source.barcodesOf(record, signal)) ?? [];
    const infos = await Promise.all(barcodes.map(read));
    return recordDocument(
      id,
      barcodes.map((barcode, i) => ({ barcode, info: infos[i] ?? null })),
      this.ctx,
    );
  }

  /** The 18 for one barcode; null when the barcode cannot be put into a 17 (an unknown item, not an error). */
  private async lookup(barcode: string, signal: CancelSignal | undefined): Promise<ItemInformationResponse | null> {
    try {
      return await this.itemInformation(barcode, signal);
    } catch (error) {
      if (error instanceof Sip2EncodeError) return null;
      throw error;
    }
  }
}
