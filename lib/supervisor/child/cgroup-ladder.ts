/**
 * The termination ladder over the run's cgroup: SIGINT to the native process (it then writes a final
 * result), SIGTERM to the group and to every other member of the cgroup (identity-checked), then cgroup.kill
 * (or freeze and SIGKILL each), and the kernel's `populated 0` plus the cgroup's removal as the proof. A
 * process can leave the cgroup only by writing itself into another one (root can): one pass over /proc
 * after `populated 0` finds such a process by the run's marker, ends it, and the run is then not confirmed.
 */
import {
  cgroupPopulation,
  cgroupTreeMembers,
  describeCgroupKill,
  killCgroupMembers,
  removeCgroupTreeSettled,
  waitUntilEmpty,
  type CgroupKill,
} from '../../process/cgroup.ts';
import { identityOf, isLive, isSameProcess, type ProcStat } from '../../process/proc-stat.ts';
import { readProcStat, type ProcScan } from '../../process/proc-table.ts';
import { signalGroup, signalIdentity } from '../../process/kill.ts';
import type { ProcessIdentity } from '../protocol.ts';
import type { CgroupScope } from './cgroup-scope.ts';
import type { LadderOptions, LadderOutcome } from './ladder.ts';

/** Finds the run's processes outside its cgroup: one scan, and whether a process carries the run's marker. */
export interface EscapeLookup {
  scan(): ProcScan;
  carriesMarker(stat: ProcStat): boolean;
}

export interface CgroupLadderTarget {
  readonly selfPid: number;
  readonly groupMode: boolean;
  readonly scope: CgroupScope;
  /** null when the run has no marker yet (nothing of it was started). */
  readonly escapes: EscapeLookup | null;
  nativeExited(): boolean;
  interruptNative(): void;
}

export async function runCgroupLadder(target: CgroupLadderTarget, options: Omit<LadderOptions, 'pollMs'>): Promise<LadderOutcome> {
  const { scope } = target;
  const steps: string[] = [];
  const done = (): boolean => target.nativeExited() && isEmpty(scope.dir);
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
  if (!done()) await killRounds(target, options.killGraceMs, steps);
  return proveEmpty(target, steps, options.killGraceMs);
}

function isEmpty(dir: string): boolean {
  const population = cgroupPopulation(dir);
  return population === 'empty' || population === 'gone';
}

/** The kill, repeated while it is the freeze fallback: a fork in flight finishes into the frozen cgroup. */
async function killRounds(target: CgroupLadderTarget, killGraceMs: number, steps: string[]): Promise<void> {
  const { scope } = target;
  if (scope.stuckInside()) {
    steps.push('cgroup.kill:skipped');
    return;
  }
  const deadline = performance.now() + killGraceMs;
  let kill: CgroupKill = await killCgroupMembers(scope.dir, scope.kill);
  steps.push(describeCgroupKill(kill));
  while (
    !(await waitUntilEmpty(scope.dir, Math.min(KILL_ROUND_MS, Math.max(0, deadline - performance.now())), target.nativeExited)) &&
    performance.now() < deadline
  ) {
    if (kill.how === 'freeze') kill = await killCgroupMembers(scope.dir, 'freeze');
  }
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

async function proveEmpty(target: CgroupLadderTarget, steps: string[], killGraceMs: number): Promise<LadderOutcome> {
  const { scope } = target;
  const population = cgroupPopulation(scope.dir);
  const survivors: ProcessIdentity[] = population === 'populated' ? liveMembers(scope.dir) : [];
  let error: string | null = null;
  if (scope.stuckInside())
    error = `the supervisor could not leave the run's cgroup ${scope.dir}; its members were not killed by cgroup.kill`;
  else if (!target.nativeExited()) error = 'native process exit was not observed';
  else if (population === 'unreadable') error = `cgroup.events of the run's cgroup ${scope.dir} cannot be read: its emptiness is unproven`;
  else if (population === 'populated') error = survivors.length === 0 ? `the run's cgroup ${scope.dir} is still populated` : null;
  else if (!(await removeCgroupTreeSettled(scope.dir))) error = `the run's cgroup ${scope.dir} is empty but could not be removed`;
  else steps.push('cgroup:empty');
  if (population === 'populated' || population === 'unreadable' || target.escapes === null) return { survivors, steps, error };
  const escaped = await endEscaped(target.escapes, target.selfPid, killGraceMs);
  if (escaped.found.length === 0) return { survivors, steps, error };
  steps.push(`marker:SIGKILL:${escaped.found.length}`);
  const pids = escaped.found.map((id) => id.pid).join(', ');
  return {
    survivors: [...survivors, ...escaped.alive],
    steps,
    error: error ?? `${escaped.found.length} process(es) of the run left its cgroup (pid ${pids}), found by the run's marker and killed`,
  };
}

/**
 * One pass over /proc for live processes carrying the run's marker (the cgroup is empty, so each of them
 * left it): each is SIGKILLed by identity, then watched (by its own stat, no further scan) until gone or
 * `waitMs` passes.
 */
async function endEscaped(
  escapes: EscapeLookup,
  selfPid: number,
  waitMs: number,
): Promise<{ found: ProcessIdentity[]; alive: ProcessIdentity[] }> {
  const found = escapes
    .scan()
    .table.filter((stat) => stat.pid !== selfPid && isLive(stat) && escapes.carriesMarker(stat))
    .map(identityOf);
  for (const id of found) signalIdentity(id, 'SIGKILL');
  const alive = (): ProcessIdentity[] => found.filter(stillLive);
  await waitFor(() => alive().length === 0, waitMs);
  return { found, alive: alive() };
}

function stillLive(id: ProcessIdentity): boolean {
  const stat = readProcStat(id.pid);
  return stat !== null && isSameProcess(id, stat) && isLive(stat);
}

function liveMembers(dir: string): ProcessIdentity[] {
  const out: ProcessIdentity[] = [];
  for (const pid of cgroupTreeMembers(dir)) {
    const stat = readProcStat(pid);
    if (stat !== null && isLive(stat)) out.push(identityOf(stat));
  }
  return out;
}
