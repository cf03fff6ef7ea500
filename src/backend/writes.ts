import type { Logger } from 'pino';
import { CallCancelled, isSip2Failure, Sip2EncodeError, type Sip2Failure } from '../sip2/index.js';
import type { ItemInfoCache } from './item-cache.js';
import { type Limiter, limiter } from './parallel.js';
import type { SharedReads } from './shared-reads.js';
import type { DocumentRequest, PaiaDocument, ServiceStatus } from './types.js';

/**
 * The write engine of renew, request and cancel: each document planned (what
 * to send, or its answer without sending), one write per distinct target
 * sent, none retried, and each document answered from its write's outcome.
 * What each method sends and answers is in write-plans.ts.
 */

/** What one document of renew, request or cancel resolves to before it goes to the ILS: a target (`key` says which documents share one write), or its answer. */
export type Plan<T> = { key: string; target: T } | { done: PaiaDocument };

/** How each write method words and numbers its per-document answers. */
export interface WriteKind {
  /** For messages: "renewal", "request", "cancellation". */
  noun: string;
  /** Status of a document whose message may or may not have been executed. */
  unknownStatus: ServiceStatus;
  /** Status of a document whose message certainly was not executed. */
  notSentStatus: ServiceStatus;
  /** Status of a document the gateway cannot map to the ILS. */
  unknownDocumentStatus: ServiceStatus;
}

/** One write method: its kind, and its steps from a document to its answer. */
export interface WriteSteps<T, R> {
  kind: WriteKind;
  plan: (doc: DocumentRequest) => Plan<T>;
  /** Sends the target's message (29, 15) once. */
  execute: (target: T) => Promise<R>;
  /** The item a write changes, whose cached information it makes stale. */
  itemOf: (target: T) => string | undefined;
  /** The document of a write the ILS answered (it may have refused). */
  answer: (doc: DocumentRequest, target: T, response: R) => PaiaDocument;
}

/** What the writes of one call share: its patron, its bound, and what a write makes stale. */
export interface WriteRun {
  patron: string;
  /** At most this many writes of the call in the pool at once. */
  maxParallel: number;
  sharedReads: SharedReads;
  itemCache: ItemInfoCache | null;
  logger?: Logger | undefined;
}

type Outcome<R> = { ok: true; response: R } | { ok: false; error: unknown };

/** One document's answer, and the failure behind it when its write certainly did not happen. */
interface Answered {
  document: PaiaDocument;
  notSent?: Sip2Failure | CallCancelled;
}

/** How the error of a document whose write may or may not have been executed begins. */
const OUTCOME_UNKNOWN = 'outcome unknown: ';

/** Whether a write's document says the ILS may or may not have executed it (sent, never confirmed). */
export function isOutcomeUnknown(doc: PaiaDocument): boolean {
  return doc.error?.startsWith(OUTCOME_UNKNOWN) === true;
}

/**
 * Runs one write per distinct document, all in parallel, none retried. A
 * document whose message failed in the backend, or whose call was
 * cancelled (deadline, client gone), gets an error saying whether it may
 * have been executed: "not sent" when its bytes never left, "outcome
 * unknown" when they did and no answer came. When every document failed
 * without being sent, the first error is thrown instead so the HTTP layer
 * answers 502/503/504: nothing happened, and a plain error says so.
 */
export async function runWrites<T, R>(
  docs: readonly DocumentRequest[],
  steps: WriteSteps<T, R>,
  run: WriteRun,
): Promise<PaiaDocument[]> {
  const plans = docs.map((doc) => steps.plan(doc));
  const outcomes = await sendEach(plans, steps, run);
  const answered = docs.map((doc, i) => answerOne(doc, plans[i]!, outcomes, steps, run.logger));
  // Nothing was confirmed and nothing may have happened: a plain 502/503/504 tells the client the truth.
  const first = answered[0]?.notSent;
  if (first !== undefined && answered.every((answer) => answer.notSent !== undefined)) throw first;
  return answered.map((answer) => answer.document);
}

