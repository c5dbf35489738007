/**
 * The termination ladder: SIGINT to the native process (it then writes a final result), SIGTERM to the
 * group and to tracked escaped descendants, SIGKILL to each remaining process individually, then proof by
 * /proc scan. The supervisor never signals its own group with SIGKILL: it would die before reporting.
 */
import { identityOf, type ProcStat } from '../../process/proc-stat.ts';
import { signalGroup, signalIdentity, type KillSignal } from '../../process/kill.ts';
import type { RunTracker } from './tracker.ts';
import type { ProcessIdentity } from '../protocol.ts';

export interface LadderTarget {
  readonly selfPid: number;
  /** True when the supervisor leads its own process group (spawned detached), so -pgid is the run. */
  readonly groupMode: boolean;
  readonly tracker: RunTracker;
  readonly readTable: () => ProcStat[];
  /** The native process has exited and been reaped. */
  nativeExited(): boolean;
  /** SIGINT to the native process; safe because it is our unreaped child. */
  interruptNative(): void;
}

export interface LadderOptions {
  readonly interrupt: boolean;
  readonly interruptGraceMs: number;
  readonly termGraceMs: number;
  readonly killGraceMs: number;
  readonly pollMs: number;
}

export interface LadderOutcome {
  readonly survivors: readonly ProcessIdentity[];
  readonly steps: readonly string[];
  readonly error: string | null;
}

export async function runLadder(target: LadderTarget, options: LadderOptions): Promise<LadderOutcome> {
  const { tracker } = target;
  const steps: string[] = [];
  const failures: number[] = [];
  const observe = (): ProcStat[] => {
    const table = target.readTable();
    tracker.observe(table);
    return table;
  };
  // A scan lists /proc before it reads each entry: a child born after the listing whose parent exits before
  // its entry is read is in neither. Nothing remains only when a second scan, listed after the first one
  // finished, agrees.
  // Once proven, the proof stands (nothing of the run is left to start anything): later steps ask again
  // without scanning again. `proof` is the second of the two empty scans.
  let proof: ProcStat[] | null = null;
  const settled = (table: readonly ProcStat[]): boolean => {
    if (proof !== null) return true;
    if (!target.nativeExited() || tracker.remaining(table).length > 0) return false;
    const second = observe();
    if (tracker.remaining(second).length > 0) return false;
    proof = second;
    return true;
  };
  // Ref'd timers on purpose: after control EOF these waits may be all that keeps the supervisor alive.
  const waitUntil = async (done: (table: readonly ProcStat[]) => boolean, ms: number): Promise<ProcStat[]> => {
    const deadline = performance.now() + ms;
    let table = observe();
    while (!done(table) && performance.now() < deadline) {
      await process.getBuiltinModule('node:timers/promises').setTimeout(Math.max(1, Math.min(options.pollMs, deadline - performance.now())));
      table = observe();
    }
    return table;
  };
  const signalEach = (victims: readonly ProcStat[], signal: KillSignal): number => {
    let sent = 0;
    for (const victim of victims) {
      const outcome = signalIdentity(identityOf(victim), signal);
      if (outcome === 'sent') sent++;
      else if (outcome === 'failed') failures.push(victim.pid);
    }
    return sent;
  };

  let table = observe();
  if (options.interrupt && !target.nativeExited()) {
    target.interruptNative();
    steps.push('SIGINT:native');
    table = await waitUntil(() => target.nativeExited(), options.interruptGraceMs);
  }
  if (!settled(table)) {
    let victims = tracker.remaining(table);
    if (target.groupMode) {
      if (signalGroup(target.selfPid, 'SIGTERM') === 'sent') steps.push('SIGTERM:group');
      victims = victims.filter((s) => s.pgid !== target.selfPid);
    }
    steps.push(`SIGTERM:${signalEach(victims, 'SIGTERM')}`);
    table = await waitUntil(settled, options.termGraceMs);
  }
  if (!settled(table)) {
    steps.push(`SIGKILL:${signalEach(tracker.remaining(table), 'SIGKILL')}`);
    table = await waitUntil(settled, options.killGraceMs);
  }
  let last: ProcStat[];
  let remaining: ProcStat[];
  if (proof !== null) {
    last = proof;
    remaining = [];
  } else {
    last = observe();
    remaining = tracker.remaining(last);
    if (remaining.length === 0) {
      last = observe();
      remaining = tracker.remaining(last);
    }
  }
  const unverifiable = remaining.length === 0 ? tracker.unverifiable(last) : [];
  const survivors = [...remaining, ...unverifiable].map(identityOf);
  let error: string | null = null;
  if (failures.length > 0) error = `signal refused (EPERM) for pid ${[...new Set(failures)].join(', ')}`;
  else if (!target.nativeExited()) error = 'native process exit was not observed';
  else if (tracker.overflowed()) error = 'more processes than the tracker can remember: some may have escaped unseen';
  else if (unverifiable.length > 0) error = `started during the run with an unreadable environment (not proven outside the run): pid ${unverifiable.map((s) => s.pid).join(', ')}`;
  return { survivors, steps, error };
}
