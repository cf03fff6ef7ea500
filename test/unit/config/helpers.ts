import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll } from 'vitest';
import {
  ConfigError,
  type ConfigProblem,
  type LoadOptions,
  loadConfigWithWarnings,
} from '../../../src/config/index.js';

/** A temporary directory for this test file, removed afterwards. */
export function tempDir(): { dir: string; write(relative: string, text: string): string } {
  const dir = mkdtempSync(join(tmpdir(), 'paia-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return {
    dir,
    write(relative, text) {
      const path = join(dir, relative);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      return path;
    },
  };
}

/** Loads, expecting failure; returns the ConfigError. */
export function configError(options: LoadOptions): ConfigError {
  try {
    loadConfigWithWarnings(options);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError, but the configuration loaded');
}

/** The problems of a failing load, as "path: message" lines. */
export function problemLines(options: LoadOptions): string[] {
  return configError(options).problems.map((problem: ConfigProblem) => `${problem.path}: ${problem.message}`);
}

/** The one problem reported for a path (fails if there is none or several). */
export function problemAt(options: LoadOptions, path: string): string {
  const error = configError(options);
  const found = error.problems.filter((problem) => problem.path === path);
  if (found.length !== 1) throw new Error(`expected one problem at ${path}, got:\n${error.message}`);
  return (found[0] as ConfigProblem).message;
}
