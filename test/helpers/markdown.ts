/**
 * Reading the repository's Markdown as GitHub renders it, for the tests that
 * keep the docs in step with the code (test/unit/docs-api.test.ts,
 * test/unit/docs/drift.test.ts): headings and their anchors, links, inline
 * code and table rows, all outside fenced code blocks.
 */

/** The lines of a Markdown text that are not inside a fenced code block (```), fences dropped. */
export function proseLines(markdown: string): string[] {
  const lines: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else if (!fenced) lines.push(line);
  }
  return lines;
}

/** The headings (`#` to `######`) of a Markdown text, in order, with their level and text. */
export function headings(markdown: string): { level: number; text: string }[] {
  return proseLines(markdown).flatMap((line) => {
    const match = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    return match ? [{ level: match[1]!.length, text: match[2]! }] : [];
  });
}

/**
 * GitHub's anchor for a heading: the text with its Markdown marks removed
 * (code spans keep their content, links their text), lower case, every
 * character but letters, digits, spaces, `-` and `_` dropped, spaces as `-`.
 */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown text offers: each heading's slug, a repeated one with `-1`, `-2` ... as GitHub numbers them. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const { text } of headings(markdown)) {
    const base = slug(text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** The targets of the inline links `[text](target)` outside code (fenced blocks and code spans). */
export function linkTargets(markdown: string): string[] {
  return proseLines(markdown).flatMap((line) =>
    [...line.replace(/`[^`]*`/g, '').matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]!),
  );
}

/** The contents of the code spans (`...`) outside fenced blocks. */
export function codeSpans(markdown: string): string[] {
  return proseLines(markdown).flatMap((line) => [...line.matchAll(/`([^`]+)`/g)].map((match) => match[1]!));
}

/**
 * The text of the section under the first heading that starts with `title`
 * (any level), up to the next heading of the same or a higher level; throws
 * when there is none.
 */
export function section(markdown: string, title: string, name = 'the document'): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => new RegExp(`^#{1,6}\\s+${escapeRegExp(title)}`).test(line));
  if (start < 0) throw new Error(`${name} has no section "${title}"`);
  const level = /^#+/.exec(lines[start]!)![0].length;
  let fenced = false;
  let end = start + 1;
  for (; end < lines.length; end++) {
    const line = lines[end]!;
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = !fenced && /^(#{1,6})\s/.exec(line);
    if (heading && heading[1]!.length <= level) break;
  }
  return lines.slice(start, end).join('\n');
}

/** The body rows of every table in a text, as trimmed cells (`\|` inside a cell is not a separator; header rows repeated are left out). */
export function rows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[-| :]+\|$/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    )
    .filter((cells, i, all) => i === 0 || cells.join() !== all[0]?.join());
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
