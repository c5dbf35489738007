/**
 * The cgroup v2 edge: the few file operations on cgroupfs that the cgroup backend needs. A process cannot
 * leave its cgroup without write access to another one, `cgroup.procs` lists exactly its members,
 * `cgroup.kill` ends them all in one write (kernel 5.14+) and `cgroup.events` says `populated 0` once the
 * last one is gone: the kernel's own statement, at a cost that follows the run, not the machine.
 */
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cgroupDirectory, cgroupName, cgroupOwner, parseCgroup2Mount, parseUnifiedCgroupPath } from './cgroup-paths.ts';
import { isLive, isSameProcess, type ProcessIdentity } from './proc-stat.ts';
import { readProcStat } from './proc-table.ts';

/** Why the cgroup backend is not used; the stable words the capabilities resource and `check` print. */
export const CGROUP_UNAVAILABLE_REASONS = [
  'no_cgroup2_mount',
  'not_in_cgroup2',
  'read_only',
  'not_writable',
  'no_kill',
  'forced_off',
  'platform',
] as const;
export type CgroupUnavailableReason = (typeof CGROUP_UNAVAILABLE_REASONS)[number];

export type CgroupDetection =
  | { readonly ok: true; readonly base: string; readonly kill: 'cgroup.kill' | 'freeze' }
  | { readonly ok: false; readonly reason: CgroupUnavailableReason; readonly detail: string };

export interface DetectInput {
  readonly mountinfo: string;
  readonly selfCgroup: string;
  readonly self: ProcessIdentity;
}

/**
 * Finds this process's own cgroup directory and proves it can hold a child cgroup that can be killed: a
 * trial child (named after this process) is created and removed at once, so nothing outlives the call.
 */
