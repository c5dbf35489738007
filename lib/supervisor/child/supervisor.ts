/**
 * The supervisor process: runs the run's probes (the version check) and then one native CLI, all in its own
 * process group and marked with the run's marker; the native stdout is the supervisor's own fd 1 (the bytes
 * go straight to the adapter, no relay hop); reports on fd 2; on terminate / control EOF / native exit runs
 * the ladder over everything the run started and proves cleanup. Protocol: lib/supervisor/protocol.ts.
 */
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { CONTROL_LINE_MAX_BYTES, MAX_PROBES, PROBE_ONLY_LADDER, RUN_MARKER_ENV, SPAWN_ERROR_FILE_CHANGED, SPAWN_ERROR_NO_CODE, STDERR_TAIL_MAX_BYTES, type ControlMessage, type ReportMessage } from '../protocol.ts';
import { fileIdentity } from '../file-id.ts';
import { formatProbeResult } from '../report-parse.ts';
import { assertNever } from '../../util/assert-never.ts';
import { createLineSplitter } from '../../util/line-splitter.ts';
import { formatCleanupLine } from './cleanup-report.ts';
import { parseControlLine } from './control.ts';
import { closeInheritedFds, openWritableFd, releaseStdout } from './fds.ts';
import { runLadder, type LadderOutcome } from './ladder.ts';
import { startProbe, type RunningProbe } from './probe.ts';
import { identityOf } from '../../process/proc-stat.ts';
import { environMarker, processUid, readProcStat, scanProcTable } from '../../process/proc-table.ts';
import { createProcView } from '../../process/proc-view.ts';
import { createSink } from './sink.ts';
import { createByteTail } from './stderr-tail.ts';
import { createRunTracker, type RunTracker } from './tracker.ts';
import { openCgroupScope, type CgroupScope } from './cgroup-scope.ts';
import { runCgroupLadder } from './cgroup-ladder.ts';

type SpawnMessage = Extract<ControlMessage, { type: 'spawn' }>;
type ProbeMessage = Extract<ControlMessage, { type: 'probe' }>;
const SHIELDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
/** How often the ladder re-scans /proc while it waits for processes to go. */
const LADDER_POLL_MS = 20;
/** Tracking interval before the run's own (from `spawn`) is known, i.e. while probes run. */
const PROBE_TRACK_INTERVAL_MS = 100;
/** The kernel refused to let the supervisor into the run's cgroup for a spawn (it was removed meanwhile?). */
const CGROUP_REFUSED_MESSAGE = "the run's cgroup refused the supervisor; nothing was started";
/** Between a probe and the run, scanning stops once this many scans in a row found nothing of the run. */
const IDLE_EMPTY_SCANS = 2;
/**
 * While the native runs, the ticks between full scans read only the run's processes and those born since
 * the last tick; a full scan (every process's stat) comes at most this far apart, and cleanup scans in full.
 */
const FULL_SCAN_EVERY_MS = 5000;

