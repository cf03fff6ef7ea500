import type { ChildProcess } from 'node:child_process';

/**
 * Child processes a test run started: killed when the test process exits, so
 * a failing or interrupted test never leaves a simulator or gateway holding ports.
 */
const children = new Set<ChildProcess>();
let exitHookInstalled = false;

export function trackChild(child: ChildProcess): ChildProcess {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    const killAll = () => {
      for (const running of children) running.kill('SIGKILL');
    };
    process.once('exit', killAll);
    // vitest stops a worker fork with SIGTERM, which ends node without its 'exit' listeners: the
    // simulators of a file whose beforeAll failed half-way would outlive it and keep their ports and CPU.
    process.once('SIGTERM', () => {
      killAll();
      process.exit(143);
    });
  }
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Whether a process with this pid still runs (signal 0 probes without signalling). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}
