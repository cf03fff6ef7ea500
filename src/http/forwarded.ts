/**
 * Behind a trusted proxy: the value of an X-Forwarded-* header that the proxy
 * itself added, the last entry of the list (earlier ones come from the client
 * and prove nothing).
 */
export function lastForwardedHop(header: string | null | undefined): string | undefined {
  return header?.split(',').at(-1)?.trim();
}
