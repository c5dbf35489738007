/**
 * The effects behind the private directories of run brokers (lib/permission/private-dir.ts): who this
 * server is (read once, at its first ask_host run) and the sweep a server makes when it starts, which
 * removes the directories of servers that were killed before they could remove their own. Linux reads
 * /proc; the darwin path names owners and judges them from one `ps` table (psDirOwner, psOwnerState).
 */
import { lstatSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isLive, parseProcStat } from '../process/proc-stat.ts';
import { readProcFile } from '../process/proc-table.ts';
import type { PsRow } from '../process/ps-table.ts';
import { orphanedDirs, PRIVATE_DIR_PREFIX, type DirOwner, type OwnerState } from '../permission/private-dir.ts';

/** This process as the owner of its brokers' directories; null when /proc cannot say (names stay anonymous). */
export function selfDirOwner(): DirOwner | null {
  try {
    const namespace = /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'));
    const stat = parseProcStat(readProcFile(`/proc/${process.pid}/stat`));
    return namespace === null || stat === null ? null : { pidNamespace: namespace[1]!, pid: process.pid, start: stat.start };
  } catch {
    return null;
  }
}

/**
 * The darwin path's owner identity (no /proc, no pid namespaces): the one pid space is named "0" (a Linux pid
 * namespace is an inode number, never 0), the start is the second `ps` shows (lstart) as 14 digits. One
 * second resolves less than /proc's clock ticks: a pid recycled within the same second reads as the owner
 * still alive, so its directory is kept (the safe side). Across a reboot the start seconds differ.
 */
export const DARWIN_PID_SPACE = '0';

/** This process as owner, from a complete ps table; null when ps shows it without a start. */
export function psDirOwner(rows: readonly PsRow[], pid: number): DirOwner | null {
  const start = rows.find((row) => row.pid === pid)?.start;
  return start == null ? null : { pidNamespace: DARWIN_PID_SPACE, pid, start: start.lstart.replace(/\D/g, '') };
}

/** Pure: an owner's state by a complete ps table: gone when no row has its pid, its row starts another second, or it is a zombie. */
export function psOwnerState(rows: readonly PsRow[]): (owner: DirOwner) => OwnerState {
  const byPid = new Map(rows.map((row) => [row.pid, row]));
  return (owner) => {
    const row = byPid.get(owner.pid);
    if (row === undefined) return 'gone';
    if (row.start === null) return 'unknown';
    return row.start.lstart.replace(/\D/g, '') === owner.start && !row.stat.startsWith('Z') ? 'alive' : 'gone';
  };
}

/** Gone only when /proc says so: no such pid, another process under it, or a zombie. Unreadable is unknown. */
function ownerState(owner: DirOwner): OwnerState {
  let text: string;
  try {
    text = readProcFile(`/proc/${owner.pid}/stat`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ESRCH' ? 'gone' : 'unknown';
  }
  const stat = parseProcStat(text);
  if (stat === null) return 'unknown';
  return stat.start === owner.start && isLive(stat) ? 'alive' : 'gone';
}

/**
 * Removes, under `baseDir`, the private directories whose owning server is provably gone, and returns
 * their names. Only real directories of this user are considered (never a symlink, never another user's).
 */
export function sweepOrphanedPermissionDirs(
  baseDir: string,
  self: DirOwner | null = selfDirOwner(),
  stateOf: (owner: DirOwner) => OwnerState = ownerState,
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
