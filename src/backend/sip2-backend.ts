import type { Logger } from 'pino';
import {
  type AcsStatus,
  CallCancelled,
  DEFAULT_MAX_LIST_ENTRIES,
  type Dialect,
  fetchPatronList,
  firstPageRange,
  type HoldResponse,
  type ItemInformationResponse,
  isIsoDate,
  isSip2Failure,
  listCount,
  type PagingOptions,
  type PatronInformationResponse,
  type PatronList,
  parseDialectDate,
  type RenewResponse,
  type RequestMessage,
  type ResponseOf,
  Sip2EncodeError,
  type Sip2Failure,
  type Sip2Messages,
  SUPPORTED_MESSAGES,
  type SummaryList,
  type SupportedMessage,
} from '../sip2/index.js';
import { accountState, expiryOf, localDateOf } from './account-state.js';
import {
  type DocumentContext,
  type EntryKind,
  itemDocument,
  nonEmpty,
  queueLength,
  renewalOffered,
  storageOf,
} from './documents.js';
import { inBackendTerms } from './errors.js';
import { feeRecord } from './fees.js';
import { type ItemInfoCache, type ItemLookup, itemLookup } from './item-cache.js';
import { parseCurrency } from './money.js';
import { DEFAULT_MAX_PARALLEL, limiter } from './parallel.js';
import { SharedReads } from './shared-reads.js';
import type {
  Backend,
  CallOptions,
  CredentialCheck,
  DocumentRequest,
  FeeRecord,
  PaiaDocument,
  PatronLookup,
  PatronRecord,
  ServiceStatus,
} from './types.js';
import { compileUriTemplates, type UriTemplates, type UriTemplatesConfig } from './uris.js';

/** One SIP2 round trip: `(message, options) => pool.send(message, options)`. */
export type Sip2Send = <M extends RequestMessage>(message: M, options?: CallOptions) => Promise<ResponseOf<M['code']>>;

export interface Sip2BackendOptions {
  /** Sends one request through the pool (which retries reads and never re-sends 29/15). */
  send: Sip2Send;
  messages: Sip2Messages;
  dialect: Dialect;
  /** BP/BQ page size for the 64 lists (normally the dialect's pageSize). */
  pageSize: number;
  /** Currency when the ILS sends no usable BH; three upper-case letters. */
  currency: string;
  uris: UriTemplatesConfig;
  logger?: Logger | undefined;
  /** The clock for "today" (account expiry); default: the system clock. */
  now?: (() => Date) | undefined;
  /**
   * The ILS's latest 98 ACS status (the pool's `acsStatus`): its BX says
   * whether holds (15) and renewals (29) are supported, which is what
   * `cancancel` and `canrenew` report. Without it, or while it answers
   * null, both are left out (unknown).
   */
  acsStatus?: (() => Pick<AcsStatus, 'supportedMessages'> | null | undefined) | undefined;
  /**
   * The date (YYYY-MM-DD) sent as `expires` of an active account (status 0)
   * whose 64 carries no expiry date the dialect can read; null or absent:
   * none is sent. VuFind offers hold forms only to patrons with an `expires`
   * after today (PAIA.php checkRequestIsValid).
   */
  expiresWhenUnknown?: string | null | undefined;
  /** At most this many SIP2 requests of one call in the pool at once (default 32; the gateway uses sip2.pool.max). */
  maxParallel?: number | undefined;
  /** The most entries read of one 64 list, whatever count the ILS announces (sip2.maxListEntries; default 10,000). */
  maxListEntries?: number | undefined;
  /** Item information answers to reuse (shared with DAIA); renew, request and cancel drop their items from it. */
  itemCache?: ItemInfoCache | null | undefined;
  /** Where identical reads of concurrent calls meet (shared with DAIA); default: this backend's own. */
  sharedReads?: SharedReads | undefined;
}

