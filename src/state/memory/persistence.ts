import { readFileSync, renameSync, rmSync } from 'node:fs';
import { open, rename, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../log.js';
import { StoreUnavailable } from '../errors.js';
import { KeyedHash } from '../keyed-hash.js';
import { patronIndexName } from '../sessions.js';
import { decodeSessionFile, sessionFileHeader, sessionFileLine } from './session-file.js';
import type { SessionSink, StoredSession } from './sessions.js';
import { claimStateDir, reasonOf, type StateDir, type StateDirRefusal } from './state-dir.js';

/**
 * The memory store's sessions kept across restarts: a state file in a
 * directory of its own (state.dir), so that a single instance needs no
 * Redis for its patrons to stay logged in when it restarts (VuFind keeps a
 * token for its whole lifetime and never logs in again before that).
 *
 * - What is written: session-file.ts (tokens only as SHA-256, each session
 *   sealed with its token, the patron index keyed: paia.patronIdSecret, or
 *   a random key kept in the directory, state-dir.ts).
 * - When: at most WRITE_INTERVAL_MS after a change (a login, an end; a
 *   crash loses at most that), at most USE_WRITE_LAG_MS after a use when
 *   nothing else changed (one write for all the uses of that time), on close
 *   (a graceful stop loses nothing), and before a logout is answered (a
 *   logged-out token never comes back: ended()).
 * - How: the whole file to a temporary file, fsync, rename over the old one,
 *   fsync of the directory: a reader finds the old file or the new one,
 *   never half of one. Its size follows the store's bound (auth.maxSessions).
 * - One writer, and the directory this user's alone (state-dir.ts): the
 *   lock is refreshed on every write-interval tick and checked before each
 *   rename; a gateway whose lock was taken over stops writing and says so.
 * - A file that cannot be used (damaged, unreadable, another version,
 *   another key) never stops the gateway: it starts with no sessions, says
 *   so in one warning line, and the file is moved aside to `sessions.jsonl.bad`
 *   (the one before that is replaced) for a person to look at.
 */

const FILE = 'sessions.jsonl';
/**
 * Longest a change waits to be written; also what a crash may lose. Its
 * figure (2 s) is repeated in prose: docs/operations.md ("Sessions across restarts"), the
 * state.dir comment in src/config/schema/state.ts and the CHANGELOG; a unit test
 * (persistence.test.ts) holds them to this constant.
 */
export const WRITE_INTERVAL_MS = 2000;
/**
 * Bound on waiting for a write, and then on removing the file instead: a
 * logout that cannot be made durable in this time gets 503 (the logout route
 * is not cut by the call deadline: this is its bound), a stop goes on without
 * it. Its figure (5 s) is in docs/operations.md too, held to this by the same test.
 */
export const WRITE_TIMEOUT_MS = 5000;
/**
 * A lock not refreshed for this many write intervals is stale: its holder
 * stopped (state-dir.ts). Three: one late tick of a busy gateway is no reason
 * to take its directory. docs/operations.md gives the product (6 s), held to it by the
 * same test.
 */
export const LOCK_STALE_INTERVALS = 3;
/**
 * Uses alone (a session's last use, nothing else changed) are written at most
 * this often, whatever the number of sessions in use: the order of the least
 * recently used after a restart is that precise, and a gateway that only
 * serves calls rewrites the file at most once a minute (at 100,000 sessions
 * it is 34 MB, fsynced).
 */
export const USE_WRITE_LAG_MS = 60_000;
/** Sessions encoded and written at a time: a few milliseconds of the event loop each. */
const WRITE_SLICE = 2000;

export interface SessionPersistenceOptions {
  /** The directory (state.dir), made (mode 0700) if missing. */
  dir: string;
  /** paia.patronIdSecret; null: a random key kept in the directory. */
  keySecret: string | null;
  logger?: Logger | undefined;
  /** For tests. */
  writeIntervalMs?: number;
  writeTimeoutMs?: number;
  now?: () => number;
}

/** What the persistence reads and writes: the store's sessions (LruSessionStore). */
export interface PersistedSessions {
  stored(): Iterable<[string, StoredSession]>;
  restore(sessions: Iterable<[string, StoredSession]>): number;
}

/** Flushes a directory's entries (a rename, an unlink) to disk; where a platform cannot, the rename stands anyway. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => null);
  if (handle === null) return;
  try {
    await handle.sync();
  } catch {
    // Some file systems refuse fsync on a directory; the data itself was synced.
  } finally {
    await handle.close();
  }
}

/** A promise that rejects after `ms` unless `work` settles first; the timer never keeps the process alive. */
function bounded<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

export class SessionPersistence implements SessionSink {
  readonly #dir: string;
  readonly #claim: StateDir;
  readonly #file: string;
  readonly #keys: KeyedHash;
  readonly #keyCheck: string;
  readonly #logger: Logger | undefined;
  readonly #now: () => number;
  readonly #intervalMs: number;
  readonly #timeoutMs: number;
  #sessions: PersistedSessions | null = null;
  #timer: NodeJS.Timeout | undefined;
  /** Changed since the last write began (a login, an end): written at the next tick. */
  #dirty = false;
  /** A session was used since the last write began: written once that began USE_WRITE_LAG_MS ago. */
  #usedPending = false;
  /** When the last write took its snapshot (the injected clock). */
  #lastWriteAt: number;
  /** The write under way, if any. */
  #writing: Promise<void> | null = null;
  /** The write queued behind it (one is enough: it takes everything changed until it starts). */
  #next: Promise<void> | null = null;
  /** The rename of a write under way, once it has been called: a removal waits for it (it would bring the file back). */
  #renaming: Promise<void> | null = null;
  /** Counts the snapshots written; a write renames its file only if no removal came after its snapshot. */
  #snapshots = 0;
  /** The last snapshot taken before the file was removed in place of a write (ended()): older writes must not land. */
  #removedAfter = 0;
  /** Writes are failing: logged once per run of failures. */
  #failing = false;
  /** Why this gateway no longer writes the directory (its lock was taken over); null while it does. */
  #lost: string | null = null;
  #closed = false;

  private constructor(options: SessionPersistenceOptions, claim: StateDir) {
    this.#dir = options.dir;
    this.#claim = claim;
    this.#file = join(options.dir, FILE);
    this.#keys = new KeyedHash(claim.secret);
    this.#keyCheck = this.#keys.digest('paia-sip2 state file key check').toString('base64url');
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
    this.#intervalMs = options.writeIntervalMs ?? WRITE_INTERVAL_MS;
    this.#timeoutMs = options.writeTimeoutMs ?? WRITE_TIMEOUT_MS;
    this.#lastWriteAt = this.#now();
  }

  /**
   * Takes the directory (state-dir.ts); when it cannot be used, says why in
   * one warning line and returns that (the memory store shows it in /readyz):
   * the gateway then keeps its sessions in memory only.
   */
  static open(options: SessionPersistenceOptions): SessionPersistence | StateDirRefusal {
    const intervalMs = options.writeIntervalMs ?? WRITE_INTERVAL_MS;
    const claim = claimStateDir(options.dir, options.keySecret, { staleAfterMs: LOCK_STALE_INTERVALS * intervalMs });
    if ('refused' in claim) {
      options.logger?.warn({ dir: options.dir }, claim.refused);
      return claim;
    }
    return new SessionPersistence(options, claim);
  }

  patronKey(patron: string): string {
    return patronIndexName(this.#keys, patron);
  }

  /** Reads the state file into `sessions`, then writes their changes from now on. */
  attach(sessions: PersistedSessions): void {
    this.#sessions = sessions;
    this.#load(sessions);
    this.#timer = setInterval(() => this.#tick(), this.#intervalMs);
    this.#timer.unref();
  }

  /** Every write interval: the lock refreshed (it tells other gateways this one lives), then a write if one is due. */
  #tick(): void {
    if (!this.#holdsDir(() => this.#claim.refresh())) return;
    if (this.#next !== null) return;
    const usesDue = this.#usedPending && this.#now() - this.#lastWriteAt >= USE_WRITE_LAG_MS;
    if (this.#dirty || usesDue) this.#flush().catch(() => {});
  }

  /** Whether the directory is still this gateway's (`held`: asks the lock); once not, writes stop for good, said once. */
  #holdsDir(held: () => boolean): boolean {
    if (this.#lost !== null) return false;
    if (held()) return true;
    this.#lost = `the lock of state.dir ${this.#dir} was taken over by another gateway: this gateway no longer writes its sessions there, they are kept in memory only (a restart logs its patrons out). Give each gateway its own state.dir`;
    this.#logger?.warn({ dir: this.#dir }, this.#lost);
    return false;
  }

  #load(sessions: PersistedSessions): void {
    let text: string;
    try {
      text = readFileSync(this.#file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      this.#setAside(`it cannot be read (${reasonOf(error)})`);
      return;
    }
    const decoded = decodeSessionFile(text, { keyCheck: this.#keyCheck, now: this.#now() });
    if (!decoded.ok) {
      this.#setAside(decoded.problem);
      return;
    }
    const kept = sessions.restore(decoded.sessions);
    // Sessions dropped at load (expired, beyond a lowered bound) leave the file at the next write.
    if (decoded.expired > 0 || kept < decoded.sessions.length) this.#dirty = true;
    this.#logger?.info(
      { file: this.#file, sessions: kept, expired: decoded.expired },
      'sessions restored from the state file',
    );
  }

  /** The file cannot be used: moved aside (replacing an older one), and said so in one line. */
  #setAside(problem: string): void {
    const aside = `${this.#file}.bad`;
    let where: string;
    try {
      rmSync(aside, { recursive: true, force: true });
      renameSync(this.#file, aside);
      where = `it was moved to ${aside}`;
    } catch (error) {
      where = `it could not be moved aside either (${reasonOf(error)}): sessions will not survive a restart until it is removed`;
    }
    this.#logger?.warn(
      { file: this.#file },
      `the session state file ${this.#file} cannot be used: ${problem}; the gateway starts with no sessions (every patron logs in once more), ${where}`,
    );
  }

  changed(): void {
    this.#dirty = true;
  }

  used(): void {
    this.#usedPending = true;
  }

  /** While the directory is lost or writes fail, what /readyz shows beside a store that still serves; null otherwise. */
  warning(): string | null {
    if (this.#lost !== null) return this.#lost;
    return this.#failing
      ? `the session state file ${this.#file} cannot be written: sessions of this gateway would not survive a restart now`
      : null;
  }

  /**
   * Makes what was ended durable before the logout is answered: waits for a
   * write that began after the change (or the one under way, which took it).
   * If no write can be made in time, the state file is removed instead
   * (nothing comes back; the sessions left are then lost at a restart); if
   * even that fails or takes too long, rejects with StoreUnavailable (the
   * logout gets 503).
   */
  async ended(): Promise<void> {
    // A gateway that lost its directory writes nothing more: no file of its own can bring the session back.
    if (this.#closed || this.#lost !== null) return;
    const write = this.#dirty ? this.#flush() : this.#writing;
    if (write === null) return;
    try {
      await bounded(write, this.#timeoutMs, 'writing the session state file');
    } catch (error) {
      // First, before anything is awaited: no write of a snapshot taken so far may rename its file into place any
      // more. Each of them may hold a session just ended, and one held up in a hung fsync could land after the
      // removal below and bring the file back, with the logout answered 200.
      this.#removedAfter = this.#snapshots;
      try {
        await this.#remove();
      } catch (removal) {
        throw new StoreUnavailable(
          'error',
          `a logout could not be made durable: the session state file ${this.#file} can be neither written (${reasonOf(error)}) nor removed (${reasonOf(removal)})`,
          { cause: removal },
        );
      }
    }
  }

  /**
   * Removes the state file in place of a write, all within one bound: first
   * waits for a rename already called (it would put the file back after the
   * unlink), then unlinks, then syncs the directory. A step that runs out of
   * time rejects, and no later step runs.
   */
  async #remove(): Promise<void> {
    const deadline = performance.now() + this.#timeoutMs;
    const step = <T>(work: Promise<T>, what: string): Promise<T> =>
      bounded(work, Math.max(0, deadline - performance.now()), what);
    if (this.#renaming !== null) {
      await step(
        this.#renaming.catch(() => {}),
        'a rename of the session state file under way',
      );
    }
    await step(
      unlink(this.#file).catch((thrown: NodeJS.ErrnoException) => {
        if (thrown.code !== 'ENOENT') throw thrown;
      }),
      'removing the session state file',
    );
    await step(syncDirectory(this.#dir), 'syncing the state directory after removing the session state file');
  }

  /** A write that begins after everything changed so far; one queued write serves every caller until it begins. */
  #flush(): Promise<void> {
    if (this.#next !== null) return this.#next;
    const after = this.#writing ?? Promise.resolve();
    const next = after
      .catch(() => {})
      .then(() => {
        this.#next = null;
        const writing = this.#write();
        this.#writing = writing;
        return writing.finally(() => {
          if (this.#writing === writing) this.#writing = null;
        });
      });
    this.#next = next;
    return next;
  }

  async #write(): Promise<void> {
    const sessions = this.#sessions;
    if (sessions === null || this.#lost !== null) return;
    this.#dirty = false;
    this.#usedPending = false;
    this.#lastWriteAt = this.#now();
    const snapshot = ++this.#snapshots;
    // The sessions as they are now (references: cheap even for 100,000), then written a slice at a time, each
    // encoded just before: the event loop is never held for the whole file (at 100,000 sessions encoding it in one
    // go took about half a second). A session ended meanwhile may still be in this file: a logout waits for the
    // next write, which began after it (ended()).
    const entries = [...sessions.stored()].filter(([, stored]) => stored.sealed !== null);
    const temporary = `${this.#file}.tmp`;
    try {
      await rm(temporary, { force: true });
      const handle = await open(temporary, 'wx', 0o600);
      try {
        await handle.write(sessionFileHeader(entries.length, { keyCheck: this.#keyCheck, now: this.#now() }));
        for (let start = 0; start < entries.length; start += WRITE_SLICE) {
          const slice = entries
            .slice(start, start + WRITE_SLICE)
            .map(([hash, stored]) => sessionFileLine(hash, stored));
          await handle.write(slice.join(''));
        }
        await handle.sync();
      } finally {
        await handle.close();
      }
      // From these checks to the rename's call nothing is awaited: a removal (ended()) either stops this write here or
      // finds its rename in #renaming and waits for it.
      if (snapshot <= this.#removedAfter) {
        await rm(temporary, { force: true });
        this.#dirty = true;
        return;
      }
      // Another gateway took the directory over (state-dir.ts): its file is not this one's to replace.
      if (!this.#holdsDir(() => this.#claim.held())) {
        await rm(temporary, { force: true });
        return;
      }
      const renaming = rename(temporary, this.#file);
      this.#renaming = renaming;
      try {
        await renaming;
      } finally {
        if (this.#renaming === renaming) this.#renaming = null;
      }
      await syncDirectory(this.#dir);
      if (this.#failing) {
        this.#failing = false;
        this.#logger?.info({ file: this.#file }, 'the session state file is written again');
      }
    } catch (error) {
      // Still to be written: the next interval tries again.
      this.#dirty = true;
      if (!this.#failing) {
        this.#failing = true;
        this.#logger?.warn(
          { file: this.#file },
          `cannot write the session state file ${this.#file} (${reasonOf(error)}): sessions are kept in memory, but a restart now would lose the newer ones; retrying every ${this.#intervalMs / 1000} s`,
        );
      }
      throw error;
    }
  }

  /** A last write (bounded), then the lock is given back. A write that cannot be made is logged, never thrown. */
  async close(): Promise<void> {
    if (this.#closed) return;
    clearInterval(this.#timer);
    try {
      const due = this.#dirty || this.#usedPending;
      if (this.#lost === null && (due || this.#writing !== null)) {
        await bounded(
          due ? this.#flush() : (this.#writing ?? Promise.resolve()),
          this.#timeoutMs,
          'the last write of the session state file',
        );
      }
    } catch (error) {
      this.#logger?.warn(
        { file: this.#file },
        `the last write of the session state file failed (${reasonOf(error)}): sessions of the last seconds are lost at this restart`,
      );
    } finally {
      this.#closed = true;
      this.#claim.release();
    }
  }
}
