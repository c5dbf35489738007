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

/** One ladder's progress: its steps, the signals refused, and the proof once two scans showed the run gone. */
interface LadderRun {
  readonly target: LadderTarget;
  readonly options: LadderOptions;
  readonly steps: string[];
  readonly failures: number[];
  /** Scans that could not show the run's absence (a listed pid vanished, a doubt, a scan too slow). */
  unprovable: number;
  /** Whether the latest scan could show the run's absence. */
  provable: boolean;
  /**
   * Once proven, the proof stands (nothing of the run is left to start anything): later steps ask again
   * without scanning again. `proof` is the second of the two empty scans.
   */
  proof: ProcStat[] | null;
}

export async function runLadder(target: LadderTarget, options: LadderOptions): Promise<LadderOutcome> {
  const run: LadderRun = { target, options, steps: [], failures: [], unprovable: 0, provable: false, proof: null };
  const isSettled = (table: readonly ProcStat[]): boolean => settled(run, table);
  let table = observe(run);
  if (options.interrupt && !target.nativeExited()) {
    target.interruptNative();
    run.steps.push('SIGINT:native');
    table = await waitUntil(run, () => target.nativeExited(), options.interruptGraceMs);
  }
  if (!isSettled(table)) {
    let victims = target.tracker.remaining(table);
    if (target.groupMode) {
      if (signalGroup(target.selfPid, 'SIGTERM') === 'sent') run.steps.push('SIGTERM:group');
      victims = victims.filter((s) => s.pgid !== target.selfPid);
    }
    run.steps.push(`SIGTERM:${signalEach(run, victims, 'SIGTERM')}`);
    table = await waitUntil(run, isSettled, options.termGraceMs);
  }
  if (!isSettled(table)) {
    run.steps.push(`SIGKILL:${signalEach(run, target.tracker.remaining(table), 'SIGKILL')}`);
    table = await waitUntil(run, isSettled, options.killGraceMs);
  }
  // Nothing of the run was seen, but no two scans in a row could show it (other jobs' processes keep vanishing
  // mid-scan on a busy machine): keep looking a bounded while longer before settling for "unconfirmed".
  if (run.proof === null && target.nativeExited() && target.tracker.remaining(table).length === 0)
    await waitUntil(run, isSettled, PROOF_RETRY_MS);
  return outcomeOf(run);
}

function observe(run: LadderRun): ProcStat[] {
  const scan = run.target.scan();
  run.target.tracker.observe(scan.table, scan.vanished);
  run.provable = run.target.tracker.lastScanComplete() && scan.durationMs <= PROOF_SCAN_MAX_MS;
  if (!run.provable) run.unprovable++;
  return scan.table;
}

/** The scan just made shows nothing of the run, and could show it. */
function empty(run: LadderRun, table: readonly ProcStat[]): boolean {
  return run.provable && run.target.tracker.remaining(table).length === 0;
}

/**
 * A scan lists /proc before it reads each entry: a child born after the listing whose parent exits before
 * its entry is read is in neither. Nothing remains only when a second scan, listed after the first one
 * finished, agrees.
 */
function settled(run: LadderRun, table: readonly ProcStat[]): boolean {
  if (run.proof !== null) return true;
  if (!run.target.nativeExited() || !empty(run, table)) return false;
  const second = observe(run);
  if (!empty(run, second)) return false;
  run.proof = second;
  return true;
}

/**
 * Scans every pollMs until `done` or ms pass. Ref'd timers on purpose: after control EOF these waits may be
 * all that keeps the supervisor alive.
 */
async function waitUntil(run: LadderRun, done: (table: readonly ProcStat[]) => boolean, ms: number): Promise<ProcStat[]> {
  const deadline = performance.now() + ms;
  let table = observe(run);
  while (!done(table) && performance.now() < deadline) {
    await process
      .getBuiltinModule('node:timers/promises')
      .setTimeout(Math.max(1, Math.min(run.options.pollMs, deadline - performance.now())));
    table = observe(run);
  }
  return table;
}

function signalEach(run: LadderRun, victims: readonly ProcStat[], signal: KillSignal): number {
  let sent = 0;
  for (const victim of victims) {
    const outcome = signalIdentity(identityOf(victim), signal);
    if (outcome === 'sent') sent++;
    else if (outcome === 'failed') run.failures.push(victim.pid);
  }
  return sent;
}

/** The last look (two more scans unless already proven) and what it leaves: survivors, why cleanup is unproven. */
function outcomeOf(run: LadderRun): LadderOutcome {
  const { tracker } = run.target;
  let last: ProcStat[];
  let remaining: ProcStat[];
  if (run.proof !== null) {
    last = run.proof;
    remaining = [];
  } else {
    last = observe(run);
    remaining = tracker.remaining(last);
    if (empty(run, last)) {
      last = observe(run);
      remaining = tracker.remaining(last);
      if (empty(run, last)) run.proof = last;
    }
  }
  const unverifiable = remaining.length === 0 ? tracker.unverifiable(last) : [];
  const survivors = [...remaining, ...unverifiable].map(identityOf);
  return { survivors, steps: run.steps, error: ladderError(run, remaining, unverifiable) };
}

function ladderError(run: LadderRun, remaining: readonly ProcStat[], unverifiable: readonly ProcStat[]): string | null {
  const { target, failures } = run;
  if (failures.length > 0) return `signal refused (EPERM) for pid ${[...new Set(failures)].join(', ')}`;
  if (!target.nativeExited()) return 'native process exit was not observed';
  if (target.tracker.overflowed()) return 'more processes than the tracker can remember: some may have escaped unseen';
  if (unverifiable.length > 0)
    return `started during the run with an unreadable environment (not proven outside the run): pid ${unverifiable.map((s) => s.pid).join(', ')}`;
  if (run.proof === null && remaining.length === 0)
    return `no two consecutive scans could show the run gone (${run.unprovable} could not: a listed process vanished before it was read, or a scan took over ${PROOF_SCAN_MAX_MS} ms)`;
  return null;
}
