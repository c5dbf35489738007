/**
 * The cgroup v2 edge: the few file operations on cgroupfs that the cgroup backend needs. A process cannot
 * leave its cgroup without write access to another one, `cgroup.procs` lists exactly its members,
 * `cgroup.kill` ends them all in one write (kernel 5.14+) and `cgroup.events` says `populated 0` once the
 * last one is gone: the kernel's own statement, at a cost that follows the run, not the machine.
 */
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  cgroupDirectory,
  cgroupName,
  hasCgroup2Mount,
  parseCgroup2Mount,
  parseUnifiedCgroupPath,
  planCgroupSweep,
  type CgroupSweep,
} from './cgroup-paths.ts';
import type { OwnerIdentity, PidSpace, ProcessState } from './owner.ts';
import type { ProcessIdentity } from './proc-stat.ts';
import { ownPidSpace, processState } from './proc-table.ts';
import { cgroupPopulation, readEventsField, waitForEvents, waitUntilEmpty } from './cgroup-events.ts';

export { cgroupPopulation, waitUntilEmpty, type CgroupPopulation } from './cgroup-events.ts';

/** Why the cgroup backend is not used; the stable words the capabilities resource and `check` print. */
export const CGROUP_UNAVAILABLE_REASONS = [
  'no_cgroup2_mount',
  'not_in_cgroup2',
  'read_only',
  'not_writable',
  'no_kill',
  'forced_off',
  'platform',
  'proc_foreign',
] as const;
export type CgroupUnavailableReason = (typeof CGROUP_UNAVAILABLE_REASONS)[number];

export type CgroupDetection =
  | { readonly ok: true; readonly base: string; readonly kill: 'cgroup.kill' | 'freeze' }
  | { readonly ok: false; readonly reason: CgroupUnavailableReason; readonly detail: string };

export interface DetectInput {
  readonly mountinfo: string;
  readonly selfCgroup: string;
  readonly self: OwnerIdentity;
}

/**
 * Finds this process's own cgroup directory and proves it can hold a child cgroup that can be killed: a
 * trial child (named after this process) is created and removed at once, so nothing outlives the call.
 */