export function detectCgroup(input: DetectInput): CgroupDetection {
  const mount = parseCgroup2Mount(input.mountinfo);
  if (mount === null) return { ok: false, reason: 'no_cgroup2_mount', detail: 'no cgroup2 file system in the mount table' };
  const path = parseUnifiedCgroupPath(input.selfCgroup);
  const base = path === null ? null : cgroupDirectory(mount, path);
  if (base === null)
    return { ok: false, reason: 'not_in_cgroup2', detail: `this process's unified cgroup is not visible under ${mount.mountPoint}` };
  if (mount.readOnly) return { ok: false, reason: 'read_only', detail: `${mount.mountPoint} is mounted read-only` };
  try {
    accessSync(base, constants.W_OK);
    accessSync(join(base, 'cgroup.procs'), constants.W_OK);
  } catch {
    return { ok: false, reason: 'not_writable', detail: `${base} is not writable by this user (no delegated subtree)` };
  }
  const trial = join(base, cgroupName(input.self));
  try {
    mkdirSync(trial);
  } catch (error) {
    return {
      ok: false,
      reason: 'not_writable',
      detail: `cannot create a cgroup in ${base}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    };
  }
  try {
    if (existsSync(join(trial, 'cgroup.kill'))) return { ok: true, base, kill: 'cgroup.kill' };
    if (existsSync(join(trial, 'cgroup.freeze'))) return { ok: true, base, kill: 'freeze' };
    return { ok: false, reason: 'no_kill', detail: 'the kernel offers neither cgroup.kill nor cgroup.freeze' };
  } finally {
    removeCgroup(trial);
  }
}

/** Reads the inputs of detectCgroup for this process. */
export function detectOwnCgroup(self: ProcessIdentity): CgroupDetection {
  let mountinfo: string;
  let selfCgroup: string;
  try {
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
    selfCgroup = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return { ok: false, reason: 'no_cgroup2_mount', detail: '/proc/self/mountinfo or /proc/self/cgroup cannot be read' };
  }
  return detectCgroup({ mountinfo, selfCgroup, self });
}

/** Creates a cgroup; false when it cannot be (it may already exist: then it is not ours to reuse). */
export function createCgroup(dir: string): boolean {
  try {
    mkdirSync(dir);
    return true;
  } catch {
    return false;
  }
}

/** Moves process `pid` (all its threads) into `dir`; false when the kernel refused. */
export function moveIntoCgroup(dir: string, pid: number): boolean {
  try {
    writeFileSync(join(dir, 'cgroup.procs'), `${pid}\n`);
    return true;
  } catch {
    return false;
  }
}

/** The processes in `dir` now (zombies are not listed); null when the cgroup is gone or unreadable. */
export function cgroupMembers(dir: string): number[] | null {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'latin1')
      .split('\n')
      .filter((l) => l !== '')
      .map(Number);
  } catch {
    return null;
  }
}

/** `populated` of cgroup.events: true while any process is in the cgroup or below; null when gone. */
export function cgroupPopulated(dir: string): boolean | null {
  let text: string;
  try {
    text = readFileSync(join(dir, 'cgroup.events'), 'latin1');
  } catch {
    return null;
  }
  const match = /^populated (\d)$/m.exec(text);
  return match === null ? null : match[1] === '1';
}

/** `frozen` of cgroup.events (the freeze fallback waits for it); null when gone. */
export function cgroupFrozen(dir: string): boolean | null {
  try {
    const match = /^frozen (\d)$/m.exec(readFileSync(join(dir, 'cgroup.events'), 'latin1'));
    return match === null ? null : match[1] === '1';
  } catch {
    return null;
  }
}

/** SIGKILLs every process of the cgroup and its descendants in one write (kernel 5.14+). */
export function killCgroup(dir: string): boolean {
  try {
    writeFileSync(join(dir, 'cgroup.kill'), '1');
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGKILLs everything in the cgroup tree: one write of cgroup.kill, or (kernels before 5.14) freeze, SIGKILL
 * each member, thaw. A frozen member cannot run, so it cannot exit and free its pid between the listing and
 * the signal. Returns how many signals were sent (1 for cgroup.kill).
 */
export function killCgroupMembers(dir: string, how: 'cgroup.kill' | 'freeze'): number {
  if (how === 'cgroup.kill' && killCgroup(dir)) return 1;
  freezeCgroup(dir, true);
  let sent = 0;
  for (const pid of cgroupTreeMembers(dir)) {
    try {
      process.kill(pid, 'SIGKILL');
      sent++;
    } catch {
      // already gone
    }
  }
  freezeCgroup(dir, false);
  return sent;
}

/** Freezes (true) or thaws (false) the cgroup: frozen processes cannot fork, so a kill of each catches all. */
export function freezeCgroup(dir: string, frozen: boolean): boolean {
  try {
    writeFileSync(join(dir, 'cgroup.freeze'), frozen ? '1' : '0');
    return true;
  } catch {
    return false;
  }
}

/** Removes an empty cgroup; true when it is gone (already gone counts). */
export function removeCgroup(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** The cgroup a run's supervisor `owner` creates under `base`. */
export function runCgroupDir(base: string, owner: ProcessIdentity): string {
  return join(base, cgroupName(owner));
}

/** Whether the process `owner` names is alive (a zombie is not: it can act no more). */
export function ownerAlive(owner: ProcessIdentity): boolean {
  const stat = readProcStat(owner.pid);
  return stat !== null && isSameProcess(owner, stat) && isLive(stat);
}

/** How long a sweep waits for the processes of a dead owner's cgroup to die before it leaves it for later. */
export const SWEEP_WAIT_MS = 2000;

/**
 * Ends and removes one of our cgroups whose owner is dead: kills what is left in it and removes it once
 * empty. Resolves true when the directory is gone; false when something in it has not died in time (a
 * process in uninterruptible sleep): a later sweep tries again.
 */
export async function sweepCgroup(dir: string, waitMs: number = SWEEP_WAIT_MS): Promise<boolean> {
  const populated = cgroupPopulated(dir);
  if (populated === null) return removeCgroupTree(dir);
  if (populated) killCgroupMembers(dir, 'cgroup.kill');
  return (await waitUntilEmpty(dir, waitMs)) && removeCgroupTree(dir);
}

/** Sweeps every cgroup of ours under `base` whose owner is dead; resolves with how many were removed. */
export async function sweepDeadCgroups(base: string, alive: (owner: ProcessIdentity) => boolean = ownerAlive): Promise<number> {
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return 0;
  }
  const dead = names.filter((name) => {
    const owner = cgroupOwner(name);
    return owner !== null && !alive(owner);
  });
  const removed = await Promise.all(dead.map((name) => sweepCgroup(join(base, name))));
  return removed.filter(Boolean).length;
}

/** Every process in `dir` and in cgroups below it (a delegated run may create its own children). */
export function cgroupTreeMembers(dir: string): number[] {
  const out = cgroupMembers(dir) ?? [];
  for (const child of childCgroups(dir)) out.push(...cgroupTreeMembers(child));
  return out;
}

/** Removes `dir` and any cgroups below it, deepest first; true when `dir` is gone. */
export function removeCgroupTree(dir: string): boolean {
  for (const child of childCgroups(dir)) removeCgroupTree(child);
  return removeCgroup(dir);
}

function childCgroups(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(dir, e.name));
  } catch {
    return [];
  }
}

/** Polls between inotify events too: a lost notification costs at most this long. */
const EMPTY_POLL_MS = 50;

/**
 * Resolves true once the cgroup holds no process (`populated 0`, or it is gone) and `alsoDone()` holds,
 * false when `timeoutMs` passes first. Watches cgroup.events (the kernel signals every change of it).
 */
export function waitUntilEmpty(dir: string, timeoutMs: number, alsoDone: () => boolean = () => true): Promise<boolean> {
  const empty = (): boolean => cgroupPopulated(dir) !== true && alsoDone();
  if (empty()) return Promise.resolve(true);
  return new Promise((resolve) => {
    let watcher: ReturnType<typeof import('node:fs').watch> | null = null;
    const finish = (value: boolean): void => {
      clearInterval(poll);
      clearTimeout(deadline);
      watcher?.close();
      resolve(value);
    };
    const check = (): void => {
      if (empty()) finish(true);
    };
    try {
      watcher = process.getBuiltinModule('node:fs').watch(join(dir, 'cgroup.events'), check);
      watcher.on('error', () => {});
    } catch {
      watcher = null;
    }
    // Ref'd on purpose: after control EOF these waits may be all that keeps the supervisor alive.
    const poll = setInterval(check, EMPTY_POLL_MS);
    const deadline = setTimeout(() => finish(empty()), timeoutMs);
    check();
  });
}
