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
import { type DaiaMappingContext, type DepartmentSettings, daiaDocument, libraryDepartment } from './mapping.js';
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
}

/** A request identifier resolved: a barcode to ask the ILS about, or a URI that is none of ours. */
export type ResolvedId = { kind: 'barcode'; barcode: string; id: string } | { kind: 'foreign'; id: string };

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
/** What a barcode may look like before it is sent in a 17 (AB): SIP2 field text. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters cannot travel in a SIP2 field
const BARCODE = /^[^\u0000-\u001f\u007f|]{1,255}$/;

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
   * Maps a request identifier: an item URI from our template, else any other
   * URI (not ours: an unknown document), else a plain barcode. A barcode
   * SIP2 cannot carry is unknown too, and never sent.
   */
  resolve(requested: string): ResolvedId {
    const fromUri = this.options.uris.item.match(requested);
    if (fromUri !== null)
      return BARCODE.test(fromUri)
        ? { kind: 'barcode', barcode: fromUri, id: requested }
        : { kind: 'foreign', id: requested };
    if (SCHEME.test(requested)) return { kind: 'foreign', id: requested };
    const id = this.options.uris.item.build(requested);
    return BARCODE.test(requested) ? { kind: 'barcode', barcode: requested, id } : { kind: 'foreign', id };
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
    const barcodes = [
      ...new Set(
        [...documents.values()].flatMap(({ resolved }) => (resolved.kind === 'barcode' ? [resolved.barcode] : [])),
      ),
    ];
    const limit = limiter(this.options.maxParallel ?? DEFAULT_MAX_PARALLEL);
    const answers = await Promise.all(barcodes.map((barcode) => limit(() => this.lookup(barcode, signal))));
    const infos = new Map(barcodes.map((barcode, i) => [barcode, answers[i] ?? null]));

    const document: DaiaDocument[] = [];
    for (const { requested, resolved } of documents.values()) {
      if (resolved.kind === 'foreign') {
        document.push(resolved.id === requested ? { id: resolved.id } : { id: resolved.id, requested });
      } else {
        document.push(daiaDocument(requested, resolved.barcode, infos.get(resolved.barcode) ?? null, this.ctx));
      }
    }
    return {
      document,
      institution: { content: this.options.institution },
      timestamp: (this.options.now?.() ?? new Date()).toISOString(),
    };
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
