/**
 * Runs a call into a plug-in (backend, session store) so that whatever it
 * throws, synchronously or not, is an Error: Hono passes only Errors to
 * onError.
 */
export async function guarded<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (thrown) {
    throw thrown instanceof Error ? thrown : new Error(`${what} threw a non-Error value (${typeof thrown})`);
  }
}
