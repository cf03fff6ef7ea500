/**
 * The number the `length` characters of `text` from `start` spell in ASCII
 * decimal digits; -1 when there are none, or one of them is anything else.
 * The decoder reads every count and date of every answer with it: a regular
 * expression and Number() cost several times as much per field.
 */
export function readDigits(text: string, start = 0, length = text.length - start): number {
  if (length <= 0 || start + length > text.length) return -1;
  let value = 0;
  for (let i = start; i < start + length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}
