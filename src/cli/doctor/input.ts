import { createInterface } from 'node:readline';
import type { StateStoreCheck } from '../../gateway/index.js';

/** What the doctor is run with, besides the configuration. */
export interface DoctorOptions {
  /** Test patron (user name or barcode, as a PAIA client would log in). */
  patron?: string | undefined;
  /** Skip the steps that wait (the idle session). */
  quick?: boolean | undefined;
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
  /** Where the patron's password is read from when PAIA_DOCTOR_PASSWORD is not set; default process.stdin. */
  input?: (NodeJS.ReadableStream & { isTTY?: boolean }) | undefined;
  /** Default process.env. */
  env?: NodeJS.ProcessEnv | undefined;
  /** How many 99s measure the round-trip time; default 5. */
  roundTrips?: number | undefined;
  /** Checks the configured state store (gateway's checkStateStore); left out: the step is skipped. */
  stateStore?: (() => Promise<StateStoreCheck>) | undefined;
  /**
   * With libraries: the paths of the settings a library gives itself, and of their sections (main.ts, from the
   * settings table), which a library's advice names by the library's place (report.ts). Default: none.
   */
  librarySettings?: ReadonlySet<string> | undefined;
}

/** The environment variable holding the test patron's password. */
const PASSWORD_ENV = 'PAIA_DOCTOR_PASSWORD';

/** Bounds on reading the password: a person at a terminal types, a pipe has it at once. */
const PASSWORD_WAIT_TTY_MS = 120_000;
const PASSWORD_WAIT_PIPE_MS = 10_000;

export interface TestPatron {
  name: string;
  password: string;
}

export type TestPatronRead = { ok: true; patron: TestPatron | null } | { ok: false; reason: string };

/**
 * The test patron of --patron with its password (from PAIA_DOCTOR_PASSWORD,
 * else one line of stdin); null without --patron; a usage error when either
 * is missing.
 */
export async function testPatronOf(options: DoctorOptions): Promise<TestPatronRead> {
  const name = options.patron;
  if (name === undefined) return { ok: true, patron: null };
  if (name.trim() === '') return { ok: false, reason: '--patron needs the user name or barcode of a test patron' };
  const fromEnv = (options.env ?? process.env)[PASSWORD_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return { ok: true, patron: { name, password: fromEnv } };
  const read = await readPassword(options.input ?? process.stdin, options.err, name);
  return read.ok ? { ok: true, patron: { name, password: read.password } } : read;
}

type PasswordRead = { ok: true; password: string } | { ok: false; reason: string };

/** One line from stdin (a prompt on stderr when it is a terminal), bounded in time. */
async function readPassword(
  input: NodeJS.ReadableStream & { isTTY?: boolean },
  err: NodeJS.WritableStream,
  patron: string,
): Promise<PasswordRead> {
  const tty = input.isTTY === true;
  if (tty) err.write(`password of test patron "${patron}" (or set ${PASSWORD_ENV}): `);
  const waitMs = tty ? PASSWORD_WAIT_TTY_MS : PASSWORD_WAIT_PIPE_MS;
  const reader = createInterface({ input, terminal: false });
  try {
    const line = await new Promise<string | null | 'timeout'>((resolve) => {
      const timer = setTimeout(() => resolve('timeout'), waitMs);
      reader.once('line', (text) => {
        clearTimeout(timer);
        resolve(text);
      });
      reader.once('close', () => {
        clearTimeout(timer);
        resolve(null);
      });
    });
    if (line === 'timeout')
      return {
        ok: false,
        reason: `no password for --patron within ${waitMs / 1000} s: set ${PASSWORD_ENV} or give it on stdin`,
      };
    const password = line?.replace(/\r$/, '') ?? '';
    if (password === '')
      return { ok: false, reason: `--patron needs the patron's password: set ${PASSWORD_ENV} or give it on stdin` };
    return { ok: true, password };
  } finally {
    reader.close();
    input.pause();
  }
}

export type LibrariesChosen<T> = { ok: true; libraries: readonly T[] | null } | { ok: false; reason: string };

/**
 * The libraries of the configuration the doctor checks: every one in file
 * order, or the one of --library; null without a libraries section (the one
 * ILS of the top level). A --library that names none is a usage error,
 * listing the ids there are. So is --patron with several libraries and no
 * --library: a test patron is a patron of one library, and at every other
 * its login would fail and count as a failed check.
 */
export function librariesToCheck<T extends { readonly id: string }>(
  libraries: readonly T[] | null,
  wanted: string | undefined,
  patron?: string | undefined,
): LibrariesChosen<T> {
  if (wanted === undefined && patron !== undefined && libraries !== null && libraries.length > 1)
    return {
      ok: false,
      reason: `--patron needs --library: a test patron belongs to one library, and the configuration has ${libraries.length} (${libraries.map(({ id }) => id).join(', ')}); give --library ID with --patron, or leave out --patron to check every library`,
    };
  if (wanted === undefined) return { ok: true, libraries };
  if (libraries === null)
    return {
      ok: false,
      reason: `--library ${JSON.stringify(wanted)}: the configuration has no libraries section, so there is one ILS to check; leave out --library`,
    };
  const found = libraries.find(({ id }) => id === wanted);
  if (found === undefined)
    return {
      ok: false,
      reason: `--library ${JSON.stringify(wanted)} is not a library of the configuration; its libraries are ${libraries.map(({ id }) => id).join(', ')}`,
    };
  return { ok: true, libraries: [found] };
}
