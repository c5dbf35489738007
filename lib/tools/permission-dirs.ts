/**
 * The effect behind the private directories of run brokers (lib/permission/private-dir.ts): the sweep a
 * server makes when it starts, which removes the directories of servers that were killed before they could
 * remove their own. Who owns what is read from /proc by lib/process/proc-table.ts.
 */
import { lstatSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { processState, selfOwner } from '../process/proc-table.ts';
import { orphanedDirs, PRIVATE_DIR_PREFIX, type DirOwner } from '../permission/private-dir.ts';

/**
 * Removes, under `baseDir`, the private directories whose owning server is provably gone, and returns
 * their names. Only real directories of this user are considered (never a symlink, never another user's).
 */
export function sweepOrphanedPermissionDirs(baseDir: string, self: DirOwner | null = selfOwner()): string[] {
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
  const orphaned = orphanedDirs(mine, self, processState);
  for (const name of orphaned) rmSync(join(baseDir, name), { recursive: true, force: true });
  return orphaned;
}
