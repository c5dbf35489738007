// A cgroup v2 per spec file, where the runner may make one: the cgroup edge of scripts/run-specs.mjs.
//
// The /proc marks of spec-reap.mjs find a file's processes by what they carry; a process that re-spawns into
// a new session every few ms (spec/faults/respawn-load.process.test.ts) outruns every scan, and a file killed
// at its deadline could leave such a chain running for good. A cgroup holds every descendant however it
// moves: `cgroup.kill` ends them all in one write and `populated 0` says they are gone. The kernel also keeps
// the file's CPU time (cpu.stat), which the runner reports per file.
//
// Layout: <runner's own cgroup>/crm-spec-<run id>/f<job index>. The product's own cgroup backend makes its
// run cgroups under the cgroup it sits in, so a file's runs nest inside the file's cgroup and end with it.
// Where no cgroup can be made (no cgroup2, no write access), every call here is a no-op and the /proc marks
// stay the only reaper, as before.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createCgroup, moveIntoCgroup, ownCgroupDir, removeCgroupTree } from './spec-lib.mjs';

export { cgroupTreeMembers, killCgroup } from './spec-lib.mjs';

/**
 * The run's parent cgroup, made now; null where none can be made (the runner then reaps by /proc marks only).
 * @returns {{ dir: string } | null}
 */
export function openRunCgroup(runId) {
  const own = ownCgroupDir();
  if (own === null) return null;
  const dir = join(own, `crm-spec-${runId}`);
  if (!createCgroup(dir)) return null;
  if (existsSync(join(dir, 'cgroup.kill'))) return { dir };
  removeCgroupTree(dir);
  return null;
}

/** Moves the file's root process into a cgroup of its own; null when the kernel refused (the /proc marks remain). */
export function enterFileCgroup(run, index, pid) {
  if (run === null) return null;
  const dir = join(run.dir, `f${index}`);
  if (createCgroup(dir) && moveIntoCgroup(dir, pid)) return dir;
  removeCgroupTree(dir);
  return null;
}

/** CPU seconds everything in the cgroup used so far (descendants included, the gone ones too); null when unread. */
export function cpuSeconds(dir) {
  try {
    const match = /^usage_usec (\d+)$/m.exec(readFileSync(join(dir, 'cpu.stat'), 'utf8'));
    return match === null ? null : Number(match[1]) / 1e6;
  } catch {
    return null;
  }
}

const REMOVE_RETRY_MS = 50;

/**
 * removeCgroupTree, retried until `deadlineMs` passes: the kernel may still count a killed process as a member a
 * moment after it left /proc's live list (rmdir answers EBUSY until its exit is complete).
 */
export async function removeTreeWithin(dir, deadlineMs) {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (removeCgroupTree(dir)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(REMOVE_RETRY_MS);
  }
}
