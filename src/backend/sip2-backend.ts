import type { Logger } from 'pino';
import {
  type AcsStatus,
  DEFAULT_MAX_LIST_ENTRIES,
  type Dialect,
  isIsoDate,
  type PatronInformationResponse,
  type RequestMessage,
  type ResponseOf,
  Sip2EncodeError,
  type Sip2Messages,
  SUPPORTED_MESSAGES,
  type SupportedMessage,
} from '../sip2/index.js';
import { accountState, isKnownPatron, localDateOf, patronRecord } from './account-state.js';
import { type DocumentContext, itemDocument, itemEntries, nonEmpty, renewalOffered } from './documents.js';
import { inBackendTerms } from './errors.js';
import { feeRecord } from './fees.js';
import { type ItemInfoCache, itemLookup } from './item-cache.js';
import { ListReads } from './list-reads.js';
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
} from './types.js';
import { compileUriTemplates, type UriTemplates, type UriTemplatesConfig } from './uris.js';
import { cancelSteps, type PlanContext, renewSteps, requestSteps } from './write-plans.js';
import { runWrites, type WriteRun } from './writes.js';

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

/**
 * PAIA over SIP2 (design.md, "PAIA over SIP2"). Reads fan out in parallel
 * through the pool; writes (29, 15) are sent once per distinct document and
 * never retried: an unknown outcome is reported on the document.
 */
export class Sip2Backend implements Backend {
  private readonly send: Sip2Send;
  private readonly messages: Sip2Messages;
  private readonly dialect: Dialect;
  private readonly currency: string;
  private readonly uris: UriTemplates;
  private readonly logger: Logger | undefined;
  private readonly now: () => Date;
  private readonly acsStatus: () => Pick<AcsStatus, 'supportedMessages'> | null | undefined;
  private readonly expiresWhenUnknown: string | null;
  private readonly lists: ListReads;
  private readonly plans: PlanContext;
  /** What every write shares but its patron. */
  private readonly writing: Omit<WriteRun, 'patron'>;
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
    this.send = (message, callOptions) => sharedReads.send(message, callOptions ?? {}, options.send);
    this.messages = options.messages;
    this.dialect = options.dialect;
    this.currency = currency;
    this.uris = compileUriTemplates(options.uris);
    this.logger = options.logger;
    this.now = options.now ?? (() => new Date());
    this.acsStatus = options.acsStatus ?? (() => null);
    this.expiresWhenUnknown = expiresWhenUnknown;
    const maxParallel = options.maxParallel ?? DEFAULT_MAX_PARALLEL;
    const itemCache = options.itemCache ?? null;
    limiter(maxParallel); // validates the bound now rather than on the first call
    this.lists = new ListReads({
      send: this.send,
      itemInformation: itemLookup(this.send, this.messages, itemCache),
      messages: this.messages,
      dialect: this.dialect,
      pageSize: options.pageSize,
      maxListEntries: options.maxListEntries ?? DEFAULT_MAX_LIST_ENTRIES,
      maxParallel,
      logger: this.logger,
    });
    this.plans = { uris: this.uris, dialect: this.dialect };
    this.writing = { maxParallel, sharedReads, itemCache, logger: this.logger };
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

  // Writes: writes.ts runs them, write-plans.ts says what each sends and answers.

  renew(barcode: string, docs: DocumentRequest[], options: CallOptions = {}): Promise<PaiaDocument[]> {
    const steps = renewSteps(this.plans, (item) => this.send(this.messages.renew(barcode, item), options));
    return inBackendTerms(() => runWrites(docs, steps, { ...this.writing, patron: barcode }));
  }

  request(barcode: string, docs: DocumentRequest[], options: CallOptions = {}): Promise<PaiaDocument[]> {
    const steps = requestSteps(this.plans, (target) => this.send(this.messages.hold('+', barcode, target), options));
    return inBackendTerms(() => runWrites(docs, steps, { ...this.writing, patron: barcode }));
  }

  cancel(barcode: string, docs: DocumentRequest[], options: CallOptions = {}): Promise<PaiaDocument[]> {
    const steps = cancelSteps(this.plans, (target) => this.send(this.messages.hold('-', barcode, target), options));
    return inBackendTerms(() => runWrites(docs, steps, { ...this.writing, patron: barcode }));
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
    return patronRecord(response, {
      dialect: this.dialect,
      today: this.today(),
      expiresWhenUnknown: this.expiresWhenUnknown,
      patronType: this.uris.patronType,
    });
  }

  private async readItems(barcode: string, options: CallOptions): Promise<PaiaDocument[]> {
    const read = await this.lists.items(barcode, options);
    if (read === null) return [];
    const entries = itemEntries(read.lists, this.dialect.holdLists);
    const infos = await Promise.all(entries.map(([entry]) => read.lookup(entry)));
    const ctx: DocumentContext = {
      dialect: this.dialect,
      uris: this.uris,
      canCancel: acsSupportsOf(this.acsStatus(), 'hold'),
      canRenew: renewalOffered(
        read.lists.charged.first.patronStatus.renewalPrivilegesDenied,
        acsSupportsOf(this.acsStatus(), 'renew'),
      ),
    };
    return entries.map(([entry, kind], i) => itemDocument(entry, kind, infos[i]!, ctx));
  }

  private async readFees(barcode: string, options: CallOptions): Promise<FeeRecord> {
    const fines = await this.lists.fines(barcode, options);
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

  // ------------------------------------------------------------ internals

  private today(): string {
    // One date per second, as the message builder does: every call checks the account's expiry against it.
    const now = this.now();
    const second = Math.floor(now.getTime() / 1000);
    if (this.todayOf?.second !== second) this.todayOf = { second, date: localDateOf(now) };
    return this.todayOf.date;
  }
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
