import { randomBytes, randomUUID } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

/**
 * The memory store's state directory (state.dir), taken for this process:
 * made (mode 0700) if missing; refused when others may write it (a state
 * file or key planted there would be read as the gateway's own and forge
 * sessions); locked (one gateway per directory: two writers would each bring
 * back the sessions the other ended); and the key of the patron index:
 * paia.patronIdSecret, or without it a random key made once and kept there
 * (`key`, mode 0600).
 *
 * The lock file names its holder: pid, host name, boot id (Linux) and a
 * random id of this claim. Its holder refreshes its mtime on every
 * write-interval tick (refresh()), so a lock is another live gateway's only
 * while it is fresh; a pid alone cannot tell: a container restarted with the
 * same pid, two containers on one volume (each gateway the same pid under
 * tini), a pid of before a reboot that now belongs to some other process.
 * Only on the same host and boot does a pid that is gone make a lock stale at
 * once (a crash). A stale lock is taken over by renaming a lock of our own
 * over it, then reading it back: of two gateways taking over at once, the one
 * whose lock is not there finds out then or at its next refresh, and stops
 * writing (persistence.ts).
 */

const LOCK = 'lock';
const KEY = 'key';
/** The random key of the patron index: 32 bytes, base64url. */
const KEY_TEXT = /^[A-Za-z0-9_-]{43}$/;
const MEMORY_ONLY = 'sessions are kept in memory only: a restart logs every patron out';
/** Where Linux says which boot this is: a pid means something only within one boot of one host. */
const BOOT_ID_FILE = '/proc/sys/kernel/random/boot_id';

/** Who holds a lock, as its file says; a field is null where the file does not say (not written by this code). */
interface LockHolder {
  pid: number | null;
  host: string | null;
  boot: string | null;
  /** The claim's own random id: what tells this process's lock from another's with the same pid. */
  id: string | null;
}

/** The directory, taken: the key of its patron index, and the lock kept and given back. */
export interface StateDir {
  secret: string;
  /**
   * Whether the lock is still this process's; if so, refreshes its mtime (on
   * every write-interval tick: what tells another gateway that it lives).
   */
  refresh(): boolean;
  /** Whether the lock is still this process's, without touching it (checked right before each rename of the state file). */
  held(): boolean;
  /** Gives the lock back (at close), if it is still this process's. */
  release(): void;
}

/** Why the directory is not used, in one sentence for the log and /readyz. */
export interface StateDirRefusal {
  refused: string;
}

export interface ClaimOptions {
  /** A lock whose mtime is older than this is stale: its holder stopped refreshing it (3 write intervals). */
  staleAfterMs: number;
}

/** Why a file or directory cannot be used, in words: the error's code where it has one. */
export function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied for the user paia-sip2 runs as';
  if (code === 'EROFS') return 'the file system is read-only';
  if (code === 'ENOSPC') return 'no space left on the device';
  if (code === 'EISDIR') return 'it is a directory';
  if (code === 'ENOTDIR') return 'a part of the path is not a directory';
  return error instanceof Error ? error.message : String(error);
}

/** Takes `dir` for this process, or says (one sentence) why it cannot be used. */
export function claimStateDir(
  dir: string,
  keySecret: string | null,
  options: ClaimOptions,
): StateDir | StateDirRefusal {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    return { refused: `state.dir ${dir} cannot be made (${reasonOf(error)}); ${MEMORY_ONLY}` };
  }
  const shared = sharedWith(dir);
  if (shared !== null) {
    return {
      refused: `state.dir ${dir} ${shared}: whoever may write there can forge sessions (and plant the key); ${MEMORY_ONLY}. Make it a directory of the gateway's user alone (chown, chmod 700)`,
    };
  }
  const lock = join(dir, LOCK);
  const self: LockHolder = { pid: process.pid, host: hostname(), boot: bootId(), id: randomUUID() };
  let live: LiveLock | null;
  try {
    live = takeLock(lock, self, options.staleAfterMs);
  } catch (error) {
    return { refused: `state.dir ${dir} cannot be used (${reasonOf(error)}); ${MEMORY_ONLY}` };
  }
  if (live !== null) {
    return {
      refused: `state.dir ${dir} is in use by another gateway (${describeHolder(live.holder)}; its lock ${lock} was refreshed ${Math.round(live.ageMs / 1000)} s ago); ${MEMORY_ONLY}. Give each gateway its own state.dir (a lock not refreshed for ${Math.round(options.staleAfterMs / 1000)} s is taken over)`,
    };
  }
  const held = () => {
    try {
      return readHolder(lock)?.id === self.id;
    } catch {
      return false;
    }
  };
  const refresh = () => {
    if (!held()) return false;
    try {
      const now = new Date();
      utimesSync(lock, now, now);
    } catch {
      // Still this process's lock: the next tick refreshes it again, and a disk that fails shows in the writes.
    }
    return true;
  };
  const release = () => {
    try {
      if (held()) unlinkSync(lock);
    } catch {
      // Gone already: nothing to give back.
    }
  };
  try {
    const secret = keySecret === null || keySecret === '' ? ownKey(join(dir, KEY)) : keySecret;
    return { secret, held, refresh, release };
  } catch (error) {
    release();
    return { refused: `the key file in state.dir ${dir} cannot be made (${reasonOf(error)}); ${MEMORY_ONLY}` };
  }
}