/** Runs the supervisor on this process's stdio; it exits the process itself once the report is written. */
export function runSupervisor(): void {
  // Group signals (SIGTERM to -pgid) reach the supervisor too; it must outlive them to report.
  for (const signal of SHIELDED_SIGNALS) process.on(signal, () => {});
  closeInheritedFds();
  // fd 1 is never opened as a stream here: that would make the descriptor non-blocking, and the native
  // process shares it.
  const report = createSink(openWritableFd(2));
  const tail = createByteTail(STDERR_TAIL_MAX_BYTES);
  const selfPid = process.pid;
  const selfStat = readProcStat(selfPid);
  const groupMode = selfStat?.pgid === selfPid;
  const selfUid = process.getuid?.() ?? -1;
  const reportLine = (message: ReportMessage): void => { report.write(JSON.stringify(message) + '\n'); };

  let marker: string | null = null;
  /** The cgroup base of the first command ('' until one came); the run's own cgroup once created. */
  let cgroupBase: string | null | undefined;
  let scope: CgroupScope | null = null;
  let spec: SpawnMessage | null = null;
  let native: ChildProcess | null = null;
  let tracker: RunTracker | null = null;
  let probe: RunningProbe | null = null;
  let probesRun = 0;
  /** Every process the supervisor started that has not been reaped yet. */
  const unreaped = new Set<ChildProcess>();
  let cleaning = false;
  let stopTracking = (): void => {};
  let settleStderr = (_graceMs: number): Promise<void> => Promise.resolve();

  const finish = async (outcome: LadderOutcome, extraSteps: readonly string[]): Promise<void> => {
    stopTracking();
    await settleStderr(spec?.killGraceMs ?? 0);
    report.write(formatCleanupLine({ ...outcome, steps: [...extraSteps, ...outcome.steps], stderrTail: tail.text(), stderrBytes: tail.totalBytes(), proof: scope === null ? 'process_scan' : 'cgroup' }));
    await report.end();
    process.exit(0);
  };

  const track = (intervalMs: number): RunTracker => {
    stopTracking();
    const runTracker = tracker ?? createRunTracker({
      selfPid, groupMode, roots: [],
      marker: marker === null || selfStat === null ? null : {
        notBefore: selfStat.start,
        markerOf: (pid) => environMarker(pid, RUN_MARKER_ENV, marker as string),
        sameUser: (pid) => processUid(pid) === selfUid,
      },
    });
    tracker = runTracker;
    // No scan right away: a process forked this instant has no descendants yet, and a scan costs CPU the
    // new process needs to start. The ladder scans first thing anyway.
    let emptyScans = 0;
    const view = createProcView();
    let lastFull = -Infinity;
    const interval = setInterval(() => {
      if (cleaning) return;
      // A new process is seen by the tick after its birth either way; a full scan also reads strangers again.
      const partial = spec !== null && performance.now() - lastFull < FULL_SCAN_EVERY_MS ? view.delta(runTracker.trackedIdentities()) : null;
      if (partial !== null) {
        runTracker.observeDelta(partial.fresh, partial.view);
        return;
      }
      lastFull = performance.now();
      const scan = view.full();
      runTracker.observe(scan.table, scan.vanished);
      // Waiting between probes and the run (a warm spare may wait long): once nothing of the run is left,
      // proven as cleanup is (consecutive empty scans), there is nothing to follow until the next command.
      if (spec !== null || probe !== null || runTracker.remaining(scan.table).length > 0 || !runTracker.lastScanComplete()) emptyScans = 0;
      else if (++emptyScans >= IDLE_EMPTY_SCANS) stopTracking();
    }, intervalMs);
    stopTracking = () => { clearInterval(interval); };
    return runTracker;
  };

  /**
   * Adopts the marker and cgroup base of the first command; a later command with others is malformed. With a
   * base, the run's own cgroup is created now, before anything of the run starts; where it cannot be (the
   * base went away, a name clash), the run is tracked through /proc instead, and its report says so.
   */
  const takePlacement = (value: string, cgroup: string | null): boolean => {
    if (marker === null) {
      marker = value;
      cgroupBase = cgroup;
      if (cgroup !== null && selfStat !== null) scope = openCgroupScope(cgroup, identityOf(selfStat));
    }
    return marker === value && cgroupBase === cgroup;
  };

  /** Spawns a process of the run: born inside the run's cgroup when there is one. */
  const spawnRunProcess = <T>(spawn: () => T): T | null => (scope === null ? spawn() : scope.spawnInside(spawn));

  const adopt = (child: ChildProcess, runTracker: RunTracker | null): void => {
    unreaped.add(child);
    child.once('exit', () => { unreaped.delete(child); });
    if (runTracker === null) return;
    // The child is unreaped until its exit event, so its /proc entry (and start time) is stable here.
    const stat = child.pid === undefined ? null : readProcStat(child.pid);
    if (stat !== null) runTracker.addRoot(identityOf(stat));
  };

  const cleanUp = (interrupt: boolean, why: string): void => {
    if (cleaning) return;
    cleaning = true;
    process.stdin.pause();
    probe?.cancel();
    const running = native;
    const timings = spec ?? { ...PROBE_ONLY_LADDER, trackIntervalMs: PROBE_TRACK_INTERVAL_MS };
    if (scope !== null) {
      const options = { interrupt: interrupt && running !== null && unreaped.has(running), interruptGraceMs: timings.interruptGraceMs, termGraceMs: timings.termGraceMs, killGraceMs: timings.killGraceMs };
      const cgroupTarget = { selfPid, groupMode, scope, nativeExited: () => unreaped.size === 0, interruptNative: () => { running?.kill('SIGINT'); } };
      void runCgroupLadder(cgroupTarget, options).then((outcome) => finish(outcome, [why]));
      return;
    }
    if (tracker === null) {
      void finish({ survivors: [], steps: [], error: null }, [why]);
      return;
    }
    const target = {
      selfPid, groupMode, tracker, scan: scanProcTable,
      nativeExited: () => unreaped.size === 0,
      interruptNative: () => { running?.kill('SIGINT'); },
    };
    const options = {
      interrupt: interrupt && running !== null && unreaped.has(running),
      interruptGraceMs: timings.interruptGraceMs, termGraceMs: timings.termGraceMs, killGraceMs: timings.killGraceMs,
      pollMs: Math.min(timings.trackIntervalMs, LADDER_POLL_MS),
    };
    void runLadder(target, options).then((outcome) => finish(outcome, [why]));
  };

  const runProbe = (message: ProbeMessage): void => {
    const refuse = (why: string): void => { report.write(formatProbeResult(message.id, { kind: 'spawn_error', message: why }, null)); };
    if (probe !== null || spec !== null) return refuse('a probe or the run is already under way');
    if (probesRun >= MAX_PROBES) return refuse(`at most ${MAX_PROBES} probes per run`);
    probesRun++;
    const runTracker = scope === null ? track(PROBE_TRACK_INTERVAL_MS) : null;
    // The answer is bound to the file only if the file was the same before the probe and after it.
    const fileBefore = fileIdentity(message.file);
    let called = false;
    const started = spawnRunProcess(() => {
      called = true;
      return startProbe(message, { ...message.env, [RUN_MARKER_ENV]: message.marker }, (outcome) => {
        probe = null;
        const fileAfter = fileIdentity(message.file);
        report.write(formatProbeResult(message.id, outcome, fileBefore !== null && fileBefore === fileAfter ? fileBefore : null));
        // Tracking may have stopped while idle: follow what the probe left until that is proven gone.
        if (!cleaning && spec === null && scope === null) track(PROBE_TRACK_INTERVAL_MS);
      });
    });
    if (!called) return refuse(CGROUP_REFUSED_MESSAGE);
    if (started !== null) {
      probe = started;
      adopt(started.child, runTracker);
    }
  };

  const start = (message: SpawnMessage): void => {
    spec = message;
    const runTracker = scope === null ? track(message.trackIntervalMs) : null;
    // The file to run must be the very file whose version a probe checked (it could have been replaced
    // since): refuse it before anything starts. What is left between this stat and exec is microseconds.
    if (message.expectFileId !== null && fileIdentity(message.file) !== message.expectFileId) {
      reportLine({ type: 'spawn_error', code: SPAWN_ERROR_FILE_CHANGED, message: `${message.file} is no longer the file whose version was checked; it was not started` });
      cleanUp(false, 'spawn_error');
      return;
    }
    const child = spawnRunProcess(() => process.getBuiltinModule('node:child_process').spawn(message.file, [...message.args], {
      cwd: message.cwd,
      env: { ...message.env, [RUN_MARKER_ENV]: message.marker },
      stdio: [message.stdin === null ? 'ignore' : 'pipe', 1, 'pipe'],
      windowsHide: true,
    }));
    if (child === null) {
      reportLine({ type: 'spawn_error', code: SPAWN_ERROR_NO_CODE, message: CGROUP_REFUSED_MESSAGE });
      cleanUp(false, 'spawn_error');
      return;
    }
    if (child.pid === undefined) {
      child.once('error', (error: NodeJS.ErrnoException) => {
        reportLine({ type: 'spawn_error', code: error.code ?? SPAWN_ERROR_NO_CODE, message: error.message });
        cleanUp(false, 'spawn_error');
      });
      return;
    }
    native = child;
    releaseStdout();
    adopt(child, runTracker);
    const stat = readProcStat(child.pid);
    reportLine({ type: 'spawned', pid: child.pid, start: stat?.start ?? '0', pgid: stat?.pgid ?? selfPid });
    if (child.stdin) {
      child.stdin.on('error', () => {});
      child.stdin.end(message.stdin ?? '');
    }
    const err = child.stderr;
    if (err) {
      err.on('data', (chunk: Buffer) => { tail.push(chunk); });
      settleStderr = watchEnd(err);
    }
    child.once('exit', (code, signal) => {
      reportLine({ type: 'exit', code, signal });
      cleanUp(false, 'native_exit');
    });
  };

  const onControl = (message: ControlMessage | null): void => {
    if (cleaning) return;
    if (message === null || (message.type !== 'terminate' && !takePlacement(message.marker, message.cgroup))) {
      if (spec === null) reportLine({ type: 'spawn_error', code: 'BAD_CONTROL', message: 'malformed control message' });
      cleanUp(true, 'bad_control');
      return;
    }
    switch (message.type) {
      case 'probe': runProbe(message); break;
      case 'spawn': if (spec === null && probe === null) start(message); break;
      case 'terminate': cleanUp(true, `terminate:${message.reason}`); break;
      default: assertNever(message);
    }
  };

  const splitter = createLineSplitter({
    maxLineBytes: CONTROL_LINE_MAX_BYTES,
    onLine: (frame) => { onControl(parseControlLine(frame.toString('utf8'))); },
    onOversize: () => { onControl(null); },
  });
  process.stdin.on('data', (chunk: Buffer) => { splitter.push(chunk); });
  const onEof = (): void => {
    splitter.end();
    cleanUp(true, 'control_eof');
  };
  process.stdin.once('end', onEof);
  process.stdin.once('error', onEof);
}

/**
 * Watches the native stderr pipe for its end. After cleanup, a pipe still held open by a process that
 * survived is destroyed once graceMs pass, so the report is never held back by it.
 */
function watchEnd(stream: Readable): (graceMs: number) => Promise<void> {
  let ended = false;
  const ends: (() => void)[] = [];
  const markEnded = (): void => {
    ended = true;
    for (const fn of ends.splice(0)) fn();
  };
  stream.once('end', markEnded);
  stream.once('close', markEnded);
  stream.once('error', markEnded);
  return (graceMs) => new Promise((resolve) => {
    if (ended) {
      resolve();
      return;
    }
    const timer = setTimeout(() => {
      stream.destroy();
      markEnded();
    }, graceMs);
    ends.push(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
