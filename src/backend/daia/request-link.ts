import { encodeUriValue } from '../uris.js';

/**
 * The `href` of a DAIA service where a patron can ask for a copy
 * (daia.requestUrl): a URL template with `{item}` (the item URI) and/or
 * `{barcode}` (the item barcode), each filled in percent-encoded. Discovery
 * systems act on its presence (VuFind's DAIA driver offers a recall or a
 * request only on a service with an href), a DAIA-only one also follows it.
 * Only the copy goes into it, never anything of a patron.
 */

const PLACEHOLDERS = ['item', 'barcode'] as const;
const PLACEHOLDER = /\{([^{}]*)\}/g;
/** DAIA's URL type: a URI whose value matches ^https?: (DAIA 1.0, "Data types"). */
const HTTP_URL = /^https?:/i;
/** Stand-ins for checking a template: what a filled-in link looks like. */
const EXAMPLE = { item: encodeUriValue('https://lib.example.org/item/it-1'), barcode: 'it-1' };

/** Why a template cannot give request links, in words for the sysadmin; null when it can. */
export function requestLinkProblem(template: string): string | null {
  const names = [...template.matchAll(PLACEHOLDER)].map((match) => match[1] ?? '');
  const unknown = names.find((name) => !(PLACEHOLDERS as readonly string[]).includes(name));
  if (unknown !== undefined) return `has the unknown placeholder {${unknown}}: only {item} and {barcode} are filled in`;
  // A link without the copy would send every patron to the same page, whatever copy they chose.
  if (names.length === 0) return 'must contain {item} or {barcode}, so that the link names the copy';
  if (/[\s<>"]/.test(template)) return 'must not contain spaces, quotes or angle brackets';
  const filled = fill(template, EXAMPLE.item, EXAMPLE.barcode);
  if (!HTTP_URL.test(filled) || !URL.canParse(filled)) {
    return 'must be an http: or https: URL once {item} and {barcode} are filled in (DAIA links are URLs)';
  }
  return null;
}

function fill(template: string, item: string, barcode: string): string {
  return template.replace(PLACEHOLDER, (_, name: string) => (name === 'item' ? item : barcode));
}

export class RequestLink {
  readonly template: string;

  /** Throws when the template cannot give request links (requestLinkProblem). */
  constructor(template: string) {
    const problem = requestLinkProblem(template);
    if (problem !== null) throw new Error(`request link template "${template}" ${problem}`);
    this.template = template;
  }

  /** The link for one copy: its item URI and barcode percent-encoded into the template. */
  build(item: string, barcode: string): string {
    return fill(this.template, encodeUriValue(item), encodeUriValue(barcode));
  }
}
