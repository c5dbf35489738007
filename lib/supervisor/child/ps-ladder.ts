/**
 * The termination ladder over `ps` tables (the portable source): SIGINT to the native, SIGTERM to the
 * supervisor's group and to each tracked process outside it, SIGKILL to each tracked process left, each single
 * signal checked against the latest table (weak identity), then proof by two consecutive whole tables. It reads
 * tables only through `readTable`, and opens no file of /proc.
 * Confirmed only when the native's exit was observed, two consecutive whole tables show nothing tracked alive
 * and no unattributed orphan, and no read of `ps` failed while the run was followed. Unattributed orphans are
 * reported as survivors and never signalled.
 */
import { signalGroup, signalWeakIdentity, type KillSignal, type SignalOutcome } from '../../process/kill.ts';
import { psFailure, weakIdentityOf, type PsRow, type PsTableResult } from '../../process/ps-table.ts';
import type { ProcessIdentity } from '../protocol.ts';
import type { LadderOptions, LadderOutcome } from './ladder.ts';
import { describeOrphan, type PsRunTracker } from './ps-tracker.ts';

export interface PsLadderTarget {
  readonly selfPid: number;
  readonly tracker: PsRunTracker;
  readonly readTable: () => Promise<PsTableResult>;
  nativeExited(): boolean;
  interruptNative(): void;
  /** Signal delivery (default: lib/process/kill.ts); injected by specs. */
  readonly signals?: PsSignals;
}

export interface PsSignals {
  group(pgid: number, signal: KillSignal): SignalOutcome;
  single(row: PsRow, latest: PsRow | undefined, signal: KillSignal): SignalOutcome;
}

const SIGNALS: PsSignals = {
  group: signalGroup,
  single: (row, latest, signal) => {
    const id = weakIdentityOf(row);
    return id === null ? 'gone' : signalWeakIdentity(id, latest, signal);
  },
};

/** After the ladder, how long more tables are read for a proof when nothing tracked is seen any more. */
export const PS_PROOF_RETRY_MS = 2000;
/** How many unattributed orphans the error names (all of them are in the survivors). */
export const ORPHANS_NAMED_MAX = 8;
/** How often the native's exit is looked for during the SIGINT grace (no table is needed for that). */
const NATIVE_EXIT_POLL_MS = 20;

interface PsLadderRun {
  readonly target: PsLadderTarget;
  readonly options: LadderOptions;
  readonly signals: PsSignals;
  readonly steps: string[];
  readonly failures: number[];
  /** A read failed during the ladder: no table is read again (a hung or broken ps stays so), nothing is proven. */
  stopped: boolean;
  /** The latest read was whole and showed nothing tracked alive. */
  clear: boolean;
  proven: boolean;
}

export async function runPsLadder(target: PsLadderTarget, options: LadderOptions): Promise<LadderOutcome> {
  const run: PsLadderRun = {
    target,
    options,
    signals: target.signals ?? SIGNALS,
    steps: [],
    failures: [],
    stopped: false,
    clear: false,
    proven: false,
  };
  await observe(run);
  if (options.interrupt && !target.nativeExited()) {
    target.interruptNative();
    run.steps.push('SIGINT:native');
    await waitForNative(target, options.interruptGraceMs);
    await observe(run);
  }
  if (!(await settled(run))) {
    if (run.signals.group(target.selfPid, 'SIGTERM') === 'sent') run.steps.push('SIGTERM:group');
    run.steps.push(`SIGTERM:${signalEach(run, (row) => row.pgid !== target.selfPid, 'SIGTERM')}`);
    await waitUntilSettled(run, options.termGraceMs);
  }
  if (!(await settled(run))) {
    run.steps.push(`SIGKILL:${signalEach(run, () => true, 'SIGKILL')}`);
    await waitUntilSettled(run, options.killGraceMs);
  }
  if (!run.proven && target.nativeExited() && target.tracker.remaining().length === 0) await waitUntilSettled(run, PS_PROOF_RETRY_MS);
  return outcomeOf(run);
}

