import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The memory store's state directory (state.dir), taken for this process:
 * made (mode 0700) if missing; refused when others may write it (a state
 * file or key planted there would be read as the gateway's own and forge
 * sessions); locked with a file holding the pid (one gateway per directory;
 * a lock whose process is gone is taken over); and the key of the patron
 * index: paia.patronIdSecret, or without it a random key made once and kept
 * there (`key`, mode 0600).
 */

const LOCK = 'lock';
const KEY = 'key';
/** The random key of the patron index: 32 bytes, base64url. */
const KEY_TEXT = /^[A-Za-z0-9_-]{43}$/;
const MEMORY_ONLY = 'sessions are kept in memory only: a restart logs every patron out';

/** The directory, taken: the key of its patron index, and how to give the lock back. */
export interface StateDir {
  secret: string;
  /** Gives the lock back (at close), if it is still this process's. */
  release(): void;
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

/** Takes `dir` for this process, or says (one warning line) why it cannot be used. */
export function claimStateDir(dir: string, keySecret: string | null): StateDir | { refused: string } {
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
  let holder: number | null;
  try {
    holder = takeLock(lock);
  } catch (error) {
    return { refused: `state.dir ${dir} cannot be used (${reasonOf(error)}); ${MEMORY_ONLY}` };
  }
  if (holder !== null) {
    return {
      refused: `state.dir ${dir} is in use by another gateway (pid ${holder}, ${lock}); ${MEMORY_ONLY}. Give each gateway its own state.dir`,
    };
  }
  const release = () => {
    try {
      if (Number.parseInt(readFileSync(lock, 'utf8'), 10) === process.pid) unlinkSync(lock);
    } catch {
      // Gone already, or not ours any more: nothing to give back.
    }
  };
  try {
    const secret = keySecret === null || keySecret === '' ? ownKey(join(dir, KEY)) : keySecret;
    return { secret, release };
  } catch (error) {
    release();
    return { refused: `the key file in state.dir ${dir} cannot be made (${reasonOf(error)}); ${MEMORY_ONLY}` };
  }
}

/** Whether a process with this pid runs (signal 0 probes without signalling; EPERM: it runs, as another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the directory's lock for this process: null when taken, otherwise
 * the pid of the live process that holds it. A lock whose process is gone
 * (a crash, a SIGKILL) or that names this very pid (a container restarted
 * with the same pid) is taken over.
 */
function takeLock(path: string): number | null {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      // Given back between the two calls: try again.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    const holder = Number.parseInt(text, 10);
    if (Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && running(holder)) return holder;
    rmSync(path, { force: true });
  }
  throw new Error('the lock file came back while it was being taken over');
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

/** The directory's own key of the patron index: read, or made once (mode 0600). */
function ownKey(path: string): string {
  try {
    const text = readFileSync(path, 'utf8').trim();
    if (KEY_TEXT.test(text)) return text;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = randomBytes(32).toString('base64url');
  writeFileSync(`${path}.tmp`, `${key}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
  return key;
}
