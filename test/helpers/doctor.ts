import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sourceEntry } from './entry-points.js';

/**
 * Runs `paia-sip2 doctor` as a sysadmin does: the real CLI in its own
 * process, with a clean environment plus the given PAIA_* settings.
 */

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RUN_TIMEOUT_MS = 25_000;

export interface DoctorRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** The environment without any PAIA_* setting of whoever runs the tests. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('PAIA_') && name !== 'PORT'),
  );
}

export function runDoctorProcess(args: string[], env: Record<string, string>, stdin?: string): Promise<DoctorRun> {
  const started = Date.now();
  const child = spawn(process.execPath, [...sourceEntry('src/cli/main.ts'), 'doctor', ...args], {
    cwd: REPO_ROOT,
    env: { ...cleanEnv(), PAIA_HTTP_PORT: '0', ...env },
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (stdin !== undefined) child.stdin!.end(stdin);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    // The doctor must end by itself; a hang is a failure, not a test timeout.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`doctor did not exit within ${RUN_TIMEOUT_MS} ms\n--- stdout:\n${stdout}\n--- stderr:\n${stderr}`),
      );
    }, RUN_TIMEOUT_MS);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** For assertion messages: the exit code and everything the doctor printed. */
export const explainRun = (run: DoctorRun) =>
  `exit ${run.code}\n--- stdout:\n${run.stdout}\n--- stderr:\n${run.stderr}`;

/**
 * The warning (`     ! ...`) whose first line contains `start`, with its
 * continuation lines: what a sysadmin reads as one piece of advice.
 */
export function warningBlock(stdout: string, start: string): string | null {
  const lines = stdout.split('\n');
  const at = lines.findIndex((line) => line.startsWith('     ! ') && line.includes(start));
  if (at === -1) return null;
  const block = [lines[at]!];
  for (const line of lines.slice(at + 1)) {
    if (!line.startsWith('       ')) break;
    block.push(line);
  }
  return block.join('\n');
}
