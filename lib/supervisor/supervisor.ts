/**
 * The supervisor process: spawns one native CLI in its own process group with the supervisor's own fd 1
 * as the native stdout (the bytes go straight to the adapter, no relay hop), reports on fd 2, and on
 * terminate / control EOF / native exit runs the ladder and proves cleanup. Protocol: lib/supervise/protocol.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { CONTROL_LINE_MAX_BYTES, STDERR_TAIL_MAX_BYTES, type ControlMessage, type ReportMessage } from '../supervise/protocol.ts';
import { createLineSplitter } from '../util/line-splitter.ts';
import { formatCleanupLine } from './cleanup-report.ts';
import { parseControlLine } from './control.ts';
import { closeInheritedFds, openWritableFd, releaseStdout } from './fds.ts';
import { runLadder, type LadderOutcome } from './ladder.ts';
import { identityOf } from './proc-stat.ts';
import { readProcStat, readProcTable } from './proc-table.ts';
import { createSink } from './sink.ts';
import { createByteTail } from './stderr-tail.ts';
import { createRunTracker, type RunTracker } from './tracker.ts';

type SpawnMessage = Extract<ControlMessage, { type: 'spawn' }>;
const SHIELDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
/** How often the ladder re-scans /proc while it waits for processes to go. */
const LADDER_POLL_MS = 20;

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
  const groupMode = readProcStat(selfPid)?.pgid === selfPid;
  const reportLine = (message: ReportMessage): void => { report.write(JSON.stringify(message) + '\n'); };

  let spec: SpawnMessage | null = null;
  let child: ChildProcess | null = null;
  let tracker: RunTracker | null = null;
  let exited = false;
  let cleaning = false;
  let stopTracking = (): void => {};
  let settleStderr = (_graceMs: number): Promise<void> => Promise.resolve();

  const finish = async (outcome: LadderOutcome, extraSteps: readonly string[]): Promise<void> => {
    stopTracking();
    const graceMs = spec?.killGraceMs ?? 0;
    await settleStderr(graceMs);
    report.write(formatCleanupLine({ ...outcome, steps: [...extraSteps, ...outcome.steps], stderrTail: tail.text(), stderrBytes: tail.totalBytes() }));
    await report.end();
    process.exit(0);
  };

  const cleanUp = (interrupt: boolean, why: string): void => {
    if (cleaning) return;
    cleaning = true;
    process.stdin.pause();
    if (spec === null || child === null || tracker === null) {
      void finish({ survivors: [], steps: [], error: null }, [why]);
      return;
    }
    const running = child;
    const target = {
      selfPid, groupMode, tracker, readTable: readProcTable,
      nativeExited: () => exited,
      interruptNative: () => { running.kill('SIGINT'); },
    };
    const options = { interrupt, interruptGraceMs: spec.interruptGraceMs, termGraceMs: spec.termGraceMs, killGraceMs: spec.killGraceMs, pollMs: Math.min(spec.trackIntervalMs, LADDER_POLL_MS) };
    void runLadder(target, options).then((outcome) => finish(outcome, [why]));
  };

  const start = (message: SpawnMessage): void => {
    spec = message;
    const native = spawn(message.file, [...message.args], {
      cwd: message.cwd,
      env: { ...message.env },
      stdio: [message.stdin === null ? 'ignore' : 'pipe', 1, 'pipe'],
      windowsHide: true,
    });
    if (native.pid === undefined) {
      native.once('error', (error: NodeJS.ErrnoException) => {
        reportLine({ type: 'spawn_error', code: error.code ?? 'SPAWN_FAILED', message: error.message });
        cleanUp(false, 'spawn_error');
      });
      return;
    }
    child = native;
    releaseStdout();
    // The child is unreaped until its exit event, so its /proc entry (and start time) is stable here.
    const stat = readProcStat(native.pid);
    const identity = stat ? identityOf(stat) : { pid: native.pid, start: '0' };
    reportLine({ type: 'spawned', pid: identity.pid, start: identity.start, pgid: stat?.pgid ?? selfPid });
    const runTracker = createRunTracker({ selfPid, groupMode, roots: [identity] });
    tracker = runTracker;
    // No scan right away: a process forked this instant has no descendants yet, and a scan costs a few ms
    // of CPU the native process needs to start. The ladder scans first thing anyway.
    const scan = (): void => { if (!cleaning) runTracker.observe(readProcTable()); };
    const interval = setInterval(scan, message.trackIntervalMs);
    stopTracking = () => { clearInterval(interval); };

    if (native.stdin) {
      native.stdin.on('error', () => {});
      native.stdin.end(message.stdin ?? '');
    }
    const err = native.stderr;
    if (err) {
      err.on('data', (chunk: Buffer) => { tail.push(chunk); });
      settleStderr = watchEnd(err);
    }
    native.once('exit', (code, signal) => {
      exited = true;
      reportLine({ type: 'exit', code, signal });
      cleanUp(false, 'native_exit');
    });
  };

  const onControl = (message: ControlMessage | null): void => {
    if (cleaning) return;
    if (message === null) {
      if (spec === null) reportLine({ type: 'spawn_error', code: 'BAD_CONTROL', message: 'malformed control message' });
      cleanUp(spec !== null, 'bad_control');
    } else if (message.type === 'spawn') {
      if (spec === null) start(message);
    } else {
      cleanUp(true, `terminate:${message.reason}`);
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
