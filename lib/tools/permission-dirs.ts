/**
 * The effects behind the private directories of run brokers (lib/permission/private-dir.ts): the sweep a
 * server makes when it starts, which removes the directories of servers that were killed before they could
 * remove their own. On Linux who owns what is read from /proc by lib/process/proc-table.ts; the darwin path
 * names owners and judges them from one `ps` table (psDirOwner, psOwnerState).
 */
import { lstatSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { processState, selfOwner } from '../process/proc-table.ts';
import type { ProcessIdentity } from '../process/proc-stat.ts';
import type { ProcessState } from '../process/owner.ts';
import type { PsRow } from '../process/ps-table.ts';
import { orphanedDirs, PRIVATE_DIR_PREFIX, type DirOwner } from '../permission/private-dir.ts';

/**
 * The darwin path's owner identity (no /proc, no pid namespaces, no boot id): the one pid space is named "0"
 * (a Linux pid namespace is an inode number, never 0) with a boot tag of zeros, and the start is the second
 * `ps` shows (lstart) as 14 digits. One second resolves less than /proc's clock ticks: a pid recycled within
 * the same second reads as the owner still alive, so its directory is kept (the safe side). Across a reboot
 * the start seconds differ.
 */
export const DARWIN_PID_SPACE = { pidNamespace: '0', boot: '0'.repeat(16) } as const;

/** This process as owner, from a complete ps table; null when ps shows it without a start. */
export function psDirOwner(rows: readonly PsRow[], pid: number): DirOwner | null {
  const start = rows.find((row) => row.pid === pid)?.start;
  return start == null ? null : { ...DARWIN_PID_SPACE, pid, start: start.lstart.replace(/\D/g, '') };
}

/** Pure: an owner's state by a complete ps table: gone when no row has its pid, its row starts another second, or it is a zombie. */
export function psOwnerState(rows: readonly PsRow[]): (id: ProcessIdentity) => ProcessState {
  const byPid = new Map(rows.map((row) => [row.pid, row]));
  return (id) => {
    const row = byPid.get(id.pid);
    if (row === undefined) return 'gone';
    if (row.start === null) return 'unknown';
    return row.start.lstart.replace(/\D/g, '') === id.start && !row.stat.startsWith('Z') ? 'alive' : 'gone';
  };
}

/**
 * Removes, under `baseDir`, the private directories whose owning server is provably gone, and returns
 * their names. Only real directories of this user are considered (never a symlink, never another user's).
 */
export function sweepOrphanedPermissionDirs(
  baseDir: string,
  self: DirOwner | null = selfOwner(),
  stateOf: (id: ProcessIdentity) => ProcessState = processState,
): string[] {
  if (self === null) return [];
  let names: string[];
  try {
    names = readdirSync(baseDir).filter((name) => name.startsWith(PRIVATE_DIR_PREFIX));
  } catch {
    return [];
  }
  const uid = process.getuid?.() ?? -1;
  const mine = names.filter((name) => {
    try {
      const st = lstatSync(join(baseDir, name));
      return st.isDirectory() && st.uid === uid;
    } catch {
      return false;
    }
  });
  const orphaned = orphanedDirs(mine, self, stateOf);
  for (const name of orphaned) rmSync(join(baseDir, name), { recursive: true, force: true });
  return orphaned;
}
