// lib's own readers of /proc and cgroupfs, for the runner: the product and its spec runner share one reader of a
// stat line, one parser of the cgroup2 mount, and one cgroup tree walk. The runner is plain node, which cannot import
// .ts, so these lib modules are loaded through tsx's require hook, registered only for that load: synchronous
// and in this thread (tsx's import hook runs in a worker: measured 4 times dearer), on first use only, so
// `--list` loads nothing.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

const require = createRequire(import.meta.url);

/** @type {any} */
let loaded = null;

function lib() {
  if (loaded !== null) return loaded;
  const { register } = require('tsx/cjs/api');
  const unregister = register();
  try {
    loaded = {
      ...require('../lib/process/proc-stat.ts'),
      ...require('../lib/process/proc-table.ts'),
      ...require('../lib/process/cgroup-paths.ts'),
      ...require('../lib/process/cgroup.ts'),
    };
  } finally {
    unregister();
  }
  return loaded;
}

/**
 * @typedef {{ pid: number, state: string, ppid: number, pgid: number, sid: number, start: string }} ProcStat
 * @typedef {{ pid: number, start: string }} ProcessIdentity
 */

/** @returns {ProcStat | null} the stat of `pid`, read and parsed by lib; null when it is gone, unreadable or malformed. */
export const readStat = (pid) => lib().readProcStat(pid);
/** @returns {string | null} this process's pid namespace and boot as one key; null where /proc cannot say (or is another namespace's). */
export function pidSpaceKey() {
  const space = lib().ownPidSpace();
  return space === null ? null : `${space.pidNamespace} ${space.boot}`;
}

/** @returns {boolean} whether the process `id` names still holds its pid (a zombie does: its pid is not free yet). */
export function holdsPid(id) {
  return lib().isSameProcess(id, readStat(id.pid));
}

/** @returns {string | null} this process's unified cgroup directory; null without a visible cgroup2 mount. */
export function ownCgroupDir() {
  let mountinfo;
  let self;
  try {
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
    self = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return null;
  }
  const { parseCgroup2Mount, parseUnifiedCgroupPath, cgroupDirectory } = lib();
  const path = parseUnifiedCgroupPath(self);
  // The path lets the parser pick the mount that shows this cgroup where several cgroup2 mounts are listed.
  const mount = path === null ? null : parseCgroup2Mount(mountinfo, path);
  return mount === null ? null : cgroupDirectory(mount, path);
}

/** @returns {number[]} every live process in the cgroup and below (the kernel lists no zombie). */
export const cgroupTreeMembers = (dir) => lib().cgroupTreeMembers(dir);
/** @returns {boolean} SIGKILL to every process in the cgroup tree, in one write; false when the write failed. */
export const killCgroup = (dir) => lib().killCgroup(dir);
/** @returns {boolean} removes an emptied cgroup tree, children first; true when nothing of it is left. */
export const removeCgroupTree = (dir) => lib().removeCgroupTree(dir);
/** @returns {boolean} makes a cgroup; false when it cannot be (or already exists). */
// lib's createCgroup answers null when it made the cgroup, else the errno code that refused it.
export const createCgroup = (dir) => lib().createCgroup(dir) === null;
/** @returns {boolean} moves `pid` into the cgroup; false when the kernel refused. */
export const moveIntoCgroup = (dir, pid) => lib().moveIntoCgroup(dir, pid);
