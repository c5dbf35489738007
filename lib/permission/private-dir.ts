/**
 * Names of the private directories of run brokers, and which of them a later server may remove. A broker's
 * directory is named after the server process that made it (pid namespace, pid, start time), so a
 * directory left behind by a server that was killed (SIGKILL runs no code) is provably orphaned once that
 * process is gone, and a live server's directory never is. Pure: the effects are the caller's.
 */

export const PRIVATE_DIR_PREFIX = 'crm-perm-';

/** The server process that owns a directory: a pid alone can be recycled, pid + start time cannot. */
export interface DirOwner {
  /** The inode of /proc/self/ns/pid: pids mean something only within their namespace. */
  readonly pidNamespace: string;
  readonly pid: number;
  /** Field 22 of /proc/<pid>/stat. */
  readonly start: string;
}

/** mkdtemp appends six characters to this. Without an owner the name is anonymous and never swept. */
export function privateDirPrefix(owner: DirOwner | null): string {
  return owner === null ? PRIVATE_DIR_PREFIX : `${PRIVATE_DIR_PREFIX}${owner.pidNamespace}.${owner.pid}.${owner.start}-`;
}

const OWNED_NAME = /^crm-perm-(\d{1,20})\.(\d{1,10})\.(\d{1,20})-[A-Za-z0-9]{6}$/;

export function parseDirOwner(name: string): DirOwner | null {
  const match = OWNED_NAME.exec(name);
  if (match === null) return null;
  const pid = Number(match[2]);
  return Number.isSafeInteger(pid) && pid > 0 ? { pidNamespace: match[1]!, pid, start: match[3]! } : null;
}

export type OwnerState = 'alive' | 'gone' | 'unknown';

/**
 * The directories among `names` that may be removed: owned (by the name) by a process of this pid
 * namespace that is gone. Anonymous names, other namespaces, this very server and owners whose state
 * cannot be read are kept.
 */
export function orphanedDirs(names: readonly string[], self: DirOwner, ownerState: (owner: DirOwner) => OwnerState): string[] {
  return names.filter((name) => {
    const owner = parseDirOwner(name);
    if (owner === null || owner.pidNamespace !== self.pidNamespace) return false;
    if (owner.pid === self.pid && owner.start === self.start) return false;
    return ownerState(owner) === 'gone';
  });
}
