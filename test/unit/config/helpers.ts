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

/**
 * What a configuration with sip2.host must set besides (a real ILS gets no
 * demo values), as the environment gives it.
 */
export const ILS_ACCOUNT_ENV: Readonly<Record<string, string>> = {
  PAIA_SIP2_TERMINAL_USER: 'paia-gateway',
  PAIA_SIP2_TERMINAL_PASSWORD: 'gateway-secret',
  PAIA_SIP2_TERMINAL_LOCATION: 'CPL',
  PAIA_SIP2_INSTITUTION: 'CPL',
  PAIA_PAIA_ITEM_URI: 'https://lib.example.org/item/{barcode}',
  PAIA_PAIA_EDITION_URI: 'https://lib.example.org/title/{title}',
};
