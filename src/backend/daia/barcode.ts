/** What a barcode may look like before it is sent in a 17 (AB): SIP2 field text. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters cannot travel in a SIP2 field
const BARCODE = /^[^\u0000-\u001f\u007f|]{1,255}$/;

/** Whether `text` can be sent as an item barcode (AB) at all; one that cannot is an unknown item, never sent. */
export function isSip2Barcode(text: string): boolean {
  return BARCODE.test(text);
}
