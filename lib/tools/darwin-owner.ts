/**
 * The darwin path's owner identity (no /proc, no pid namespaces, no boot id): the one pid space is named "0"
 * (a Linux pid namespace is an inode number, never 0) with a boot tag of zeros, and the start is the process's
 * start in whole seconds since the epoch. A process knows its own without reading anything (the clock less its
 * uptime).
 */
import type { OwnerIdentity } from '../process/owner.ts';

export const DARWIN_PID_SPACE = { pidNamespace: '0', boot: '0'.repeat(16) } as const;

/** This process as owner on the darwin path, from its own clock: known at once, before any ps table. */
export function darwinSelfOwner(nowMs: number, uptimeS: number, pid: number): OwnerIdentity {
  return { ...DARWIN_PID_SPACE, pid, start: String(Math.floor((nowMs - uptimeS * 1000) / 1000)) };
}
