import { readFileSync, type Stats, statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { fileProblemOf } from '../../../file-problem.js';
import type { Logger } from '../../../log.js';
import { type MappingProblem, parseRecordMapping, type RecordMapping, RecordMappingError } from './mapping.js';
import type { RecordSource } from './source.js';

/**
 * Records from a mapping file (daia.records.file), re-read when it changes.
 * The file's size, modification time and inode are checked every few
 * seconds (fs.watch misses changes on network and container filesystems);
 * a changed file is read and parsed whole, and only then replaces the
 * mapping in one assignment, so a request sees the old mapping or the new
 * one, never a mix. A file that cannot be read or parsed at start is an
 * error; one that disappears or breaks later leaves the last good mapping
 * serving, and is logged once until it is good again.
 */

export interface FileRecordSourceOptions {
  /** The mapping file (absolute, or relative to the working directory). */
  path: string;
  /** Most barcodes per record (daia.records.maxItemsPerRecord; default mapping.ts's). */
  maxItemsPerRecord?: number;
  /** How often the file is checked for changes, in milliseconds (default 5 s). */
  checkIntervalMs?: number;
  logger?: Logger | undefined;
}

/** Default of daia.records.fileCheckMs: a changed file serves within seconds; a stat every few seconds costs nothing. */
export const DEFAULT_FILE_CHECK_MS = 5000;

/** At most this many broken lines are named in one log line; the rest are counted. */
export const MAX_LINES_NAMED = 20;

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** What identifies one version of the file: a rename over it (the safe way to replace it) changes the inode. */
function versionOf(stats: Stats): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
}

/** The broken lines as one readable text, at most MAX_LINES_NAMED of them. */
function describeProblems(file: string, problems: readonly MappingProblem[]): string {
  const named = problems.slice(0, MAX_LINES_NAMED).map(({ line, message }) => `${file}:${line} ${message}`);
  const more = problems.length - named.length;
  return `${named.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
}

export class FileRecordSource implements RecordSource {
  readonly #options: FileRecordSourceOptions;
  #mapping: RecordMapping;
  /** The version last read: the mapping's, or a broken one (not read again until it changes). */
  #version: string;
  /** Whether #version is the version the mapping serving now was read from. */
  #serving = true;
  #timer: NodeJS.Timeout | null;
  #checking = false;
  /** Why the file could not be used at the last check; logged once, until it can be used again. */
  #failing: string | null = null;

  /** Reads the file now; throws RecordMappingError, the file named, when it cannot serve at all. */
  constructor(options: FileRecordSourceOptions) {
    this.#options = options;
    const { path } = options;
    let text: string;
    try {
      // The version first: a change after it is found at the next check.
      this.#version = versionOf(statSync(path));
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new RecordMappingError(`cannot read the record mapping ${path}: ${fileProblemOf(error)}`);
    }
    this.#mapping = this.#parse(text, 'read');
    this.#timer = setInterval(() => {
      this.check().catch((error: unknown) => {
        options.logger?.error({ file: path, err: error }, 'checking the record mapping failed');
      });
    }, options.checkIntervalMs ?? DEFAULT_FILE_CHECK_MS);
    // A check never keeps the process alive.
    this.#timer.unref();
  }

  /** Records and copies in the mapping that serves now. */
  get size(): { records: number; copies: number } {
    return { records: this.#mapping.records.size, copies: this.#mapping.copies };
  }

  /** A file answers every lookup from memory. */
  readonly failures = 0;

  barcodesOf(record: string): Promise<readonly string[]> {
    return Promise.resolve(this.#mapping.records.get(record) ?? []);
  }

  close(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** Reads the file again if it changed (the timer calls this; tests may too). */
  async check(): Promise<void> {
    if (this.#checking) return;
    this.#checking = true;
    try {
      await this.#checkNow();
    } finally {
      this.#checking = false;
    }
  }

  async #checkNow(): Promise<void> {
    const { path } = this.#options;
    let version: string;
    let text: string;
    try {
      version = versionOf(await stat(path));
      if (version === this.#version) {
        // Back after it could not be read, as it was: the mapping serving is this very version.
        if (this.#serving) this.#recovered(`the record mapping ${path} is readable again, unchanged`);
        return;
      }
      text = await readFile(path, 'utf8');
    } catch (error) {
      this.#fail(`cannot read the record mapping ${path}: ${fileProblemOf(error)}`);
      return;
    }
    // A broken version is not read again until it changes.
    this.#version = version;
    let mapping: RecordMapping;
    try {
      mapping = this.#parse(text, 'reloaded');
    } catch (error) {
      if (!(error instanceof RecordMappingError)) throw error;
      this.#serving = false;
      this.#fail(error.message);
      return;
    }
    this.#mapping = mapping;
    this.#serving = true;
    this.#recovered(null);
  }

  /** Parses a version of the file; names its broken lines in the log. Throws RecordMappingError (the file named). */
  #parse(text: string, what: 'read' | 'reloaded'): RecordMapping {
    const { path, logger } = this.#options;
    let parsed: ReturnType<typeof parseRecordMapping>;
    try {
      parsed = parseRecordMapping(text, { maxItemsPerRecord: this.#options.maxItemsPerRecord });
    } catch (error) {
      if (error instanceof RecordMappingError)
        throw new RecordMappingError(`the record mapping ${path} ${error.message}`);
      throw error;
    }
    const { mapping, problems } = parsed;
    if (problems.length > 0) {
      logger?.warn(
        { file: path, brokenLines: problems.length, records: mapping.records.size },
        `record mapping ${path}: ${plural(problems.length, 'line')} left out, the rest serves: ${describeProblems(path, problems)}`,
      );
    }
    logger?.info(
      { file: path, format: parsed.format, records: mapping.records.size, copies: mapping.copies },
      `record mapping ${what}`,
    );
    return mapping;
  }

  /** `problem` names the file; logged once while it lasts. */
  #fail(problem: string): void {
    if (this.#failing === problem) return;
    this.#failing = problem;
    this.#options.logger?.warn(
      { file: this.#options.path, records: this.#mapping.records.size },
      `${problem}; the last good mapping (${plural(this.#mapping.records.size, 'record')}) keeps serving until the file is good again`,
    );
  }

  #recovered(how: string | null): void {
    if (this.#failing === null) return;
    this.#failing = null;
    if (how !== null) this.#options.logger?.info({ file: this.#options.path }, how);
  }
}
