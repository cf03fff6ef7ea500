import { isIP } from 'node:net';
import { z } from 'zod';
import { clientRuleProblem } from '../../auth/client-allowlist.js';
import { MAX_FIELD_LENGTH } from '../../sip2/index.js';

/**
 * The validators the sections share: each takes the message a sysadmin reads
 * when the value is wrong (the loader appends what it got and where from).
 */

/** What the secret settings must not be left at: the placeholder in config/example.yaml. */
export const PLACEHOLDER_SECRET = /change[-_ ]?me/i;

/**
 * Default of the settings that only the demo gives a value (sip2.terminal.*,
 * sip2.institution): not set, but kept in the output as undefined so that the
 * section keeps the order of its keys. zod types a default as defined; the
 * transform at the end of configSchema reads these as `string | undefined`.
 */
export const UNSET = undefined as never;

export const must = (text: string) => ({ error: text });

export function integer(min: number, max: number, mustBe: string) {
  const e = must(mustBe);
  return z.number(e).int(e).min(min, e).max(max, e);
}

/**
 * A duration in milliseconds (every time setting is: one unit per concept).
 * The example in the message tells milliseconds from seconds; `zero` names
 * what 0 means when it is allowed below `min` (off, never).
 */
export function milliseconds(min: number, max: number, exampleMs: number, zero?: string) {
  const range = `milliseconds between ${min} and ${max} (e.g. ${exampleMs} for ${exampleMs / 1000} s)`;
  const e = must(zero === undefined ? `must be ${range}` : `must be 0 (${zero}) or ${range}`);
  return z
    .number(e)
    .int(e)
    .min(0, e)
    .max(max, e)
    .refine((value) => value >= min || (zero !== undefined && value === 0), e);
}

export const port = (mustBe = 'must be a TCP port between 1 and 65535') => integer(1, 65535, mustBe);
export const flag = () => z.boolean(must('must be true or false'));

/** A section of settings: strict (unknown keys are errors), and an empty section (`http:` alone) means all defaults. */
export function section<T extends z.core.$ZodLooseShape>(shape: T) {
  return z.preprocess(
    (value) => value ?? {},
    z.strictObject(shape, must('must be a section of settings (indented "key: value" lines)')),
  );
}

/** A SIP2 field value: at most 255 characters, none of the separators SIP2 frames with. */
export function sipText(mustBe: string, options: { allowEmpty: boolean }) {
  const base = z
    .string(must(mustBe))
    .max(MAX_FIELD_LENGTH, must(`${mustBe}, at most ${MAX_FIELD_LENGTH} characters long`));
  return (options.allowEmpty ? base : base.min(1, must(mustBe))).refine((value) => !/[|\r\n\0]/.test(value), {
    error: `${mustBe}, without "|", line breaks or NUL characters (SIP2 uses them as separators)`,
  });
}

/** A list of strings; a string (a one-line list in YAML, or a PAIA_* variable) is split at commas, the entries trimmed. */
export function textList(entryMustBe: string, listMustBe: string) {
  return z.preprocess(
    (value) =>
      typeof value === 'string'
        ? value
            .split(',')
            .map((entry) => entry.trim())
            .filter((entry) => entry !== '')
        : value,
    z.array(z.string(must(entryMustBe)), must(listMustBe)),
  );
}

/** IP addresses and CIDR blocks (IPv4 or IPv6); comma-separated in the environment. Each bad entry is named. */
export function clientList() {
  const mustBe =
    'must be a list of IP addresses or CIDR blocks, e.g. ["10.0.0.0/8", "2001:db8::/32"], or [] for any client';
  return textList('must be a list of IP addresses or CIDR blocks (strings)', mustBe).superRefine((entries, ctx) => {
    for (const entry of entries) {
      const problem = clientRuleProblem(entry);
      if (problem !== null)
        ctx.addIssue({ code: 'custom', message: `has ${JSON.stringify(entry.slice(0, 80))}, which ${problem}` });
    }
  });
}