/** This boot of this host (Linux); null where the system does not say. */
function bootId(): string | null {
  try {
    return readFileSync(BOOT_ID_FILE, 'utf8').trim() || null;
  } catch {
    return null;
  }
}

function lockText(holder: LockHolder): string {
  return `${JSON.stringify(holder)}\n`;
}

/** The holder a lock file names (fields it does not name are null); null when there is no lock file. */
function readHolder(path: string): LockHolder | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  let parsed: Record<string, unknown> = {};
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object') parsed = value as Record<string, unknown>;
  } catch {
    // Not a lock this code wrote: its holder is unknown, and only its age tells whether it lives.
  }
  const nonEmpty = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);
  const pid = parsed.pid;
  return {
    pid: Number.isSafeInteger(pid) && (pid as number) > 0 ? (pid as number) : null,
    host: nonEmpty(parsed.host),
    boot: nonEmpty(parsed.boot),
    id: nonEmpty(parsed.id),
  };
}

function describeHolder(holder: LockHolder): string {
  if (holder.pid === null) return 'a lock that names no process';
  return `pid ${holder.pid}${holder.host === null ? '' : ` on host ${holder.host}`}`;
}

/** Whether a process with this pid runs here (signal 0 probes without signalling; EPERM: it runs, as another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A lock held by a live gateway: who, and how long ago it was last refreshed. */
interface LiveLock {
  holder: LockHolder;
  ageMs: number;
}

/**
 * Whether a lock found in place is another live gateway's: only while its
 * holder keeps refreshing it, except that on the same host and boot a pid
 * that is gone makes it stale at once. A lock naming this pid on another
 * host or boot is not this process's: another container, or a life before.
 */
function isLive(holder: LockHolder, ageMs: number, self: LockHolder, staleAfterMs: number): boolean {
  const sameBoot = holder.host === self.host && holder.boot === self.boot;
  if (sameBoot && holder.pid !== null && !running(holder.pid)) return false;
  return ageMs < staleAfterMs;
}

/**
 * Takes the directory's lock for this process: null when taken, otherwise
 * the live lock that keeps it. A stale lock is replaced by a rename (atomic:
 * never a moment without a lock, never a fresh lock of another removed), then
 * read back to confirm that it is this process's.
 */
function takeLock(path: string, self: LockHolder, staleAfterMs: number): LiveLock | null {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, lockText(self), { flag: 'wx', mode: 0o600 });
      return null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let ageMs: number;
    let holder: LockHolder | null;
    try {
      ageMs = Date.now() - statSync(path).mtimeMs;
      holder = readHolder(path);
    } catch (error) {
      // Given back between the two calls: try again.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    if (holder === null) continue;
    if (isLive(holder, ageMs, self, staleAfterMs)) return { holder, ageMs };
    const temporary = `${path}.${self.id}.tmp`;
    try {
      writeFileSync(temporary, lockText(self), { flag: 'wx', mode: 0o600 });
      renameSync(temporary, path);
    } finally {
      rmSync(temporary, { force: true });
    }
    const now = readHolder(path);
    if (now?.id === self.id) return null;
    // Another gateway took it over in the same moment, and its rename came last: it is the one that holds it.
    if (now !== null) return { holder: now, ageMs: 0 };
  }
  throw new Error('the lock file came and went while it was being taken over');
}

/**
 * Why others may write into the directory (a state file or key planted
 * there would be read as the gateway's own); null when it is this user's
 * alone: owned by it, not writable by group or others.
 */
function sharedWith(dir: string): string | null {
  const { mode, uid } = statSync(dir);
  if ((mode & 0o022) !== 0) return `is writable by other users (mode ${(mode & 0o777).toString(8).padStart(4, '0')})`;
  const self = process.getuid?.();
  if (self !== undefined && uid !== self) return `belongs to another user (uid ${uid}, the gateway runs as ${self})`;
  return null;
}

/** The directory's own key of the patron index: read, or made once (mode 0600; on disk before it is renamed into place). */
function ownKey(path: string): string {
  try {
    const text = readFileSync(path, 'utf8').trim();
    if (KEY_TEXT.test(text)) return text;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = randomBytes(32).toString('base64url');
  const temporary = `${path}.tmp`;
  const fd = openSync(temporary, 'w', 0o600);
  try {
    writeSync(fd, `${key}\n`);
    // Synced before the rename: after a crash the key is whole or absent, never an empty file that a new key replaces
    // (the state file written with the lost key would then be unusable).
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
  return key;
}
