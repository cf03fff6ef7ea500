/**
 * `npm test`: the static checks (tsc, Biome, knip, knip --production) and the test suite (vitest run,
 * with this script's arguments) at the same time. The suite's integration files mostly wait on real
 * processes and leave part of the CPU idle; the checks, one after another, fill it, instead of taking
 * half a minute of their own before the suite. Each check's output is kept and printed after the
 * suite's (only the check's name when it passed), so the two never interleave; the exit code is 1 when
 * any check or the suite failed.
 */

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const bin = (name) => `${ROOT}node_modules/.bin/${name}`;

const CHECKS = [
  ['tsc', '--noEmit'],
  ['biome', 'check', '--error-on-warnings', '.'],
  ['knip'],
  ['knip', '--production'],
];

/** Runs a command from the repository root; resolves with its exit code (1 when it could not start). */
function run(command, args, stdio) {
  return new Promise((resolve) => {
    const child = spawn(bin(command), args, { cwd: ROOT, stdio });
    let output = '';
    if (stdio === 'pipe') {
      child.stdout.setEncoding('utf8').on('data', (chunk) => (output += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk));
    }
    child.once('error', (error) => resolve({ code: 1, output: `${output}${error.message}\n` }));
    child.once('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

async function checks() {
  const results = [];
  for (const [command, ...args] of CHECKS)
    results.push({ name: [command, ...args].join(' '), ...(await run(command, args, 'pipe')) });
  return results;
}

const [checked, suite] = await Promise.all([checks(), run('vitest', ['run', ...process.argv.slice(2)], 'inherit')]);

process.stdout.write('\nstatic checks (run beside the suite):\n');
for (const { name, code, output } of checked) {
  process.stdout.write(`  ${code === 0 ? 'ok    ' : 'FAILED'} ${name}\n`);
  if (code !== 0) process.stdout.write(`${output.trimEnd()}\n`);
}
process.exitCode = suite.code === 0 && checked.every(({ code }) => code === 0) ? 0 : 1;