/** Sends the write of each distinct key once, at most maxParallel at once; every outcome, none rejected. */
async function sendEach<T, R>(
  plans: readonly Plan<T>[],
  steps: WriteSteps<T, R>,
  run: WriteRun,
): Promise<Map<string, Outcome<R>>> {
  const limit = limiter(run.maxParallel);
  const runs = new Map<string, Promise<Outcome<R>>>();
  for (const plan of plans) {
    if ('done' in plan || runs.has(plan.key)) continue;
    runs.set(plan.key, sendOne(plan.target, steps, run, limit));
  }
  const outcomes = new Map<string, Outcome<R>>();
  await Promise.all([...runs].map(async ([key, sending]) => outcomes.set(key, await sending)));
  return outcomes;
}

/** One write, and what it makes stale: shared reads of its item and patron, the item's cached information. */
function sendOne<T, R>(target: T, steps: WriteSteps<T, R>, run: WriteRun, limit: Limiter): Promise<Outcome<R>> {
  const item = steps.itemOf(target);
  // Reads of the item or the patron in flight began before this write: no read from now on joins them
  // (SharedReads), neither while the write is under way nor once it has settled.
  const forgetReads = () => run.sharedReads.forget({ item, patron: run.patron });
  return limit(() => {
    forgetReads();
    return steps.execute(target);
  })
    .then(
      (response) => {
        forgetReads();
        if (item !== undefined) run.itemCache?.invalidate(item);
        return response;
      },
      (error: unknown) => {
        forgetReads();
        // The item may have changed; with the outcome unknown it may still change.
        if (item !== undefined)
          run.itemCache?.invalidate(item, { outcomeUnknown: isFailure(error) && error.requestSent });
        throw error;
      },
    )
    .then(
      (response): Outcome<R> => ({ ok: true, response }),
      (error: unknown): Outcome<R> => ({ ok: false, error }),
    );
}

/** One document's answer: its plan's, its write's, or what its write's failure says about it. */
function answerOne<T, R>(
  doc: DocumentRequest,
  plan: Plan<T>,
  outcomes: ReadonlyMap<string, Outcome<R>>,
  steps: WriteSteps<T, R>,
  logger: Logger | undefined,
): Answered {
  if ('done' in plan) return { document: plan.done };
  const outcome = outcomes.get(plan.key)!;
  if (outcome.ok) return { document: steps.answer(doc, plan.target, outcome.response) };
  return failedDocument(doc, plan.key, outcome.error, steps.kind, logger);
}

/**
 * The document of a write that failed: unknown when its value cannot be sent at all, "outcome unknown" when
 * its bytes left, "not sent" otherwise. Anything but the ILS failing or the call being cancelled is a bug,
 * thrown as it is.
 */
function failedDocument(
  doc: DocumentRequest,
  key: string,
  error: unknown,
  kind: WriteKind,
  logger: Logger | undefined,
): Answered {
  if (error instanceof Sip2EncodeError) {
    // The value cannot be put on the wire (a character SIP2 or the charset cannot carry): not an ILS identifier.
    return { document: unknownDocument(doc, kind, doc.item === undefined ? 'unknown edition' : 'unknown item') };
  }
  if (!isFailure(error)) throw error;
  if (error.requestSent) {
    // The ILS may have acted: this must reach the client as a document, never as a retryable request error.
    logger?.warn({ document: key, reason: error.message }, `SIP2 ${kind.noun} outcome unknown`);
    return {
      document: {
        ...echo(doc),
        status: kind.unknownStatus,
        error: `${OUTCOME_UNKNOWN}the library system did not confirm the ${kind.noun}; check your items before trying again`,
      },
    };
  }
  const why = error instanceof CallCancelled ? 'the call ran out of time first' : 'the library system is not available';
  return {
    document: { ...echo(doc), status: kind.notSentStatus, error: `${kind.noun} not sent: ${why}; try again later` },
    notSent: error,
  };
}

/** A failure of the ILS, or a cancelled call: the errors a write turns into a document (not sent, or outcome unknown). */
function isFailure(error: unknown): error is Sip2Failure | CallCancelled {
  return isSip2Failure(error) || error instanceof CallCancelled;
}

/** The URI the client asked about: the item's, else the edition's. */
export function requestedOf(doc: DocumentRequest): string | undefined {
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

/** The answer to a document the gateway cannot map to the ILS (or cannot send). */
export function unknownDocument(doc: DocumentRequest, kind: WriteKind, error: string): PaiaDocument {
  return { status: kind.unknownDocumentStatus, ...echo(doc), error };
}