async function observe(run: PsLadderRun): Promise<void> {
  if (run.stopped) return;
  const result = await readGuarded(run.target.readTable);
  run.target.tracker.observe(result);
  if (result.kind === 'failure') run.stopped = true;
  run.clear = run.target.tracker.lastComplete() && run.target.tracker.remaining().length === 0;
}

/** A table source that breaks its contract (rejects) is a failure of ps like any other, never a crash. */
export async function readGuarded(readTable: () => Promise<PsTableResult>): Promise<PsTableResult> {
  try {
    return await readTable();
  } catch (error) {
    return psFailure('ps_spawn_failed', `no table came (${error instanceof Error ? error.message.slice(0, 200) : 'unknown error'})`);
  }
}

/**
 * Nothing tracked is left only when two consecutive whole tables agree (the second read after the first
 * ended): procps lists /proc before it reads each entry, so a child born after the listing whose parent exits
 * before its entry is read is in neither. The proof, once had, stands.
 */
async function settled(run: PsLadderRun): Promise<boolean> {
  if (run.proven) return true;
  if (run.stopped || !run.clear || !run.target.nativeExited()) return false;
  await observe(run);
  run.proven = run.clear;
  return run.proven;
}

async function waitUntilSettled(run: PsLadderRun, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  await observe(run);
  while (!run.stopped && !(await settled(run)) && performance.now() < deadline) {
    await sleep(Math.max(1, Math.min(run.options.pollMs, deadline - performance.now())));
    await observe(run);
  }
}

async function waitForNative(target: PsLadderTarget, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  while (!target.nativeExited() && performance.now() < deadline)
    await sleep(Math.max(1, Math.min(NATIVE_EXIT_POLL_MS, deadline - performance.now())));
}

/** Ref'd on purpose: after control EOF these waits may be all that keeps the supervisor alive. */
function sleep(ms: number): Promise<void> {
  return process.getBuiltinModule('node:timers/promises').setTimeout(ms);
}

/** Signals each tracked row the filter keeps, only from a whole latest table and only if it still shows it. */
function signalEach(run: PsLadderRun, keep: (row: PsRow) => boolean, signal: KillSignal): number {
  const { tracker } = run.target;
  if (!tracker.lastComplete()) return 0;
  let sent = 0;
  for (const row of tracker.remaining().filter(keep)) {
    const outcome = run.signals.single(row, tracker.latest(row.pid), signal);
    if (outcome === 'sent') sent++;
    else if (outcome === 'failed') run.failures.push(row.pid);
  }
  return sent;
}

function identityOfRow(row: PsRow): ProcessIdentity {
  return { pid: row.pid, start: row.start?.lstart ?? '-' };
}

function outcomeOf(run: PsLadderRun): LadderOutcome {
  const { tracker } = run.target;
  const remaining = tracker.remaining();
  const orphans = tracker.unattributed();
  const survivors = [...remaining, ...orphans].map(identityOfRow);
  return { survivors, steps: run.steps, error: psLadderError(run, remaining, orphans) };
}

function psLadderError(run: PsLadderRun, remaining: readonly PsRow[], orphans: readonly PsRow[]): string | null {
  const { target, failures } = run;
  const failure = target.tracker.failure();
  if (failure !== null) return `${failure.message} (${failure.code}): the run's processes could not all be followed, nothing is proven`;
  if (failures.length > 0) return `signal refused (EPERM) for pid ${[...new Set(failures)].join(', ')}`;
  if (!target.nativeExited()) return 'native process exit was not observed';
  if (target.tracker.overflowed()) return 'more processes than the tracker can remember: some may have escaped unseen';
  const alive = remaining.length > 0 ? `process(es) of the run still alive: pid ${remaining.map((r) => r.pid).join(', ')}` : null;
  if (orphans.length > 0)
    return `${alive === null ? '' : `${alive}; `}unattributed orphan(s) started during the run (parent pid 1, not provably the run's, not signalled): ${orphans
      .slice(0, ORPHANS_NAMED_MAX)
      .map(describeOrphan)
      .join(', ')}${orphans.length > ORPHANS_NAMED_MAX ? ` and ${orphans.length - ORPHANS_NAMED_MAX} more` : ''}`;
  if (alive !== null) return alive;
  if (!run.proven) return 'no two consecutive ps tables could show the run gone';
  return null;
}
