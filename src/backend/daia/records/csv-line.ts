/**
 * One line of a CSV export, split into fields: pure. Fields may be quoted
 * ("a,b"), with "" for a quote inside; spaces around a field are trimmed.
 * A field never spans lines (record ids and barcodes have no line breaks).
 */

/** The separator a file uses, from its first line: a tab, else a semicolon without commas (spreadsheets in many locales), else a comma. */
export function separatorOf(firstLine: string): string {
  if (firstLine.includes('\t')) return '\t';
  if (firstLine.includes(';') && !firstLine.includes(',')) return ';';
  return ',';
}

/** The fields of one line; null when a quoted field is not closed. */
export function splitCsvLine(line: string, separator: string): string[] | null {
  const fields: string[] = [];
  let at = 0;
  for (;;) {
    while (line[at] === ' ') at += 1;
    let field: string;
    if (line[at] === '"') {
      field = '';
      at += 1;
      for (;;) {
        const quote = line.indexOf('"', at);
        if (quote < 0) return null;
        field += line.slice(at, quote);
        if (line[quote + 1] === '"') {
          field += '"';
          at = quote + 2;
          continue;
        }
        at = quote + 1;
        break;
      }
      const end = line.indexOf(separator, at);
      // Whatever follows the closing quote up to the separator is kept, as spreadsheets do.
      field += (end < 0 ? line.slice(at) : line.slice(at, end)).trim();
      at = end < 0 ? line.length + 1 : end + separator.length;
    } else {
      const end = line.indexOf(separator, at);
      field = (end < 0 ? line.slice(at) : line.slice(at, end)).trim();
      at = end < 0 ? line.length + 1 : end + separator.length;
    }
    fields.push(field);
    if (at > line.length) return fields;
  }
}