const EMAIL =
  /^[^\s@"(),:;<>[\\\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

/** What one document of renew, request or cancel resolves to before it goes to the ILS. */
type Plan<T> = { key: string; target: T } | { done: PaiaDocument };

type Outcome<R> = { ok: true; response: R } | { ok: false; error: unknown };

/** How each write method words and numbers its per-document answers. */
interface WriteKind {
  /** For messages: "renewal", "request", "cancellation". */
  noun: string;
  /** Status of a document whose message may or may not have been executed. */
  unknownStatus: ServiceStatus;
  /** Status of a document whose message certainly was not executed. */
  notSentStatus: ServiceStatus;
  /** Status of a document the gateway cannot map to the ILS. */
  unknownDocumentStatus: ServiceStatus;
}

const RENEW: WriteKind = { noun: 'renewal', unknownStatus: 3, notSentStatus: 3, unknownDocumentStatus: 0 };
const REQUEST: WriteKind = { noun: 'request', unknownStatus: 0, notSentStatus: 5, unknownDocumentStatus: 5 };
const CANCEL: WriteKind = { noun: 'cancellation', unknownStatus: 1, notSentStatus: 1, unknownDocumentStatus: 0 };

interface HoldTarget {
  item?: string;
  title?: string;
  pickupLocation?: string;
}

/**
 * PAIA over SIP2 (design.md, "PAIA over SIP2"). Reads fan out in parallel
 * through the pool; writes (29, 15) are sent once per distinct document and
 * never retried: an unknown outcome is reported on the document.
 */
export class Sip2Backend implements Backend {
  private readonly send: Sip2Send;
  private readonly messages: Sip2Messages;
  private readonly dialect: Dialect;
  private readonly pageSize: number;
  private readonly currency: string;
  private readonly uris: UriTemplates;
  private readonly logger: Logger | undefined;
  private readonly now: () => Date;
  private readonly acsStatus: () => Pick<AcsStatus, 'supportedMessages'> | null | undefined;
  private readonly expiresWhenUnknown: string | null;
  private readonly maxParallel: number;
  private readonly maxListEntries: number;
  private readonly itemCache: ItemInfoCache | null;
  private readonly itemInformation: ItemLookup;
  private readonly sharedReads: SharedReads;
  private warnedCounts = false;
  /** The last today() and the second it was read in. */
  private todayOf: { second: number; date: string } | null = null;

  constructor(options: Sip2BackendOptions) {
    const currency = parseCurrency(options.currency);
    if (currency === null || currency !== options.currency)
      throw new Error(`currency "${options.currency}" must be three upper-case letters`);
    if (!Number.isInteger(options.pageSize) || options.pageSize < 1)
      throw new RangeError('pageSize must be an integer >= 1');
    const expiresWhenUnknown = options.expiresWhenUnknown ?? null;
    if (expiresWhenUnknown !== null && !isIsoDate(expiresWhenUnknown))
      throw new RangeError(`expiresWhenUnknown "${expiresWhenUnknown}" must be a date YYYY-MM-DD`);
    const sharedReads = options.sharedReads ?? new SharedReads();
    this.sharedReads = sharedReads;
    this.send = (message, callOptions) => sharedReads.send(message, callOptions ?? {}, options.send);
    this.messages = options.messages;
    this.dialect = options.dialect;
    this.pageSize = options.pageSize;
    this.currency = currency;
    this.uris = compileUriTemplates(options.uris);
    this.logger = options.logger;
    this.now = options.now ?? (() => new Date());
    this.acsStatus = options.acsStatus ?? (() => null);
    this.expiresWhenUnknown = expiresWhenUnknown;
    this.maxParallel = options.maxParallel ?? DEFAULT_MAX_PARALLEL;
    this.maxListEntries = options.maxListEntries ?? DEFAULT_MAX_LIST_ENTRIES;
    this.itemCache = options.itemCache ?? null;
    this.itemInformation = itemLookup(this.send, this.messages, this.itemCache);
    limiter(this.maxParallel); // validates the bound now rather than on the first call
  }

  // ------------------------------------------------------------ auth

  login(username: string, password: string, options: CallOptions = {}): Promise<CredentialCheck> {
    return inBackendTerms(() => this.checkCredentials(username, password, options));
  }

  lookupPatron(identifier: string, options: CallOptions = {}): Promise<PatronLookup | null> {
    return inBackendTerms(() => this.findPatron(identifier, options));
  }

  logout(barcode: string, options: CallOptions = {}): Promise<void> {
    return inBackendTerms(() => this.endSession(barcode, options));
  }

  patron(barcode: string, options: CallOptions = {}): Promise<PatronRecord | null> {
    return inBackendTerms(() => this.readPatron(barcode, options));
  }

  items(barcode: string, options: CallOptions = {}): Promise<PaiaDocument[]> {
    return inBackendTerms(() => this.readItems(barcode, options));
  }

  fees(barcode: string, options: CallOptions = {}): Promise<FeeRecord> {
    return inBackendTerms(() => this.readFees(barcode, options));
  }

  renew(barcode: string, docs: DocumentRequest[], options: CallOptions = {}): Promise<PaiaDocument[]> {
    return inBackendTerms(() => this.renewItems(barcode, docs, options));
  }

  request(barcode: string, docs: DocumentRequest[], options: CallOptions = {}): Promise<PaiaDocument[]> {
    return inBackendTerms(() => this.placeHolds(barcode, docs, options));
  }

  cancel(barcode: string, docs: DocumentRequest[], options: CallOptions = {}): Promise<PaiaDocument[]> {
    return inBackendTerms(() => this.cancelHolds(barcode, docs, options));
  }

  // ------------------------------------------------------------ in SIP2 terms (their errors become BackendFailure above)

  private async checkCredentials(username: string, password: string, options: CallOptions): Promise<CredentialCheck> {
    // An empty AD means "no password" to some ILSs, which then answer CQ=Y.
    if (username === '' || password === '') return { ok: false };
    let response: PatronInformationResponse;
    try {
      response = await this.send(this.messages.patronInformation(username, { password }), options);
    } catch (error) {
      // A username or password SIP2 cannot carry (|, CR, characters outside the charset) cannot be valid.
      if (error instanceof Sip2EncodeError) return { ok: false };
      throw error;
    }
    if (response.validPatron !== true) return { ok: false };
    if (response.validPatronPassword !== true) {
      const patron = nonEmpty(response.patronIdentifier);
      return patron === undefined ? { ok: false } : { ok: false, patron };
    }
    return {
      ok: true,
      barcode: nonEmpty(response.patronIdentifier) ?? username,
      state: accountState(response, this.dialect, this.today()),
    };
  }

  private async findPatron(identifier: string, options: CallOptions): Promise<PatronLookup | null> {
    if (identifier === '') return null;
    let response: PatronInformationResponse;
    try {
      response = await this.send(this.messages.patronInformation(identifier), options);
    } catch (error) {
      // An identifier SIP2 cannot carry names no patron.
      if (error instanceof Sip2EncodeError) return null;
      throw error;
    }
    // Only BL=Y: a password login needs it too, and an ILS without BL cannot be told "no such patron" apart.
    if (response.validPatron !== true) return null;
    return {
      barcode: nonEmpty(response.patronIdentifier) ?? identifier,
      state: accountState(response, this.dialect, this.today()),
    };
  }

  private async endSession(barcode: string, options: CallOptions): Promise<void> {
    try {
      await this.send(this.messages.endSession(barcode), options);
    } catch (error) {
      this.logger?.warn({ reason: (error as Error).message }, 'SIP2 end patron session failed; logout goes on');
    }
  }

  // ------------------------------------------------------------ reads

  private async readPatron(barcode: string, options: CallOptions): Promise<PatronRecord | null> {
    const response = await this.send(this.messages.patronInformation(barcode), options);
    if (!isKnownPatron(response)) return null;
    const record: PatronRecord = {
      name: response.personalName.trim(),
      status: accountState(response, this.dialect, this.today()),
    };
    const email = nonEmpty(response.emailAddress);
    if (email !== undefined && email.length <= 254 && EMAIL.test(email)) record.email = email;
    const address = nonEmpty(response.homeAddress);
    if (address !== undefined) record.address = address;
    const expires = expiryOf(response, this.dialect) ?? (record.status === 0 ? this.expiresWhenUnknown : null);
    if (expires !== null) record.expires = expires;
    const patronClass = nonEmpty(response.extra?.find(([tag]) => tag === 'PC')?.[1]);
    if (this.uris.patronType && patronClass !== undefined) record.type = [this.uris.patronType.build(patronClass)];
    return record;
  }

  private async readItems(barcode: string, options: CallOptions): Promise<PaiaDocument[]> {
    // Lists, pages and items of this call share one bound on what it has in the pool at once. Waiting
    // list requests go before waiting 17s: a list page names more items to ask about.
    const limit = limiter(this.maxParallel);
    const sendList: Sip2Send = (message) => limit(() => this.send(message, options), LIST_PRIORITY);
    const lookups = new Map<string, Promise<ItemInformationResponse>>();
    const lookup = (entry: string): Promise<ItemInformationResponse> => {
      let info = lookups.get(entry);
      if (info === undefined) {
        info = limit(() => this.itemInformation(entry, options.signal));
        // Looked up before it is awaited: a call that fails first must not leave an unhandled rejection.
        info.catch(() => {});
        lookups.set(entry, info);
      }
      return info;
    };
    const lists =
      this.dialect.listCounts === 'reliable'
        ? await this.listsByCount(barcode, sendList, lookup)
        : await this.allLists(barcode, sendList, lookup);
    if (lists === null) return [];
    const { charged, overdue, recall, hold, unavailable } = lists;

    const held = distinct([...charged.entries, ...overdue.entries, ...recall.entries]);
    const pending = distinct(unavailable.entries);
    const pendingSet = new Set(pending);
    const ready =
      this.dialect.holdLists === 'all-in-AS'
        ? distinct(hold.entries).filter((entry) => !pendingSet.has(entry))
        : distinct(hold.entries);

    // One document per entry: a loan wins over a hold on the same item, a ready hold over a pending one.
    const seen = new Set<string>();
    const entries: Array<[entry: string, kind: EntryKind]> = [];
    for (const [list, kind] of [
      [held, 'held'],
      [ready, 'ready'],
      [pending, 'pending'],
    ] as const) {
      for (const entry of list) {
        if (seen.has(entry)) continue;
        seen.add(entry);
        entries.push([entry, kind]);
      }
    }

    const infos = await Promise.all(entries.map(([entry]) => lookup(entry)));
    const ctx: DocumentContext = {
      dialect: this.dialect,
      uris: this.uris,
      canCancel: acsSupportsOf(this.acsStatus(), 'hold'),
      canRenew: renewalOffered(
        charged.first.patronStatus.renewalPrivilegesDenied,
        acsSupportsOf(this.acsStatus(), 'renew'),
      ),
    };
    return entries.map(([entry, kind], i) => itemDocument(entry, kind, infos[i]!, ctx));
  }

  /**
   * Counts not to be trusted: all five lists at once, whatever the counts say, with a 17 for each entry as
   * soon as its page is in; null for an unknown patron.
   */
  private async allLists(
    barcode: string,
    send: Sip2Send,
    lookup: (entry: string) => Promise<unknown>,
  ): Promise<ItemLists | null> {
    const onEntries = lookEach(lookup);
    const [charged, overdue, recall, hold, unavailable] = await Promise.all([
      this.list(barcode, 'charged', send, { onEntries }),
      this.list(barcode, 'overdue', send, { onEntries }),
      this.list(barcode, 'recall', send, { onEntries }),
      this.list(barcode, 'hold', send, { onEntries }),
      this.list(barcode, 'unavailableHold', send, { onEntries }),
    ]);
    if (!isKnownPatron(charged.first)) return null;
    return { charged, overdue, recall, hold, unavailable };
  }

  /**
   * Counts to be trusted (dialect listCounts: reliable): the charged list's
   * first page comes first, and its 64 carries all six counts. Then, at
   * once: the other charged pages and only the lists whose count is not 0
   * (a blank count is unknown: that list is read), with a 17 for each entry
   * of any list as soon as its page is in. A list the dialect says is part of the
   * charged list (chargedIncludes) is read only when the charged list came
   * back incomplete.
   *
   * The trade-off: a patron with holds (or overdues the ILS does not list as
   * charged) now waits for the charged answer before those lists go out, one
   * round trip that the five-at-once read did not have; the 17s of the
   * charged entries run during it, so a patron with loans pays little or
   * nothing, and one with nothing but loans saves every other list. A patron
   * with only holds pays the extra round trip in full.
   */
  private async listsByCount(
    barcode: string,
    send: Sip2Send,
    lookup: (entry: string) => Promise<unknown>,
  ): Promise<ItemLists | null> {
    const paging = this.paging();
    const range = firstPageRange(paging);
    const first = await send(this.messages.patronInformation(barcode, { list: 'charged', ...range }));
    if (!isKnownPatron(first)) return null;
    const lookAll = lookEach(lookup);
    // A charged count below the entries on its own first page: this ILS's counts cannot be trusted (one that
    // writes 0000 whatever the lists hold); then every list is read, as for a dialect whose counts are unreliable.
    const chargedCount = listCount(first, 'charged');
    const contradicted = chargedCount !== null && (first.chargedItems?.length ?? 0) > chargedCount;
    if (contradicted) this.countsContradicted(chargedCount, first.chargedItems?.length ?? 0);
    const wanted = (list: SummaryList) => contradicted || listCount(first, list) !== 0;
    const inCharged = (list: SummaryList) => (this.dialect.chargedIncludes as readonly string[]).includes(list);
    const none: PatronList = { entries: [], first, requests: 0, truncated: false };
    const read = (list: SummaryList, now: boolean): Promise<PatronList> => {
      if (!(wanted(list) && now)) return Promise.resolve(none);
      const reading = this.list(barcode, list, send, { onEntries: lookAll });
      // Awaited only after the charged list: should that fail first, this one's failure is not unhandled.
      reading.catch(() => {});
      return reading;
    };

    // Every list request before the first page's 17s: lists name more items to ask about, so a 17 that takes a
    // connection first makes the lists wait a round trip (alice: four round trips instead of three).
    const holdList = read('hold', true);
    const unavailableList = read('unavailableHold', true);
    const overdueList = read('overdue', !inCharged('overdue'));
    const recallList = read('recall', !inCharged('recall'));
    const chargedList = this.list(barcode, 'charged', send, { first, onEntries: lookAll });
    const charged = await chargedList;
    // Complete: the ILS announced a count and every entry of it was read.
    const complete = !contradicted && listCount(first, 'charged') !== null && !charged.truncated;
    const [overdue, recall, hold, unavailable] = await Promise.all([
      inCharged('overdue') && !complete ? read('overdue', true) : overdueList,
      inCharged('recall') && !complete ? read('recall', true) : recallList,
      holdList,
      unavailableList,
    ]);
    return { charged, overdue, recall, hold, unavailable };
  }

  /** Once per backend: the warning that the dialect's listCounts: reliable does not fit this ILS. */
  private countsContradicted(count: number, entries: number): void {
    if (this.warnedCounts) return;
    this.warnedCounts = true;
    this.logger?.warn(
      { dialect: this.dialect.name, chargedItemsCount: count, chargedItems: entries },
      'the ILS announced fewer charged items than it listed: its 64 counts cannot be trusted, so every list is read on each items call; set listCounts: unreliable in the dialect',
    );
  }

  private async readFees(barcode: string, options: CallOptions): Promise<FeeRecord> {
    // Fine pages share one bound per call too: a patron with thousands of fines must not fill the pool's queue.
    const limit = limiter(this.maxParallel);
    const fines = await this.list(barcode, 'fine', (message) => limit(() => this.send(message, options)));
    if (!isKnownPatron(fines.first)) return { fee: [] };
    return feeRecord(
      fines.first,
      fines.entries,
      { dialect: this.dialect, uris: this.uris, currency: this.currency },
      (unparsed) => {
        this.logger?.warn(
          { dialect: this.dialect.name, ...unparsed },
          'fine items (AV) that fit neither the dialect nor carry one amount are left out of the fees',
        );
      },
    );
  }

  // ------------------------------------------------------------ writes

  private renewItems(barcode: string, docs: DocumentRequest[], options: CallOptions): Promise<PaiaDocument[]> {
    return this.write<string, RenewResponse>(barcode, docs, RENEW, {
      plan: (doc) => {
        if (doc.item === undefined) {
          return {
            done: unknownDocument(doc, RENEW, doc.edition === undefined ? 'unknown item' : 'renewal needs an item URI'),
          };
        }
        const item = this.uris.item.match(doc.item);
        return item === null ? { done: unknownDocument(doc, RENEW, 'unknown item') } : { key: item, target: item };
      },
      execute: (item) => this.send(this.messages.renew(barcode, item), options),
      itemOf: (item) => item,
      answer: (doc, item, response) => {
        const result: PaiaDocument = { status: 3, item: this.uris.item.build(item), requested: requestedOf(doc) };
        if (!response.ok) {
          result.error = screenMessage(response) ?? 'the library system refused the renewal';
          return result;
        }
        const about = nonEmpty(response.titleIdentifier);
        if (about !== undefined) result.about = about;
        const due = parseDialectDate(response.dueDate, this.dialect.dueDateFormat);
        if (due !== null) {
          result.duedate = due;
          result.endtime = due;
        }
        return result;
      },
    });
  }

  private placeHolds(barcode: string, docs: DocumentRequest[], options: CallOptions): Promise<PaiaDocument[]> {
    return this.write<HoldTarget, HoldResponse>(barcode, docs, REQUEST, {
      plan: (doc) => {
        const target = this.holdTarget(doc, REQUEST);
        if ('done' in target) return target;
        const pickup = this.pickupLocation(doc);
        if (pickup === null) return { done: unknownDocument(doc, REQUEST, 'unknown pickup location') };
        return {
          key: target.key,
          target: { ...target.target, ...(pickup === undefined ? {} : { pickupLocation: pickup }) },
        };
      },
      execute: (target) => this.send(this.messages.hold('+', barcode, target), options),
      itemOf: (target) => target.item,
      answer: (doc, target, response) => {
        const result = this.holdDocument(doc, target, response.ok ? 1 : 5);
        if (!response.ok) {
          result.error = screenMessage(response) ?? 'the library system refused the request';
          return result;
        }
        const queue = queueLength(response.queuePosition);
        if (queue !== undefined) result.queue = queue;
        Object.assign(result, storageOf(nonEmpty(response.pickupLocation), { uris: this.uris }));
        return result;
      },
    });
  }

  private cancelHolds(barcode: string, docs: DocumentRequest[], options: CallOptions): Promise<PaiaDocument[]> {
    return this.write<HoldTarget, HoldResponse>(barcode, docs, CANCEL, {
      plan: (doc) => this.holdTarget(doc, CANCEL),
      execute: (target) => this.send(this.messages.hold('-', barcode, target), options),
      itemOf: (target) => target.item,
      answer: (doc, target, response) => {
        // A refused cancel leaves the hold as it was; its exact status would cost another round trip, so 1.
        const result = this.holdDocument(doc, target, response.ok ? 0 : 1);
        if (!response.ok) result.error = screenMessage(response) ?? 'the library system refused the cancellation';
        return result;
      },
    });
  }

  // ------------------------------------------------------------ internals

  /**
   * Runs one write per distinct document, all in parallel, none retried. A
   * document whose message failed in the backend, or whose call was
   * cancelled (deadline, client gone), gets an error saying whether it may
   * have been executed: "not sent" when its bytes never left, "outcome
   * unknown" when they did and no answer came. When every document failed
   * without being sent, the first error is thrown instead so the HTTP layer
   * answers 502/503/504: nothing happened, and a plain error says so.
   */
  private async write<T, R>(
    barcode: string,
    docs: DocumentRequest[],
    kind: WriteKind,
    steps: {
      plan: (doc: DocumentRequest) => Plan<T>;
      execute: (target: T) => Promise<R>;
      /** The item a write changes, whose cached information it makes stale. */
      itemOf: (target: T) => string | undefined;
      answer: (doc: DocumentRequest, target: T, response: R) => PaiaDocument;
    },
  ): Promise<PaiaDocument[]> {
    const plans = docs.map((doc) => steps.plan(doc));
    const limit = limiter(this.maxParallel);
    const runs = new Map<string, Promise<Outcome<R>>>();
    for (const plan of plans) {
      if ('done' in plan || runs.has(plan.key)) continue;
      const item = steps.itemOf(plan.target);
      // Reads of the item or the patron in flight began before this write: no read from now on joins them
      // (SharedReads), neither while the write is under way nor once it has settled.
      const forgetReads = () => this.sharedReads.forget({ item, patron: barcode });
      runs.set(
        plan.key,
        limit(() => {
          forgetReads();
          return steps.execute(plan.target);
        })
          .then(
            (response) => {
              forgetReads();
              if (item !== undefined) this.itemCache?.invalidate(item);
              return response;
            },
            (error: unknown) => {
              forgetReads();
              // The item may have changed; with the outcome unknown it may still change.
              if (item !== undefined)
                this.itemCache?.invalidate(item, { outcomeUnknown: isFailure(error) && error.requestSent });
              throw error;
            },
          )
          .then(
            (response): Outcome<R> => ({ ok: true, response }),
            (error: unknown): Outcome<R> => ({ ok: false, error }),
          ),
      );
    }
    const outcomes = new Map<string, Outcome<R>>();
    await Promise.all([...runs].map(async ([key, run]) => outcomes.set(key, await run)));

    let firstBackendError: Sip2Failure | CallCancelled | undefined;
    let allBackendErrors = docs.length > 0;
    const results = docs.map((doc, i): PaiaDocument => {
      const plan = plans[i]!;
      if ('done' in plan) {
        allBackendErrors = false;
        return plan.done;
      }
      const outcome = outcomes.get(plan.key)!;
      if (outcome.ok) {
        allBackendErrors = false;
        return steps.answer(doc, plan.target, outcome.response);
      }
      const { error } = outcome;
      if (error instanceof Sip2EncodeError) {
        // The value cannot be put on the wire (a character SIP2 or the charset cannot carry): not an ILS identifier.
        allBackendErrors = false;
        return unknownDocument(doc, kind, doc.item === undefined ? 'unknown edition' : 'unknown item');
      }
      if (!isFailure(error)) throw error;
      firstBackendError ??= error;
      if (error.requestSent) {
        // The ILS may have acted: this must reach the client as a document, never as a retryable request error.
        allBackendErrors = false;
        this.logger?.warn({ document: plan.key, reason: error.message }, `SIP2 ${kind.noun} outcome unknown`);
        return {
          ...echo(doc),
          status: kind.unknownStatus,
          error: `${OUTCOME_UNKNOWN}the library system did not confirm the ${kind.noun}; check your items before trying again`,
        };
      }
      const why =
        error instanceof CallCancelled ? 'the call ran out of time first' : 'the library system is not available';
      return {
        ...echo(doc),
        status: kind.notSentStatus,
        error: `${kind.noun} not sent: ${why}; try again later`,
      };
    });
    // Nothing was confirmed and nothing may have happened: a plain 502/503/504 tells the client the truth.
    if (allBackendErrors && firstBackendError) throw firstBackendError;
    return results;
  }

  /** The 15 target of a document: the item barcode, else the edition's title id. */
  private holdTarget(doc: DocumentRequest, kind: WriteKind): Plan<HoldTarget> {
    if (doc.item !== undefined) {
      const item = this.uris.item.match(doc.item);
      return item === null
        ? { done: unknownDocument(doc, kind, 'unknown item') }
        : { key: `item:${item}`, target: { item } };
    }
    if (doc.edition !== undefined) {
      const title = this.uris.edition.match(doc.edition);
      return title === null
        ? { done: unknownDocument(doc, kind, 'unknown edition') }
        : { key: `title:${title}`, target: { title } };
    }
    return { done: unknownDocument(doc, kind, 'the document has neither an item nor an edition URI') };
  }

  /** BS: the storageid's location code, else the storage text; undefined when neither is given, null when unusable. */
  private pickupLocation(doc: DocumentRequest): string | undefined | null {
    const storage = nonEmpty(doc.storage);
    if (doc.storageid !== undefined) {
      const location = this.uris.storage?.match(doc.storageid) ?? null;
      if (location !== null) return location;
      return storage ?? null;
    }
    return storage;
  }

  private holdDocument(doc: DocumentRequest, target: HoldTarget, status: ServiceStatus): PaiaDocument {
    const result: PaiaDocument = { status };
    if (target.item !== undefined) result.item = this.uris.item.build(target.item);
    if (doc.edition !== undefined) result.edition = doc.edition;
    result.requested = requestedOf(doc);
    return result;
  }

  private list(
    barcode: string,
    list: SummaryList,
    send: Sip2Send,
    more: Pick<PagingOptions, 'first' | 'onEntries'> = {},
  ): Promise<PatronList> {
    return fetchPatronList(send, (start, end) => this.messages.patronInformation(barcode, { list, start, end }), list, {
      ...this.paging(),
      ...more,
    });
  }

  private paging(): PagingOptions {
    return { pageSize: this.pageSize, maxEntries: this.maxListEntries };
  }

  private today(): string {
    // One date per second, as the message builder does: every call checks the account's expiry against it.
    const now = this.now();
    const second = Math.floor(now.getTime() / 1000);
    if (this.todayOf?.second !== second) this.todayOf = { second, date: localDateOf(now) };
    return this.todayOf.date;
  }
}

/** How the error of a document whose write may or may not have been executed begins. */
const OUTCOME_UNKNOWN = 'outcome unknown: ';

/** Whether a write's document says the ILS may or may not have executed it (sent, never confirmed). */
export function isOutcomeUnknown(doc: PaiaDocument): boolean {
  return doc.error?.startsWith(OUTCOME_UNKNOWN) === true;
}

/** The limiter priority of list requests (63) over item lookups (17, priority 0). */
const LIST_PRIORITY = 1;

/** The five lists an items call reads (a list not read is empty). */
interface ItemLists {
  charged: PatronList;
  overdue: PatronList;
  recall: PatronList;
  hold: PatronList;
  unavailable: PatronList;
}

/**
 * Whether a 98's BX says the ILS supports a message (hold 15 for `cancancel`,
 * renew 29 for `canrenew`): true for Y, false for N, undefined without a 98
 * or when BX is too short to say.
 */
export function acsSupportsOf(
  status: Pick<AcsStatus, 'supportedMessages'> | null | undefined,
  message: SupportedMessage,
): boolean | undefined {
  const flag = status?.supportedMessages[SUPPORTED_MESSAGES.indexOf(message)];
  return flag === 'Y' ? true : flag === 'N' ? false : undefined;
}

/**
 * A patron the ILS knows: BL=Y. An ILS that sends no BL at all is taken at
 * its word when it names the patron.
 */
function isKnownPatron(response: PatronInformationResponse): boolean {
  return response.validPatron === true || (response.validPatron === undefined && response.personalName.trim() !== '');
}

/** A failure of the ILS, or a cancelled call: the errors a write turns into a document (not sent, or outcome unknown). */
function isFailure(error: unknown): error is Sip2Failure | CallCancelled {
  return isSip2Failure(error) || error instanceof CallCancelled;
}

/**
 * Looks up each entry of a list page as it arrives (paging's onEntries): every entry is looked up in the
 * end anyway, once per item whatever its lists (the call's lookup map), so its 17 need not wait for the
 * other lists.
 */
function lookEach(lookup: (entry: string) => Promise<unknown>): (entries: readonly string[]) => void {
  return (entries) => {
    for (const entry of entries) {
      const trimmed = entry.trim();
      if (trimmed !== '') void lookup(trimmed);
    }
  };
}

function distinct(entries: readonly string[]): string[] {
  return [...new Set(entries.map((entry) => entry.trim()).filter((entry) => entry !== ''))];
}

function screenMessage(response: { screenMessage?: string[] }): string | undefined {
  return nonEmpty(
    response.screenMessage
      ?.map((line) => line.trim())
      .filter(Boolean)
      .join(' '),
  );
}

function requestedOf(doc: DocumentRequest): string | undefined {
  return doc.item ?? doc.edition;
}

/** The document's URIs as the client sent them. */
function echo(doc: DocumentRequest): Pick<PaiaDocument, 'item' | 'edition' | 'requested'> {
  const result: Pick<PaiaDocument, 'item' | 'edition' | 'requested'> = {};
  if (doc.item !== undefined) result.item = doc.item;
  if (doc.edition !== undefined) result.edition = doc.edition;
  const requested = requestedOf(doc);
  if (requested !== undefined) result.requested = requested;
  return result;
}

function unknownDocument(doc: DocumentRequest, kind: WriteKind, error: string): PaiaDocument {
  return { status: kind.unknownDocumentStatus, ...echo(doc), error };
}
