/**
 * Why a file could not be read, in the words of the sysadmin who has to fix
 * it: the configuration's files and secrets at start, the record mapping at
 * start and at each reload.
 */
export function fileProblemOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'no such file';
  if (code === 'EISDIR') return 'is a directory, not a file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied for the user paia-sip2 runs as';
  return (error as Error).message;
}
