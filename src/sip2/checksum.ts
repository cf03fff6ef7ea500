/**
 * SIP2 checksum: the 16-bit two's complement of the byte sum of everything
 * from the first byte up to and including the "AZ" field id, as 4 upper-case
 * hex digits. Computed over wire bytes, so it depends on the charset.
 */
export function checksum(bytes: Uint8Array, end = bytes.length): string {
  let sum = 0;
  for (let i = 0; i < end; i++) sum += bytes[i]!;
  return checksumOfSum(sum);
}

/**
 * The checksum of a text whose characters are all ASCII, whose bytes are its
 * character codes in every supported charset: computed from the text itself,
 * so the encoder need not make its bytes twice. null when a character is not ASCII.
 */
export function asciiChecksum(text: string): string | null {
  let sum = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0x7f) return null;
    sum += code;
  }
  return checksumOfSum(sum);
}

const HEX = '0123456789ABCDEF';

/** The 16-bit two's complement of `sum` as 4 upper-case hex digits. */
function checksumOfSum(sum: number): string {
  const value = -sum & 0xffff;
  return HEX[value >> 12]! + HEX[(value >> 8) & 0xf]! + HEX[(value >> 4) & 0xf]! + HEX[value & 0xf]!;
}
