/**
 * Document, location and patron-type URIs from configured templates such as
 * `https://lib.example.org/item/{barcode}`. Building percent-encodes the value
 * (encodeURIComponent); matching accepts exactly what building can produce,
 * modulo the case of percent-escapes and over-escaped unreserved characters,
 * and nothing else: an incoming URI that does not fit its template is an
 * unknown document, never a guess.
 */

export type UriVariable = 'barcode' | 'title' | 'location' | 'class' | 'record';

/** One encoded value: the characters encodeURIComponent leaves alone, or %XX escapes. Compiled once. */
const ENCODED_VALUE = /^(?:[A-Za-z0-9\-_.!~*'()]|%[0-9A-Fa-f]{2})+$/;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
const PLACEHOLDER = /\{[^{}]*\}/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** A value as it goes into a URI: percent-encoded (encodeURIComponent), a lone surrogate replaced by U+FFFD first. */
export function encodeUriValue(value: string): string {
  return encodeURIComponent(value.replace(LONE_SURROGATE, '\uFFFD'));
}

export class UriTemplate {
  readonly template: string;
  readonly variable: UriVariable;
  private readonly prefix: string;
  private readonly suffix: string;

  /** Throws when the template is not an absolute URI with `{variable}` exactly once and no other placeholder. */
  constructor(template: string, variable: UriVariable) {
    const placeholder = `{${variable}}`;
    const placeholders = template.match(PLACEHOLDER) ?? [];
    if (placeholders.length !== 1 || placeholders[0] !== placeholder) {
      throw new Error(`URI template "${template}" must contain ${placeholder} exactly once and no other {placeholder}`);
    }
    const at = template.indexOf(placeholder);
    this.prefix = template.slice(0, at);
    this.suffix = template.slice(at + placeholder.length);
    if (!SCHEME.test(this.prefix)) {
      throw new Error(`URI template "${template}" must start with a URI scheme (for example https:)`);
    }
    this.template = template;
    this.variable = variable;
  }

  /** The URI for one value; the value is percent-encoded. */
  build(value: string): string {
    return this.prefix + encodeUriValue(value) + this.suffix;
  }

  /** The value an incoming URI carries, or null when it does not fit the template exactly. */
  match(uri: string): string | null {
    if (uri.length <= this.prefix.length + this.suffix.length) return null;
    if (!uri.startsWith(this.prefix) || !uri.endsWith(this.suffix)) return null;
    const encoded = uri.slice(this.prefix.length, uri.length - this.suffix.length);
    if (!ENCODED_VALUE.test(encoded)) return null;
    try {
      return decodeURIComponent(encoded);
    } catch {
      return null; // %-escapes that are not UTF-8
    }
  }
}

export interface UriTemplatesConfig {
  /** Must contain {barcode}. */
  item: string;
  /** Must contain {title} (the ILS title identifier). */
  edition: string;
  /** Must contain {location} (the ILS location code); null: no storageid. */
  storage: string | null;
  /** Must contain {class} (the ILS patron class, 64 PC); null: no patron type. */
  patronType: string | null;
}

export interface UriTemplates {
  item: UriTemplate;
  edition: UriTemplate;
  storage: UriTemplate | null;
  patronType: UriTemplate | null;
}

/** Compiles the four templates once; throws naming the first bad one. */
export function compileUriTemplates(config: UriTemplatesConfig): UriTemplates {
  return {
    item: new UriTemplate(config.item, 'barcode'),
    edition: new UriTemplate(config.edition, 'title'),
    storage: config.storage === null ? null : new UriTemplate(config.storage, 'location'),
    patronType: config.patronType === null ? null : new UriTemplate(config.patronType, 'class'),
  };
}
