/**
 * The termination ladder: SIGINT to the native process (it then writes a final result), SIGTERM to the
 * group and to tracked escaped descendants, SIGKILL to each remaining process individually, then proof by
 * /proc scan. The supervisor never signals its own group with SIGKILL: it would die before reporting.
 */
import { identityOf, type ProcStat } from '../../process/proc-stat.ts';
import { signalGroup, signalIdentity, type KillSignal } from '../../process/kill.ts';
import type { ProcScan } from '../../process/proc-table.ts';
import type { RunTracker } from './tracker.ts';
import type { ProcessIdentity } from '../protocol.ts';

export interface LadderTarget {
  readonly selfPid: number;
  /** True when the supervisor leads its own process group (spawned detached), so -pgid is the run. */
  readonly groupMode: boolean;
  readonly tracker: RunTracker;
  /** One full pass over /proc (lib/process/proc-table.ts scanProcTable). */
  readonly scan: () => ProcScan;
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

/**
 * A scan that lasted longer than this proves nothing: its listing argument (a process born while it lists
 * /proc gets a higher pid, so it is listed or its parent is) assumes pids do not wrap around within one scan.
 */
export const PROOF_SCAN_MAX_MS = 1000;
/** After the ladder, how long more the supervisor scans for a proof when nothing of the run is seen any more. */
export const PROOF_RETRY_MS = 2000;

export async function runLadder(target: LadderTarget, options: LadderOptions): Promise<LadderOutcome> {
  const { tracker } = target;
  const steps: string[] = [];
  const failures: number[] = [];
  /** Scans that could not show the run's absence (a listed pid vanished, a doubt, a scan too slow). */
  let unprovable = 0;
  let provable = false;
  const observe = (): ProcStat[] => {
    const scan = target.scan();
    tracker.observe(scan.table, scan.vanished);
    provable = tracker.lastScanComplete() && scan.durationMs <= PROOF_SCAN_MAX_MS;
    if (!provable) unprovable++;
    return scan.table;
  };
  /** The scan just made shows nothing of the run, and could show it. */
  const empty = (table: readonly ProcStat[]): boolean => provable && tracker.remaining(table).length === 0;
  // A scan lists /proc before it reads each entry: a child born after the listing whose parent exits before
  // its entry is read is in neither. Nothing remains only when a second scan, listed after the first one
  // finished, agrees.
  // Once proven, the proof stands (nothing of the run is left to start anything): later steps ask again
  // without scanning again. `proof` is the second of the two empty scans.
  let proof: ProcStat[] | null = null;
  const settled = (table: readonly ProcStat[]): boolean => {
    if (proof !== null) return true;
    if (!target.nativeExited() || !empty(table)) return false;
    const second = observe();
    if (!empty(second)) return false;
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
  // Nothing of the run was seen, but no two scans in a row could show it (other jobs' processes keep vanishing
  // mid-scan on a busy machine): keep looking a bounded while longer before settling for "unconfirmed".
  if (proof === null && target.nativeExited() && tracker.remaining(table).length === 0) table = await waitUntil(settled, PROOF_RETRY_MS);
  let last: ProcStat[];
  let remaining: ProcStat[];
  if (proof !== null) {
    last = proof;
    remaining = [];
  } else {
    last = observe();
    remaining = tracker.remaining(last);
    if (empty(last)) {
      last = observe();
      remaining = tracker.remaining(last);
      if (empty(last)) proof = last;
    }
  }
  const unverifiable = remaining.length === 0 ? tracker.unverifiable(last) : [];
  const survivors = [...remaining, ...unverifiable].map(identityOf);
  let error: string | null = null;
  if (failures.length > 0) error = `signal refused (EPERM) for pid ${[...new Set(failures)].join(', ')}`;
  else if (!target.nativeExited()) error = 'native process exit was not observed';
  else if (tracker.overflowed()) error = 'more processes than the tracker can remember: some may have escaped unseen';
  else if (unverifiable.length > 0) error = `started during the run with an unreadable environment (not proven outside the run): pid ${unverifiable.map((s) => s.pid).join(', ')}`;
  else if (proof === null && remaining.length === 0) error = `no two consecutive scans could show the run gone (${unprovable} could not: a listed process vanished before it was read, or a scan took over ${PROOF_SCAN_MAX_MS} ms)`;
  return { survivors, steps, error };
}
