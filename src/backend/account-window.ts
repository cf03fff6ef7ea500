import { FreshAnswers } from './fresh-answers.js';
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
import { isOutcomeUnknown } from './writes.js';

/** The account window's defaults (cache.accounts): a few seconds, one entry per patron read. */
export const ACCOUNT_WINDOW_DEFAULTS = Object.freeze({ windowMs: 5_000, maxPatrons: 10_000 });

export interface AccountWindowOptions {
  /** The backend that reads and writes at the ILS. */
  backend: Backend;
  /** How long a read is shared, from when it was sent to the ILS. */
  windowMs: number;
  /** Most patrons whose reads of one kind (core, items, fees) are kept; the least recently read go first. */
  maxPatrons: number;
  /**
   * A patron's key in the window and on the state store's invalidation
   * channel: a keyed digest of the barcode, so the barcode never leaves
   * the process and the same patron has the same key on every instance.
   */
  keyOf: (barcode: string) => string;
  /**
   * Told of each patron a write on this instance dropped, so other instances
   * drop it too; the write answers once this has settled (it must not reject,
   * and must end within its own time bound: the state store's).
   */
  onWrite?: ((key: string, outcomeUnknown: boolean) => Promise<void>) | undefined;
  /** Monotonic milliseconds (tests); default performance.now(). */
  now?: (() => number) | undefined;
}

export interface AccountWindowStats {
  /** Reads answered from the window. */
  hits: number;
  /** Reads that went on to the ILS. */
  misses: number;
  /** Reads kept (core, items and fees count one each). */
  entries: number;
}

/** What the window keeps of a patron: the three reads a discovery system repeats. */
type ReadKind = 'patron' | 'items' | 'fees';

/**
 * A patron's account reads shared for a few seconds (cache.accounts): a
 * discovery system reads the same account three or four times per page view
 * (VuFind's PAIA driver: core on every page, items once per account tab), and
 * each read of a patron with many loans costs the ILS a message per item.
 *
 * The window sits in front of the backend and keeps each read (core, items,
 * fees) of a patron by the patron's key, whatever token asked: the same
 * patron's calls share it, two patrons never do. A renew, request or cancel
 * of the patron drops all of them once its outcome is known, here and (through
 * onWrite and the state store's channel) on every other instance; a write whose
 * outcome is unknown keeps the patron's reads out of the window for one window
 * (the ILS may still apply it). A write's own answer never comes from here.
 * Changes made elsewhere (the circulation desk) show once the window has
 * passed. Answers are shared, never copied: callers must not change them.
 */
export class AccountWindow implements Backend {
  private readonly backend: Backend;
  private readonly keyOf: (barcode: string) => string;
  private readonly onWrite: ((key: string, outcomeUnknown: boolean) => Promise<void>) | undefined;
  private readonly reads: { readonly [K in ReadKind]: FreshAnswers<AccountReads[K]> };
  private hits = 0;
  private misses = 0;

  constructor(options: AccountWindowOptions) {
    const answers = { ttlMs: options.windowMs, maxEntries: options.maxPatrons, now: options.now };
    this.backend = options.backend;
    this.keyOf = options.keyOf;
    this.onWrite = options.onWrite;
    this.reads = {
      patron: new FreshAnswers(answers),
      items: new FreshAnswers(answers),
      fees: new FreshAnswers(answers),
    };
  }

  // ------------------------------------------------------------ reads, shared within the window

  patron(barcode: string, options?: CallOptions): Promise<PatronRecord | null> {
    return this.read('patron', barcode, options, () => this.backend.patron(barcode, options));
  }

  items(barcode: string, options?: CallOptions): Promise<PaiaDocument[]> {
    return this.read('items', barcode, options, () => this.backend.items(barcode, options));
  }

  fees(barcode: string, options?: CallOptions): Promise<FeeRecord> {
    return this.read('fees', barcode, options, () => this.backend.fees(barcode, options));
  }

  // ------------------------------------------------------------ writes, which drop the patron's reads

  renew(barcode: string, docs: DocumentRequest[], options?: CallOptions): Promise<PaiaDocument[]> {
    return this.write(barcode, () => this.backend.renew(barcode, docs, options));
  }

  request(barcode: string, docs: DocumentRequest[], options?: CallOptions): Promise<PaiaDocument[]> {
    return this.write(barcode, () => this.backend.request(barcode, docs, options));
  }

  cancel(barcode: string, docs: DocumentRequest[], options?: CallOptions): Promise<PaiaDocument[]> {
    return this.write(barcode, () => this.backend.cancel(barcode, docs, options));
  }

  // ------------------------------------------------------------ neither: a credential check is never shared

  login(username: string, password: string, options?: CallOptions): Promise<CredentialCheck> {
    return this.backend.login(username, password, options);
  }

  lookupPatron(identifier: string, options?: CallOptions): Promise<PatronLookup | null> {
    return this.backend.lookupPatron(identifier, options);
  }

  logout(barcode: string, options?: CallOptions): Promise<void> {
    return this.backend.logout(barcode, options);
  }

  /**
   * Drops the reads of the patron with key `key`: the next read asks the ILS,
   * and a read on its way is not kept. The gateway calls this for a write
   * another instance reported on the state store's channel.
   */
  forget(key: string, options: { outcomeUnknown?: boolean } = {}): void {
    const outcomeUnknown = options.outcomeUnknown ?? false;
    for (const answers of Object.values(this.reads)) answers.invalidate(key, outcomeUnknown);
  }

  stats(): AccountWindowStats {
    const { patron, items, fees } = this.reads;
    return { hits: this.hits, misses: this.misses, entries: patron.size + items.size + fees.size };
  }

  private read<K extends ReadKind>(
    kind: K,
    barcode: string,
    options: CallOptions | undefined,
    read: () => Promise<AccountReads[K]>,
  ): Promise<AccountReads[K]> {
    const key = this.keyOf(barcode);
    const answers: FreshAnswers<AccountReads[K]> = this.reads[kind];
    const kept = answers.cached(key);
    if (kept !== undefined) {
      this.hits += 1;
      return Promise.resolve(kept);
    }
    // A caller that has already given up asks nothing (the backend rejects it at once): neither a hit nor a miss.
    if (options?.signal?.aborted !== true) this.misses += 1;
    return answers.read(key, read);
  }

  /**
   * Runs a write and then drops the patron's reads: a read sent before the
   * write settled may show the account before it, so none of those is kept.
   * Once the outcome is known: a document whose outcome is unknown keeps the
   * reads out for one window. A write that failed as a whole sent nothing
   * (the backend throws only then) but the patron's reads are dropped anyway.
   * The answer waits until the other instances have been told, so that a
   * client reading its account anywhere right after sees the write.
   */
  private async write(barcode: string, write: () => Promise<PaiaDocument[]>): Promise<PaiaDocument[]> {
    const key = this.keyOf(barcode);
    let docs: PaiaDocument[];
    try {
      docs = await write();
    } catch (error) {
      await this.dropEverywhere(key, false);
      throw error;
    }
    await this.dropEverywhere(key, docs.some(isOutcomeUnknown));
    return docs;
  }

  private async dropEverywhere(key: string, outcomeUnknown: boolean): Promise<void> {
    this.forget(key, { outcomeUnknown });
    await this.onWrite?.(key, outcomeUnknown);
  }
}

/** What each kind of read answers. */
interface AccountReads {
  patron: PatronRecord | null;
  items: PaiaDocument[];
  fees: FeeRecord;
}