export function detectCgroup(input: DetectInput): CgroupDetection {
  if (!hasCgroup2Mount(input.mountinfo))
    return { ok: false, reason: 'no_cgroup2_mount', detail: 'no cgroup2 file system in the mount table' };
  const path = parseUnifiedCgroupPath(input.selfCgroup);
  const mount = path === null ? null : parseCgroup2Mount(input.mountinfo, path);
  const base = mount === null || path === null ? null : cgroupDirectory(mount, path);
  if (mount === null || base === null)
    return { ok: false, reason: 'not_in_cgroup2', detail: "this process's unified cgroup is not visible under any cgroup2 mount" };
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

/** Reads the inputs of detectCgroup for this process (`self`: this process in its pid space). */
export function detectOwnCgroup(self: OwnerIdentity): CgroupDetection {
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

/** Creates a cgroup: null when made, else the errno code that refused it (EEXIST: it is not ours to reuse). */
export function createCgroup(dir: string): string | null {
  try {
    mkdirSync(dir);
    return null;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'error';
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

/**
 * The processes in `dir` now (zombies are not listed); null when the cgroup is gone or unreadable. A threaded
 * cgroup refuses cgroup.procs (ENOTSUP) and lists thread ids in cgroup.threads: a signal to any of them
 * reaches its whole process.
 */
export function cgroupMembers(dir: string): number[] | null {
  try {
    return readIdList(join(dir, 'cgroup.procs'));
  } catch (error) {
    // libuv names errno 95 ENOTSUP (EOPNOTSUPP is the same number on Linux).
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') return null;
  }
  try {
    return readIdList(join(dir, 'cgroup.threads'));
  } catch {
    return null;
  }
}

function readIdList(path: string): number[] {
  return readFileSync(path, 'latin1')
    .split('\n')
    .filter((l) => l !== '')
    .map(Number);
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

/** How long the freeze fallback waits for `frozen 1` before it signals the members anyway. */
export const FREEZE_WAIT_MS = 500;

/**
 * The kill that was actually done: the one write of cgroup.kill, or the freeze fallback (`frozen`: whether
 * the kernel said `frozen 1` within its bound before the members were signalled; `signalled`: SIGKILLs sent).
 */
export type CgroupKill = { readonly how: 'cgroup.kill' } | { readonly how: 'freeze'; readonly frozen: boolean; readonly signalled: number };

/**
 * SIGKILLs everything in the cgroup tree: one write of cgroup.kill, or (kernels before 5.14, and threaded
 * cgroups, where the write is refused) freeze, wait for `frozen 1`, SIGKILL each member, thaw. A frozen
 * member cannot run, so it cannot fork or exit and free its pid between the listing and the signal.
 */
export async function killCgroupMembers(
  dir: string,
  how: 'cgroup.kill' | 'freeze',
  freezeWaitMs: number = FREEZE_WAIT_MS,
): Promise<CgroupKill> {
  if (how === 'cgroup.kill' && killCgroup(dir)) return { how: 'cgroup.kill' };
  // A refused freeze write has nothing to wait for.
  try {
    const frozen = freezeCgroup(dir, true) && (await waitForEvents(dir, freezeWaitMs, () => readEventsField(dir, 'frozen') === true));
    // Only a frozen member keeps its pid until the kill; unfrozen, a listed pid may be reused by anyone by then.
    // A member outside this pid namespace is listed as 0, which process.kill would take for our own group.
    const pids = frozen ? cgroupTreeMembers(dir).filter((pid) => Number.isSafeInteger(pid) && pid > 0) : [];
    let signalled = 0;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        signalled++;
      } catch {
        // already gone
      }
    }
    return { how: 'freeze', frozen, signalled };
  } finally {
    freezeCgroup(dir, false);
  }
}

/** The ladder's name for a kill: `cgroup.kill`, or `cgroup.freeze:SIGKILL:<n>` (`:unfrozen` when the freeze did not take). */
export function describeCgroupKill(kill: CgroupKill): string {
  if (kill.how === 'cgroup.kill') return 'cgroup.kill';
  return `cgroup.freeze${kill.frozen ? '' : ':unfrozen'}:SIGKILL:${kill.signalled}`;
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
  return rmdirOutcome(dir) === 'removed';
}

type RmdirOutcome = 'removed' | 'busy' | 'failed';

function rmdirOutcome(dir: string): RmdirOutcome {
  try {
    rmdirSync(dir);
    return 'removed';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'removed';
    return code === 'EBUSY' || code === 'ENOTEMPTY' ? 'busy' : 'failed';
  }
}

/**
 * The cgroup a run's supervisor `owner` creates under `base`. The owner is this process or a child of it,
 * so of this pid space; null when /proc cannot say which that is (no cgroup is then made or looked for).
 */
export function runCgroupDir(base: string, owner: ProcessIdentity): string | null {
  const space = ownPidSpace();
  return space === null ? null : join(base, cgroupName({ ...space, pid: owner.pid, start: owner.start }));
}

/** How long a sweep waits for the processes of a dead owner's cgroup to die before it leaves it for later. */
export const SWEEP_WAIT_MS = 2000;

/**
 * Ends and removes one of our cgroups whose owner is dead: kills what is left in it and removes it once
 * empty. Resolves true when the directory is gone; false when something in it has not died in time (a
 * process in uninterruptible sleep): a later sweep tries again.
 */
export async function sweepCgroup(dir: string, waitMs: number = SWEEP_WAIT_MS): Promise<boolean> {
  const population = cgroupPopulation(dir);
  if (population === 'gone') return true;
  // Unreadable is not empty: kill all the same, and only a readable `populated 0` lets it be removed.
  if (population !== 'empty') await killCgroupMembers(dir, 'cgroup.kill');
  return (await waitUntilEmpty(dir, waitMs)) && removeCgroupTreeSettled(dir);
}

/**
 * Sweeps every cgroup of ours under `base` whose owner is provably dead, and says what it removed and what
 * it left. Without this process's pid space nothing can be proved: everything is left, as `unknown`.
 */
export async function sweepDeadCgroups(
  base: string,
  here: PidSpace | null = ownPidSpace(),
  state: (id: ProcessIdentity) => ProcessState = processState,
): Promise<CgroupSweep> {
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return { removed: [], kept: [] };
  }
  const plan = planCgroupSweep(names, here, null, state);
  const swept = await Promise.all(plan.dead.map((name) => sweepCgroup(join(base, name))));
  const notEmptied = plan.dead.filter((_, i) => !swept[i]).map((name) => ({ name, reason: 'not_emptied' as const }));
  return { removed: plan.dead.filter((_, i) => swept[i]), kept: [...plan.kept, ...notEmptied] };
}

/** Every process in `dir` and in cgroups below it (a delegated run may create its own children). */
export function cgroupTreeMembers(dir: string): number[] {
  const out = cgroupMembers(dir) ?? [];
  for (const child of childCgroups(dir)) out.push(...cgroupTreeMembers(child));
  return out;
}

/** Removes `dir` and any cgroups below it, deepest first; true when `dir` is gone. */
export function removeCgroupTree(dir: string): boolean {
  return removeTreeOutcome(dir) === 'removed';
}

function removeTreeOutcome(dir: string): RmdirOutcome {
  for (const child of childCgroups(dir)) removeTreeOutcome(child);
  return rmdirOutcome(dir);
}

/**
 * How long removal of an emptied cgroup tree retries EBUSY: the kernel lets the directory go a moment after
 * `populated 0`, once the last member is fully released.
 */
export const RMDIR_RETRY_MS = 1000;
const RMDIR_POLL_MS = 10;

/** removeCgroupTree, retried while the kernel says EBUSY, for at most `retryMs`; true when `dir` is gone. */
export async function removeCgroupTreeSettled(dir: string, retryMs: number = RMDIR_RETRY_MS): Promise<boolean> {
  const deadline = performance.now() + retryMs;
  for (;;) {
    const outcome = removeTreeOutcome(dir);
    if (outcome !== 'busy' || performance.now() >= deadline) return outcome === 'removed';
    await process.getBuiltinModule('node:timers/promises').setTimeout(Math.max(1, Math.min(RMDIR_POLL_MS, deadline - performance.now())));
  }
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