const HOST_NAME =
  /^(?=.{1,253}\.?$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

/** Why a host setting is wrong, or null when it is a host name or an IP address. */
export function hostProblem(value: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value))
    return 'give the host name alone, without a scheme like "tcp://" or "https://"';
  if (/^[^:[\]]+:\d+$/.test(value) || /^\[[^\]]+\]:\d+$/.test(value))
    return 'give the host name alone and the port in its own setting';
  const bare = value.startsWith('[') && value.endsWith(']') ? value.slice(1, -1) : value;
  if (isIP(bare) !== 0 || HOST_NAME.test(value)) return null;
  return 'is not a valid host name or IP address';
}

/** A "host:port" (or "[v6]:port"; the port may be left out for `defaultPort`) split into its parts; null: not one. */
export function splitHostPort(value: string, defaultPort: number): { host: string; port: number } | null {
  const match = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(value.trim());
  if (match === null) return null;
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (port < 1 || port > 65535) return null;
  const host = match[1]!.replace(/^\[|\]$/g, '');
  return isIP(host) !== 0 || HOST_NAME.test(host) ? { host, port } : null;
}

export function host(mustBe: string) {
  return z.string(must(mustBe)).superRefine((value, ctx) => {
    const problem = hostProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: `${mustBe}: ${problem}` });
  });
}

const EXAMPLE_VALUES: Record<string, string> = {
  barcode: '0123456789',
  title: 'Some%20Title',
  location: 'MAIN',
  class: 'adult',
  record: '12345',
};

/** A URI with a scheme that parses, without spaces, quotes or angle brackets. */
export function absoluteUri(value: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(value) && !/[\s<>"]/.test(value) && URL.canParse(value);
}

/** Why a URI template is wrong, or null. It must have the placeholder once and be an absolute URI once filled in. */
export function uriTemplateProblem(template: string, placeholder: string, example: string): string | null {
  const hint = `, e.g. "${example}"`;
  for (const match of template.matchAll(/\{([^{}]*)\}/g)) {
    if (match[1] !== placeholder)
      return `has the unknown placeholder {${match[1]}}: only {${placeholder}} is filled in${hint}`;
  }
  const count = template.split(`{${placeholder}}`).length - 1;
  if (count !== 1) return `must contain {${placeholder}} exactly once${hint}`;
  if (/[\s<>"]/.test(template)) return `must not contain spaces, quotes or angle brackets${hint}`;
  const filled = template.replace(`{${placeholder}}`, EXAMPLE_VALUES[placeholder] ?? 'x');
  if (!absoluteUri(filled)) {
    return `must be an absolute URI (with a scheme like https:) once {${placeholder}} is filled in${hint}`;
  }
  return null;
}

export function uriTemplate(placeholder: string, example: string, what: string) {
  const mustBe = `must be a URI template for ${what} containing {${placeholder}}, e.g. "${example}"`;
  return z.string(must(mustBe)).superRefine((value, ctx) => {
    const problem = uriTemplateProblem(value, placeholder, example);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/**
 * What the environment table (settings.ts) needs to know of a setting that
 * its type does not say: a secret is never shown in messages or logs, a file
 * path is made absolute and checked for reading. Registered on the setting's
 * outermost schema (secret) or on the path itself (filePath), and found again
 * by walking the schema.
 */
export const settingRoles = z.registry<{ secret?: true; file?: true }>();

/** Marks a setting as secret: its value is never shown (call it last, on the whole setting). */
export function secret<T extends z.ZodType>(schema: T): T {
  settingRoles.add(schema as z.ZodType, { secret: true });
  return schema;
}

/** An absolute path or a path relative to the config file (the loader makes it absolute and checks it can be read). */
export const filePath = (mustBe: string) =>
  z.string(must(mustBe)).min(1, must(mustBe)).register(settingRoles, { file: true });
