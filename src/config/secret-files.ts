import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileProblemOf } from '../file-problem.js';
import { configSettings } from './settings.js';

/**
 * `_FILE` variants of the secret settings, for container secrets (Docker and
 * Kubernetes mount them as files): PAIA_SIP2_TERMINAL_PASSWORD_FILE=/run/secrets/sip2
 * sets sip2.terminal.password to that file's text, without the one line
 * break editors and `echo` leave at its end. Setting a secret both ways is
 * an error: which one should win is not for the gateway to guess.
 */

/** The suffix of a variable that names a file holding the setting's value. */
const FILE_SUFFIX = '_FILE';

export interface SecretFiles {
  /** `env` with each `PAIA_X_FILE` replaced by `PAIA_X` holding the file's text. */
  env: NodeJS.ProcessEnv;
  /** Setting path -> the `_FILE` variable that set it, for messages ("from PAIA_X_FILE"). */
  sources: Map<string, string>;
  /** As load.ts's ConfigProblem: the setting's path and what is wrong. */
  problems: { path: string; message: string }[];
}

/** Every `_FILE` variable a secret can be read from, e.g. PAIA_SIP2_TERMINAL_PASSWORD_FILE. */
export function secretFileVariables(): string[] {
  return configSettings()
    .filter((setting) => setting.secret)
    .map((setting) => `${setting.env}${FILE_SUFFIX}`);
}

/** Reads the `_FILE` variables of secret settings; relative paths from `cwd`. */
export function readSecretFiles(env: NodeJS.ProcessEnv, cwd: string): SecretFiles {
  const result: NodeJS.ProcessEnv = { ...env };
  const sources = new Map<string, string>();
  const problems: SecretFiles['problems'] = [];
  for (const setting of configSettings()) {
    if (!setting.secret) continue;
    const variable = `${setting.env}${FILE_SUFFIX}`;
    const file = env[variable];
    if (file === undefined || file.trim() === '') continue;
    delete result[variable];
    if (env[setting.env] !== undefined) {
      problems.push({
        path: setting.path,
        message: `is set twice, by ${setting.env} and by ${variable}; set only one of them (value hidden)`,
      });
      continue;
    }
    const path = resolve(cwd, file.trim());
    try {
      // One final line break is the file's, not the secret's.
      result[setting.env] = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
      sources.set(setting.path, variable);
    } catch (error) {
      problems.push({
        path: setting.path,
        message: `cannot read ${path} named by ${variable}: ${fileProblemOf(error)}; make the file readable for the user paia-sip2 runs as, or set ${setting.env} instead`,
      });
    }
  }
  return { env: result, sources, problems };
}
