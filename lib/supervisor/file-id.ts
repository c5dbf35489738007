/**
 * The identity of an executable file as the kernel keeps it: device, inode, size, and modification and
 * change times in nanoseconds. Equal identities mean the same file, unchanged; a file replaced (a new
 * inode), rewritten in place or re-linked has another one. A version answer is bound to the file that gave
 * it this way, so the file that is executed later can be checked to be that very file.
 */

/** Identity of the file an absolute path names (symlinks followed: what exec would run), or null. */
export function fileIdentity(path: string): string | null {
  // A relative path means something else in the child's cwd or on PATH: it is never bound.
  if (!path.startsWith('/')) return null;
  try {
    const st = process.getBuiltinModule('node:fs').statSync(path, { bigint: true, throwIfNoEntry: false });
    return st === undefined ? null : `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    return null; // EACCES, ENOTDIR, ELOOP: nothing to vouch for
  }
}

/** A file identity on the wire: non-empty, short, no surprises. */
export const FILE_ID_PATTERN = /^\d+:\d+:\d+:\d+:\d+$/;

/** A file identity as the wire carries it, or null (unbound). */
export function isFileIdOrNull(value: unknown): value is string | null {
  return value === null || (typeof value === 'string' && FILE_ID_PATTERN.test(value));
}
