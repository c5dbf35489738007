/**
 * The run's own cgroup, as the supervisor holds it. Every process of the run is born inside it: the
 * supervisor steps into the cgroup for the instant of each spawn (fork copies the cgroup) and steps back to
 * where it came from, so the cgroup holds exactly the run's processes and never the supervisor, and
 * cgroup.kill can end them all without ending the one process that reports.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createCgroup, moveIntoCgroup, runCgroupDir } from '../../process/cgroup.ts';
import type { ProcessIdentity } from '../../process/proc-stat.ts';

export interface CgroupScope {
  readonly dir: string;
  /** The cgroup the supervisor lives in, and returns to after each spawn. */
  readonly base: string;
  /** 'freeze' where the kernel lacks cgroup.kill (before 5.14). */
  readonly kill: 'cgroup.kill' | 'freeze';
  /**
   * Runs `spawn` (a synchronous fork and exec) with the supervisor inside the run's cgroup. null when the
   * kernel refused the step in: `spawn` was not called.
   */
  spawnInside<T>(spawn: () => T): T | null;
  /** True once the supervisor could not step back out: cgroup.kill would then end the supervisor too. */
  stuckInside(): boolean;
}

/** Creates the run's cgroup under `base`, named after the supervisor; else the errno code that refused it. */
export function openCgroupScope(
  base: string,
  self: ProcessIdentity,
): { readonly ok: true; readonly scope: CgroupScope } | { readonly ok: false; readonly dir: string; readonly code: string } {
  const dir = runCgroupDir(base, self);
  if (dir === null) return { ok: false, dir: base, code: 'no_pid_namespace' };
  const refused = createCgroup(dir);
  if (refused !== null) return { ok: false, dir, code: refused };
  let stuck = false;
  const scope: CgroupScope = {
    dir,
    base,
    kill: existsSync(join(dir, 'cgroup.kill')) ? 'cgroup.kill' : 'freeze',
    spawnInside(spawn) {
      if (!moveIntoCgroup(dir, self.pid)) return null;
      try {
        return spawn();
      } finally {
        if (!moveIntoCgroup(base, self.pid)) stuck = true;
      }
    },
    stuckInside: () => stuck,
  };
  return { ok: true, scope };
}
