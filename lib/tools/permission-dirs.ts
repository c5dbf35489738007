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
 * (a Linux pid namespace is an inode number, never 0) with a boot tag of zeros, and the start is the process's
 * start in whole seconds since the epoch. A process knows its own without reading anything (the clock less its
 * uptime); `ps` shows others' to the second (lstart). The two may differ by a second of rounding, so a start
 * within DARWIN_START_SLACK_S of the owner's counts as the owner's: a pid recycled within that second reads as
 * the owner still alive, and its directory is kept (the safe side). Across a reboot the starts differ.
 */
export const DARWIN_PID_SPACE = { pidNamespace: '0', boot: '0'.repeat(16) } as const;
export const DARWIN_START_SLACK_S = 1;

/** This process as owner on the darwin path, from its own clock: known at once, before any ps table. */
export function darwinSelfOwner(nowMs: number, uptimeS: number, pid: number): DirOwner {
  return { ...DARWIN_PID_SPACE, pid, start: String(Math.floor((nowMs - uptimeS * 1000) / 1000)) };
}

/** A ps row's start in whole seconds since the epoch (lstart is local time); null when ps showed none. */
function rowStartS(row: PsRow): number | null {
  if (row.start === null) return null;
  const ms = new Date(row.start.lstart).getTime();
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : null;
}

/** Pure: an owner's state by a complete ps table: gone when no row has its pid, its row starts another second, or it is a zombie. */
export function psOwnerState(rows: readonly PsRow[]): (id: ProcessIdentity) => ProcessState {
  const byPid = new Map(rows.map((row) => [row.pid, row]));
  return (id) => {
    const row = byPid.get(id.pid);
    if (row === undefined) return 'gone';
    const started = rowStartS(row);
    if (started === null) return 'unknown';
    const same = Math.abs(started - Number(id.start)) <= DARWIN_START_SLACK_S;
    return same && !row.stat.startsWith('Z') ? 'alive' : 'gone';
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
