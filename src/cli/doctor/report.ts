import { performance } from 'node:perf_hooks';

/**
 * What the doctor prints: one line per step, `ok   <step> (<ms> ms)`,
 * `FAIL <step>: <reason and what to check>` or `skip <step>: <why>`; a
 * `wait` line before a step that takes its time; details indented below a
 * step, warnings among them marked `!`. Every line passes through the
 * masking of secrets (terminal and patron passwords). With several
 * libraries each has its own report, whose FAIL and `!` lines name the
 * library (`FAIL [DE-830] <step>: ...`), so a finding copied out of the
 * output still says where it belongs.
 */

/** Shorter secrets are not masked in the output: masking "1234" would mangle dates and amounts. They are never printed by the doctor itself. */
const MIN_MASKED_SECRET = 6;
const INDENT = '     ';

/** Stops the checks after a FAIL: the steps after it build on it. */
export class Abort extends Error {}

/** A step that ran but found something wrong; its message is the reason printed. */
export class CheckFailed extends Error {}

export class Report {
  failures = 0;
  warnings = 0;
  /** The step of the first FAIL, for the summary on stderr (its reason is printed once, in the FAIL line). */
  firstFailedStep = '';
  private readonly secrets: string[] = [];
  /** `[id] ` of the library the findings belong to; "" with one library. */
  private readonly tag: string;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly library: string | null = null,
    /** The settings a library gives itself (DoctorOptions.librarySettings). */
    private readonly settingPaths: ReadonlySet<string> = new Set(),
  ) {
    this.tag = library === null ? '' : `[${library}] `;
  }

  /** Masks `secret` in every line written from now on. */
  addSecret(secret: string): void {
    if (secret.length >= MIN_MASKED_SECRET) this.secrets.push(secret);
  }

  line(text: string): void {
    let masked = this.library === null ? text : librarySettings(text, this.library, this.settingPaths);
    for (const secret of this.secrets) masked = masked.replaceAll(secret, '***');
    this.out.write(`${masked.trimEnd()}\n`);
  }

  detail(text: string): void {
    this.line(`${INDENT}${text}`);
  }

  /** Something the sysadmin should fix, though the step passed: `! text`, further lines indented below it. Counted. */
  warn(text: string, ...more: string[]): void {
    this.warnings++;
    this.line(`${INDENT}! ${this.tag}${text}`);
    for (const line of more) this.line(`${INDENT}  ${line}`);
  }

  json(value: unknown): void {
    for (const line of JSON.stringify(value, null, 2).split('\n')) this.detail(line);
  }

  skip(text: string): void {
    this.line(`skip ${text}`);
  }

  /** Announces a step that takes a while, so that a silent terminal is not taken for a hang. */
  wait(text: string): void {
    this.line(`wait ${text}`);
  }

  fail(step: string, reason: string): void {
    this.failures++;
    if (this.failures === 1) this.firstFailedStep = step;
    this.line(`FAIL ${this.tag}${step}: ${reason}`);
  }

  /** Fails the step and stops the checks. */
  fatal(step: string, reason: string): never {
    this.fail(step, reason);
    throw new Abort(reason);
  }

  /**
   * Runs one step and prints its line: `ok` with the time (and the title
   * `done` makes of the result), or FAIL with `explain`'s reason, which stops
   * the checks.
   */
  async step<T>(
    name: string,
    run: () => Promise<T>,
    explain: (error: unknown) => string,
    done?: (result: T) => string,
  ): Promise<T> {
    const start = performance.now();
    let result: T;
    try {
      result = await run();
    } catch (error) {
      if (error instanceof Abort) throw error;
      this.fatal(name, explain(error));
    }
    this.line(`ok   ${done ? done(result) : name} (${formatMs(performance.now() - start)} ms)`);
    return result;
  }
}

/**
 * The advice in a library's words: a setting of its sip2, paia or daia is
 * named by its place in the libraries section (`libraries[DE-830].sip2.host`),
 * and the hint of an environment variable goes, for those set the top level only.
 * Only the settings' own paths change: a host such as sip2.example.org is none.
 */
export function librarySettings(text: string, library: string, settingPaths: ReadonlySet<string>): string {
  return text
    .replace(/ \(PAIA_(?:SIP2|PAIA|DAIA)_[A-Z0-9_]+(?:=[^)]*)?\)/g, '')
    .replace(/(?<![\w.\]-])(?:sip2|paia|daia)(?:\.[A-Za-z][A-Za-z0-9]*)+/g, (path) =>
      settingPaths.has(path) ? `libraries[${library}].${path}` : path,
    );
}

export function formatMs(ms: number): string {
  return ms < 10 ? ms.toFixed(1) : String(Math.round(ms));
}
