/**
 * The supervisor's last phase: once, on terminate / control EOF / native exit / a refused spawn, it runs the
 * ladder over everything the run started (in its cgroup, or through /proc), writes the cleanup report and exits.
 */
import { PROBE_ONLY_LADDER, RUN_MARKER_ENV } from '../protocol.ts';
import { compareStart } from '../../process/proc-stat.ts';
import { environMarker, scanProcTable } from '../../process/proc-table.ts';
import { formatCleanupLine } from './cleanup-report.ts';
import { runCgroupLadder, type EscapeLookup } from './cgroup-ladder.ts';
import { runLadder, type LadderOptions, type LadderOutcome } from './ladder.ts';
import { runPsLadder } from './ps-ladder.ts';
import { PROBE_TRACK_INTERVAL_MS, type SupervisorState } from './supervisor-state.ts';

/** How often the ladder re-scans /proc while it waits for processes to go. */
const LADDER_POLL_MS = 20;
/** Under the portable source, the pause between the end of one `ps` table and the next while the ladder waits. */
export const PS_LADDER_POLL_MS = 100;

/** Starts cleanup (at most once); `interrupt` first lets a running native end with SIGINT. */
export function cleanUp(s: SupervisorState, interrupt: boolean, why: string): void {
  if (s.cleaning) return;
  s.cleaning = true;
  // The control pipe stays read: table answers (and its EOF) still matter to the ladder, which waits for none.
  s.tables.hurry();
  s.probe?.cancel();
  const running = s.native;
  const timings = s.spec ?? { ...PROBE_ONLY_LADDER, trackIntervalMs: PROBE_TRACK_INTERVAL_MS };
  const interruptNative = (): void => {
    running?.kill('SIGINT');
  };
  const nativeExited = (): boolean => s.unreaped.size === 0;
  const grace = { interruptGraceMs: timings.interruptGraceMs, termGraceMs: timings.termGraceMs, killGraceMs: timings.killGraceMs };
  const interruptRunning = interrupt && running !== null && s.unreaped.has(running);
  const { selfPid, groupMode, scope, tracker, readTable, psTracker } = s;
  if (readTable !== null && psTracker !== null) {
    const options: LadderOptions = { interrupt: interruptRunning, ...grace, pollMs: PS_LADDER_POLL_MS };
    void Promise.resolve(s.psPending)
      .then(() => runPsLadder({ selfPid, tracker: psTracker, readTable: () => readTable(0), nativeExited, interruptNative }, options))
      .then((outcome) => finish(s, outcome, [why]));
    return;
  }
  if (scope !== null) {
    const cgroupTarget = { selfPid, groupMode, scope, escapes: escapeLookup(s), nativeExited, interruptNative };
    void runCgroupLadder(cgroupTarget, { interrupt: interruptRunning, ...grace }).then((outcome) => finish(s, outcome, [why]));
    return;
  }
  if (tracker === null || readTable !== null) {
    // Nothing of the run was ever started (no probe, no native): nothing to end.
    void finish(s, { survivors: [], steps: [], error: null }, [why]);
    return;
  }
  const target = { selfPid, groupMode, tracker, scan: scanProcTable, nativeExited, interruptNative };
  const options = { interrupt: interruptRunning, ...grace, pollMs: Math.min(timings.trackIntervalMs, LADDER_POLL_MS) };
  void runLadder(target, options).then((outcome) => finish(s, outcome, [why]));
}

/** How the run's processes are told apart outside its cgroup: born since the supervisor, carrying the marker. */
function escapeLookup(s: SupervisorState): EscapeLookup | null {
  const { marker, selfStat } = s;
  if (marker === null || selfStat === null) return null;
  return {
    scan: scanProcTable,
    carriesMarker: (stat) =>
      stat.kthread !== true && compareStart(stat.start, selfStat.start) >= 0 && environMarker(stat.pid, RUN_MARKER_ENV, marker) === 'yes',
  };
}

/** Writes the cleanup report (after the native stderr settled) and exits. */
async function finish(s: SupervisorState, outcome: LadderOutcome, extraSteps: readonly string[]): Promise<void> {
  s.stopTracking();
  await s.settleStderr(s.spec?.killGraceMs ?? 0);
  const { tail } = s;
  s.report.write(
    formatCleanupLine({
      ...outcome,
      steps: [...extraSteps, ...fallbackStep(s), ...outcome.steps],
      stderrTail: tail.text(),
      stderrBytes: tail.totalBytes(),
      proof: s.readTable !== null ? 'ps_scan' : s.scope === null ? 'process_scan' : 'cgroup',
    }),
  );
  await s.report.end();
  process.exit(0);
}

/** A run that was to have a cgroup and has none names why in its steps (its proof is then process_scan). */
function fallbackStep(s: SupervisorState): string[] {
  return s.cgroupRefusal === null ? [] : [`cgroup_unavailable:${s.cgroupRefusal}`];
}
