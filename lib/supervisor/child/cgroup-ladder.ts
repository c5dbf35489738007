/**
 * The termination ladder over the run's cgroup: SIGINT to the native process (it then writes a final
 * result), SIGTERM to the group and to every other member of the cgroup (identity-checked), then cgroup.kill
 * (or freeze and SIGKILL each), and the kernel's `populated 0` plus the cgroup's removal as the proof. No
 * /proc scan of the machine: every step costs what the run holds.
 */
import { cgroupPopulated, cgroupTreeMembers, killCgroupMembers, removeCgroupTree, waitUntilEmpty } from '../../process/cgroup.ts';
import { identityOf, isLive } from '../../process/proc-stat.ts';
import { readProcStat } from '../../process/proc-table.ts';
import { signalGroup, signalIdentity } from '../../process/kill.ts';
import type { ProcessIdentity } from '../protocol.ts';
import type { CgroupScope } from './cgroup-scope.ts';
import type { LadderOptions, LadderOutcome } from './ladder.ts';

export interface CgroupLadderTarget {
  readonly selfPid: number;
  readonly groupMode: boolean;
  readonly scope: CgroupScope;
  nativeExited(): boolean;
  interruptNative(): void;
}

export async function runCgroupLadder(target: CgroupLadderTarget, options: Omit<LadderOptions, 'pollMs'>): Promise<LadderOutcome> {
  const { scope } = target;
  const steps: string[] = [];
  const done = (): boolean => target.nativeExited() && cgroupPopulated(scope.dir) !== true;
  if (options.interrupt && !target.nativeExited()) {
    target.interruptNative();
    steps.push('SIGINT:native');
    await waitFor(target.nativeExited, options.interruptGraceMs);
  }
  if (!done()) {
    if (target.groupMode && signalGroup(target.selfPid, 'SIGTERM') === 'sent') steps.push('SIGTERM:group');
    steps.push(`SIGTERM:${signalMembers(scope.dir, target.selfPid)}`);
    await waitUntilEmpty(scope.dir, options.termGraceMs, target.nativeExited);
  }
  if (!done()) {
    steps.push(killStep(target));
    const deadline = performance.now() + options.killGraceMs;
    // Freezing lets a fork in flight finish into the frozen cgroup: repeat until nothing is left.
    while (
      !(await waitUntilEmpty(scope.dir, Math.min(KILL_ROUND_MS, Math.max(0, deadline - performance.now())), target.nativeExited)) &&
      performance.now() < deadline
    ) {
      if (target.scope.kill === 'freeze') killCgroupMembers(scope.dir, 'freeze');
    }
  }
  return proveEmpty(target, steps);
}

/** How often the SIGINT step looks whether the native process has exited (no scan: a flag). */
const EXIT_POLL_MS = 20;

async function waitFor(condition: () => boolean, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  while (!condition() && performance.now() < deadline) {
    await process.getBuiltinModule('node:timers/promises').setTimeout(Math.max(1, Math.min(EXIT_POLL_MS, deadline - performance.now())));
  }
}

/** One round of the freeze fallback waits this long before it kills again. */
const KILL_ROUND_MS = 100;

function killStep(target: CgroupLadderTarget): string {
  if (target.scope.stuckInside()) return 'cgroup.kill:skipped';
  const sent = killCgroupMembers(target.scope.dir, target.scope.kill);
  return target.scope.kill === 'cgroup.kill' ? 'cgroup.kill' : `cgroup.freeze:SIGKILL:${sent}`;
}

/** SIGTERM to each live member outside the supervisor's own group (the group signal reached those). */
function signalMembers(dir: string, selfPid: number): number {
  let sent = 0;
  for (const pid of cgroupTreeMembers(dir)) {
    const stat = readProcStat(pid);
    if (stat === null || !isLive(stat) || stat.pid === selfPid || stat.pgid === selfPid) continue;
    if (signalIdentity(identityOf(stat), 'SIGTERM') === 'sent') sent++;
  }
  return sent;
}

function proveEmpty(target: CgroupLadderTarget, steps: string[]): LadderOutcome {
  const { scope } = target;
  const populated = cgroupPopulated(scope.dir);
  const survivors: ProcessIdentity[] = populated === true ? liveMembers(scope.dir) : [];
  let error: string | null = null;
  if (scope.stuckInside())
    error = `the supervisor could not leave the run's cgroup ${scope.dir}; its members were not killed by cgroup.kill`;
  else if (!target.nativeExited()) error = 'native process exit was not observed';
  else if (populated === true) error = survivors.length === 0 ? `the run's cgroup ${scope.dir} is still populated` : null;
  else if (!removeCgroupTree(scope.dir)) error = `the run's cgroup ${scope.dir} is empty but could not be removed`;
  else steps.push('cgroup:empty');
  return { survivors, steps, error };
}

function liveMembers(dir: string): ProcessIdentity[] {
  const out: ProcessIdentity[] = [];
  for (const pid of cgroupTreeMembers(dir)) {
    const stat = readProcStat(pid);
    if (stat !== null && isLive(stat)) out.push(identityOf(stat));
  }
  return out;
}
