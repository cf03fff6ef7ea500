/**
 * log.format pretty: one JSON log line (as pino wrote it, secrets already
 * masked) turned into one line for a person at a terminal:
 *
 *   2026-11-24T20:52:48.123Z WARN  [sip2] SIP2 connection lost conn=3 reason="closed by the ILS"
 *
 * Written here rather than with pino-pretty: a few lines, no dependency, and
 * nothing of the entry is left out (every field is printed, none evaluated).
 */

/** Fields shown in the line's head, or not at all (the same on every line of a process). */
const HEAD_FIELDS = new Set(['time', 'level', 'msg', 'component', 'name', 'pid', 'hostname']);

/** A value as key=value text: plain words bare, anything else as JSON (quoted strings, objects, lists). */
function showValue(value: unknown): string {
  if (typeof value === 'string' && /^[^\s"=]+$/.test(value)) return value;
  return JSON.stringify(value) ?? String(value);
}

/** One pretty line (ending in a newline) for one JSON line; text that is not a JSON object is passed on as it is. */
export function prettyLine(jsonLine: string): string {
  let entry: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(jsonLine);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return jsonLine;
    entry = parsed as Record<string, unknown>;
  } catch {
    return jsonLine;
  }
  const head = [
    String(entry.time ?? ''),
    String(entry.level ?? '')
      .toUpperCase()
      .padEnd(5),
  ];
  if (entry.component !== undefined) head.push(`[${String(entry.component)}]`);
  if (entry.msg !== undefined) head.push(String(entry.msg));
  const fields: string[] = [];
  let stack = '';
  for (const [key, value] of Object.entries(entry)) {
    if (HEAD_FIELDS.has(key)) continue;
    const error = value as { message?: unknown; stack?: unknown } | null;
    if (key === 'err' && typeof error?.stack === 'string') {
      // A stack reads best as the lines it is, below the entry.
      fields.push(`err=${showValue(error.message)}`);
      stack = `\n${error.stack.replace(/^/gm, '    ')}`;
      continue;
    }
    fields.push(`${key}=${showValue(value)}`);
  }
  return `${[...head, ...fields].join(' ')}${stack}\n`;
}
