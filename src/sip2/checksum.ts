/**
 * SIP2 checksum: the 16-bit two's complement of the byte sum of everything
 * from the first byte up to and including the "AZ" field id, as 4 upper-case
 * hex digits. Computed over wire bytes, so it depends on the charset.
 */
export function checksum(bytes: Uint8Array, end = bytes.length): string {
  let sum = 0;
  for (let i = 0; i < end; i++) sum += bytes[i]!;
  return (-sum & 0xffff).toString(16).toUpperCase().padStart(4, '0');
}
