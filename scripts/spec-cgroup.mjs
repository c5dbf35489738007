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
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** The directory of this process's unified cgroup, or null when cgroup v2 is not mounted or not readable. */
function ownCgroupDir() {
  let mountinfo;
  let self;
  try {
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
    self = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return null;
  }
  const mount = mountinfo
    .split('\n')
    .map((line) => line.split(' - '))
    .find((parts) => parts[1]?.startsWith('cgroup2 '));
  const path = /^0::(\/.*)$/m.exec(self)?.[1];
  if (mount === undefined || path === undefined || path.endsWith(' (deleted)')) return null;
  const [, , , mountRoot, mountPoint] = mount[0].split(' ');
  if (mountRoot === undefined || mountPoint === undefined || !path.startsWith(mountRoot)) return null;
  const rest = path.slice(mountRoot === '/' ? 0 : mountRoot.length);
  return rest === '/' ? mountPoint : join(mountPoint, rest);
}

/**
 * The run's parent cgroup, made now; null where none can be made (the runner then reaps by /proc marks only).
 * @returns {{ dir: string } | null}
 */
export function openRunCgroup(runId) {
  const own = ownCgroupDir();
  if (own === null) return null;
  const dir = join(own, `crm-spec-${runId}`);
  try {
    mkdirSync(dir);
    if (!existsSync(join(dir, 'cgroup.kill'))) throw new Error('no cgroup.kill');
  } catch {
    try {
      rmdirSync(dir);
    } catch {
      /* never made */
    }
    return null;
  }
  return { dir };
}

/** Moves the file's root process into a cgroup of its own; null when the kernel refused (the /proc marks remain). */
export function enterFileCgroup(run, index, pid) {
  if (run === null) return null;
  const dir = join(run.dir, `f${index}`);
  try {
    mkdirSync(dir);
    writeFileSync(join(dir, 'cgroup.procs'), `${pid}\n`);
    return dir;
  } catch {
    removeTree(dir);
    return null;
  }
}

/** Every live process in the cgroup and below (the kernel lists no zombie). */
export function cgroupTreeMembers(dir) {
  const pids = [];
  const visit = (d) => {
    try {
      for (const line of readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n')) if (line !== '') pids.push(Number(line));
      for (const entry of readdirSync(d, { withFileTypes: true })) if (entry.isDirectory()) visit(join(d, entry.name));
    } catch {
      /* removed while read */
    }
  };
  visit(dir);
  return pids;
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

/** SIGKILL to every process in the cgroup tree, in one write; false when the write failed. */
export function cgroupKill(dir) {
  try {
    writeFileSync(join(dir, 'cgroup.kill'), '1');
    return true;
  } catch {
    return false;
  }
}

/** Removes an emptied cgroup tree, children first; true when nothing of it is left. */
export function removeTree(dir) {
  try {
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) removeTree(join(dir, entry.name));
    rmdirSync(dir);
    return true;
  } catch (error) {
    return error.code === 'ENOENT';
  }
}

const REMOVE_RETRY_MS = 50;

/**
 * removeTree, retried until `deadlineMs` passes: the kernel may still count a killed process as a member a
 * moment after it left /proc's live list (rmdir answers EBUSY until its exit is complete).
 */
export async function removeTreeWithin(dir, deadlineMs) {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (removeTree(dir)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(REMOVE_RETRY_MS);
  }
}
