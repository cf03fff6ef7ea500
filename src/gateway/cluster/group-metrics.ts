import { addedUp, lastingPart, type Reach, type Share } from '../../metrics/group.js';
import type { FromWorker, ToWorker } from './messages.js';

/**
 * One scrape of /metrics for all workers (`serve --workers N`). The worker
 * that takes the scrape asks the primary ("scrape"); the primary asks every
 * worker that answers its heartbeat for its share ("share-metrics"), the
 * asking one too, waits at most metrics.workerTimeoutMs, and sends the
 * shares it got back ("group-metrics"); the asking worker merges them
 * (metrics/group.ts) and answers. A worker that does not answer in time is
 * left out, and the answer says how many did (paia_workers_scraped); its
 * counters and histograms are those of its last answer, so that the group's
 * sums do not fall while it is slow. A worker that exits leaves those behind
 * too, kept apart (`retired`) and added to every later answer: its
 * replacement counts from zero, and the sums must not fall then either
 * (Prometheus would take the fall for a counter reset and count the whole
 * rest as new, which trips increase() alerts).
 */

/** A worker as the gathering sees it. */
export interface Member {
  /** The worker's number (1..N); its replacements keep it. */
  readonly number: number;
  /** Whether it is worth asking at `now`: running, and its heartbeat answers are not late (a stopped one is not waited for). */
  askable(now: number): boolean;
  send(message: ToWorker): void;
}

interface Gather {
  /** The worker whose scrape this is, and its scrape's number. */
  readonly from: number;
  readonly scrape: number;
  /** The workers asked that have not answered yet. */
  readonly waiting: Set<number>;
  readonly shares: Map<number, Share>;
  readonly timer: NodeJS.Timeout;
}

/** The primary's side: gathers the shares of every worker for each scrape. */
export class MetricsGathering {
  readonly #gathers = new Map<number, Gather>();
  /** Per worker number: the counters and histograms of its last share, which stand in for it while it is silent. */
  readonly #last = new Map<number, Share>();
  /** The counters and histograms of the workers that have exited, added up: a share in every answer while the primary lives. */
  #retired: Share = [];
  #ids = 0;

  constructor(
    private readonly options: {
      /** The workers, in their fixed order. */
      members: () => readonly Member[];
      /** How long a scrape waits for a worker's share (metrics.workerTimeoutMs). */
      timeoutMs: number;
    },
  ) {}

  /** Worker `from` took scrape number `scrape`: asks every worker for its share. */
  begin(from: number, scrape: number): void {
    const now = Date.now();
    const asked = this.options.members().filter((member) => member.askable(now));
    this.#ids += 1;
    const id = this.#ids;
    const gather: Gather = {
      from,
      scrape,
      waiting: new Set(asked.map((member) => member.number)),
      shares: new Map(),
      timer: setTimeout(() => this.#finish(id), this.options.timeoutMs),
    };
    this.#gathers.set(id, gather);
    for (const member of asked) member.send({ type: 'paia-sip2:share-metrics', gather: id });
    if (gather.waiting.size === 0) this.#finish(id);
  }

  /** Worker `from`'s share for gather `gather` (null: its collection failed). */
  shared(from: number, gather: number, share: Share | null): void {
    const found = this.#gathers.get(gather);
    if (!found?.waiting.delete(from)) return;
    if (share !== null) {
      found.shares.set(from, share);
      this.#last.set(from, lastingPart(share));
    }
    if (found.waiting.size === 0) this.#finish(gather);
  }

  /**
   * Worker `number` exited: its last counters and histograms join the
   * retired share, no scrape waits for it, and its own scrapes are dropped
   * (the answer would reach its replacement, whose scrape numbers start
   * again at 1 and could match one of its own).
   */
  gone(number: number): void {
    const last = this.#last.get(number);
    if (last !== undefined) this.#retired = addedUp(this.#retired, last);
    this.#last.delete(number);
    for (const [id, gather] of this.#gathers) {
      if (gather.from === number) {
        clearTimeout(gather.timer);
        this.#gathers.delete(id);
        continue;
      }
      // Its answer to a gather still open is in the retired share now; kept here too, it would count twice.
      gather.shares.delete(number);
      if (gather.waiting.delete(number) && gather.waiting.size === 0) this.#finish(id);
    }
  }

  /** Ends every gather unanswered (the primary stops). */
  close(): void {
    for (const gather of this.#gathers.values()) clearTimeout(gather.timer);
    this.#gathers.clear();
  }

  #finish(id: number): void {
    const gather = this.#gathers.get(id);
    if (gather === undefined) return;
    this.#gathers.delete(id);
    clearTimeout(gather.timer);
    const members = this.options.members();
    const shares = members.flatMap(({ number }) => {
      const share = gather.shares.get(number) ?? this.#last.get(number);
      return share === undefined ? [] : [share];
    });
    if (this.#retired.length > 0) shares.push(this.#retired);
    members
      .find((member) => member.number === gather.from)
      ?.send({
        type: 'paia-sip2:group-metrics',
        scrape: gather.scrape,
        shares,
        expected: members.length,
        scraped: gather.shares.size,
      });
  }
}

/**
 * How long past metrics.workerTimeoutMs a worker waits for the primary's
 * answer to its scrape before the scrape fails (503): the primary answers
 * within the timeout, plus the time to carry the shares over.
 */
const ANSWER_MARGIN_MS = 1000;

type GroupAnswer = Extract<ToWorker, { type: 'paia-sip2:group-metrics' }>;

/** A worker's side: its scrapes, each answered by the primary with every worker's share. */
export class GroupScrapes {
  readonly #pending = new Map<number, { settle: (answer: GroupAnswer | null) => void }>();
  #ids = 0;

  constructor(
    private readonly options: {
      send: (message: FromWorker) => void;
      /** metrics.workerTimeoutMs. */
      timeoutMs: number;
    },
  ) {}

  /** Every worker's share and how many answered; rejects when the primary does not answer in time. */
  async gather(): Promise<{ shares: Share[]; reach: Reach }> {
    this.#ids += 1;
    const scrape = this.#ids;
    let timer: NodeJS.Timeout | undefined;
    const answer = await new Promise<GroupAnswer | null>((settle) => {
      this.#pending.set(scrape, { settle });
      timer = setTimeout(() => settle(null), this.options.timeoutMs + ANSWER_MARGIN_MS);
      this.options.send({ type: 'paia-sip2:scrape', scrape });
    }).finally(() => {
      clearTimeout(timer);
      this.#pending.delete(scrape);
    });
    if (answer === null) {
      throw new Error(
        `the primary process did not answer within ${this.options.timeoutMs + ANSWER_MARGIN_MS} ms with the workers' metrics`,
      );
    }
    return { shares: answer.shares, reach: { expected: answer.expected, scraped: answer.scraped } };
  }

  /** The primary's answer to one of this worker's scrapes. */
  answered(answer: GroupAnswer): void {
    this.#pending.get(answer.scrape)?.settle(answer);
  }
}
