/**
 * Names of the private directories of run brokers, and which of them a later server may remove. A broker's
 * directory is named after the server process that made it (lib/process/owner.ts), so a
 * directory left behind by a server that was killed (SIGKILL runs no code) is provably orphaned once that
 * process is gone, and a live server's directory never is. Pure: the effects are the caller's.
 */

import { formatOwner, judgeOwner, parseOwner, type OwnerIdentity, type ProcessState } from '../process/owner.ts';
import type { ProcessIdentity } from '../process/proc-stat.ts';

export const PRIVATE_DIR_PREFIX = 'crm-perm-';

/** The server process that owns a directory: pid + start time within its pid namespace and boot. */
export type DirOwner = OwnerIdentity;

/** mkdtemp appends six characters to this. Without an owner the name is anonymous and never swept. */
export function privateDirPrefix(owner: DirOwner | null): string {
  return owner === null ? PRIVATE_DIR_PREFIX : `${PRIVATE_DIR_PREFIX}${formatOwner(owner)}-`;
}

const OWNED_NAME = /^crm-perm-([0-9a-z.]+)-[A-Za-z0-9]{6}$/;

export function parseDirOwner(name: string): DirOwner | null {
  const match = OWNED_NAME.exec(name);
  return match === null ? null : parseOwner(match[1]!);
}

/**
 * The directories among `names` that may be removed: owned (by the name) by a process of this pid
 * namespace and boot that is gone. Anonymous names (and those of earlier releases, which named no boot),
 * other namespaces and boots, this very server and owners whose state cannot be read are kept.
 */
export function orphanedDirs(names: readonly string[], self: DirOwner, state: (id: ProcessIdentity) => ProcessState): string[] {
  return names.filter((name) => {
    const owner = parseDirOwner(name);
    return owner !== null && judgeOwner(owner, self, self, state) === 'dead';
  });
}
