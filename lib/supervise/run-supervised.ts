/**
 * Parent side of one supervised native run: starts the supervisor detached (a new session and group that
 * the live supervisor pins), sends `spawn`, relays native stdout to a hook, collects the bounded report,
 * and falls back to a best-effort kill if the supervisor dies without its cleanup report.
 */
import { spawn } from 'node:child_process';
import { createLineSplitter } from '../util/line-splitter.ts';
import { identityOf } from '../supervisor/proc-stat.ts';
import { readProcStat } from '../supervisor/proc-table.ts';
import { killLeftovers } from './fallback-kill.ts';
import { REPORT_MAX_BYTES, type ControlMessage, type ProcessIdentity, type ReportMessage, type TerminateReason } from './protocol.ts';
import { parseReportLine } from './report-parse.ts';
import { getSupervisorCommand, type SupervisorCommand } from './supervisor-command.ts';

export { getSupervisorCommand };
export type { SupervisorCommand };

/** Ladder defaults: SIGINT lets the CLI tear down its tools (measured ~0.1 s streaming, ~1.6 s with Bash). */
export const DEFAULT_INTERRUPT_GRACE_MS = 2000;
export const DEFAULT_TERM_GRACE_MS = 1500;
export const DEFAULT_KILL_GRACE_MS = 1000;
export const DEFAULT_TRACK_INTERVAL_MS = 100;
/** After the supervisor exits, its pipes get this long to deliver their last bytes. */
export const SUPERVISOR_PIPE_GRACE_MS = 2000;

export interface SupervisedSpec {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** Written to native stdin then closed; null means native stdin is /dev/null. */
  readonly stdin: string | null;
  readonly interruptGraceMs?: number;
  readonly termGraceMs?: number;
  readonly killGraceMs?: number;
  readonly trackIntervalMs?: number;
  readonly supervisorCommand?: SupervisorCommand;
}

export interface SupervisedHooks {
  onStdout(chunk: Buffer): void;
  onReport?(message: ReportMessage): void;
}

export type CleanupReport = Extract<ReportMessage, { type: 'cleanup' }>;

export interface SupervisedOutcome {
  readonly spawned: ProcessIdentity | null;
  readonly spawnError: { readonly code: string; readonly message: string } | null;
  readonly exit: { readonly code: number | null; readonly signal: string | null } | null;
  /** null: no explicit report arrived, so cleanup is unconfirmed. */
  readonly cleanup: CleanupReport | null;
  readonly supervisorExit: { readonly code: number | null; readonly signal: string | null };
  readonly stderrTail: string;
  readonly stderrBytes: number;
  /** Processes the adapter itself SIGKILLed because the supervisor left no cleanup report. */
  readonly fallbackKilled: number;
}

export interface SupervisedRun {
  /** The first reason wins; later calls and calls after the run ended do nothing. */
  terminate(reason: TerminateReason): void;
  readonly supervisorPid: number | null;
  readonly done: Promise<SupervisedOutcome>;
}

/** Starts one supervised run; `done` settles after the supervisor exited and every pipe was drained. */
export function startSupervised(spec: SupervisedSpec, hooks: SupervisedHooks): SupervisedRun {
  const command = spec.supervisorCommand ?? getSupervisorCommand();
  const child = spawn(command.file, [...command.args], { detached: true, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
  // Unreaped until its exit event, so this identity is stable for the fallback.
  const supervisorStat = child.pid === undefined ? null : readProcStat(child.pid);
  const supervisorId = supervisorStat ? identityOf(supervisorStat) : null;

  let spawned: ProcessIdentity | null = null;
  let spawnError: SupervisedOutcome['spawnError'] = null;
  let exit: SupervisedOutcome['exit'] = null;
  let cleanup: CleanupReport | null = null;
  let reportBytes = 0;
  let terminated = false;
  let controlOpen = true;

  const onReport = (message: ReportMessage): void => {
    switch (message.type) {
      case 'spawned': spawned = { pid: message.pid, start: message.start }; break;
      case 'spawn_error': spawnError = { code: message.code, message: message.message }; break;
      case 'exit': exit = { code: message.code, signal: message.signal }; break;
      case 'cleanup': cleanup = message; break;
    }
    hooks.onReport?.(message);
  };
  const splitter = createLineSplitter({
    maxLineBytes: REPORT_MAX_BYTES,
    onLine: (frame) => {
      const message = parseReportLine(frame.toString('utf8'));
      if (message && cleanup === null) onReport(message);
    },
    onOversize: () => {},
  });

  const send = (message: ControlMessage): void => {
    if (!controlOpen) return;
    child.stdin.write(JSON.stringify(message) + '\n');
  };
  child.stdin.on('error', () => { controlOpen = false; });
  child.stdout.on('data', (chunk: Buffer) => { hooks.onStdout(chunk); });
  child.stderr.on('data', (chunk: Buffer) => {
    // The report pipe is bounded as a whole: bytes past REPORT_MAX_BYTES are drained and ignored.
    const room = REPORT_MAX_BYTES - reportBytes;
    if (room > 0) splitter.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    reportBytes += chunk.length;
  });

  const done = new Promise<SupervisedOutcome>((resolve) => {
    let supervisorExit: SupervisedOutcome['supervisorExit'] = { code: null, signal: null };
    let pipeTimer: NodeJS.Timeout | null = null;
    child.once('exit', (code, signal) => {
      supervisorExit = { code, signal };
      controlOpen = false;
      child.stdin.destroy();
      // A process that escaped could still hold our read ends' peers open; do not wait on it forever.
      pipeTimer = setTimeout(() => { child.stdout.destroy(); child.stderr.destroy(); }, SUPERVISOR_PIPE_GRACE_MS);
      pipeTimer.unref();
    });
    child.once('close', () => {
      if (pipeTimer) clearTimeout(pipeTimer);
      splitter.end();
      const report: CleanupReport | null = cleanup;
      const fallbackKilled = report === null ? killLeftovers(supervisorId, spawned) : 0;
      resolve({
        spawned, spawnError, exit, cleanup: report, supervisorExit, fallbackKilled,
        stderrTail: report?.stderr_tail ?? '',
        stderrBytes: report?.stderr_bytes ?? 0,
      });
    });
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return;
      spawnError = { code: error.code ?? 'SUPERVISOR_SPAWN_FAILED', message: error.message };
      resolve({ spawned: null, spawnError, exit: null, cleanup: null, supervisorExit, stderrTail: '', stderrBytes: 0, fallbackKilled: 0 });
    });
  });

  send({
    type: 'spawn',
    file: spec.file,
    args: spec.args,
    cwd: spec.cwd,
    env: spec.env,
    stdin: spec.stdin,
    interruptGraceMs: spec.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS,
    termGraceMs: spec.termGraceMs ?? DEFAULT_TERM_GRACE_MS,
    killGraceMs: spec.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
    trackIntervalMs: spec.trackIntervalMs ?? DEFAULT_TRACK_INTERVAL_MS,
  });

  return {
    terminate(reason) {
      if (terminated) return;
      terminated = true;
      send({ type: 'terminate', reason });
    },
    supervisorPid: child.pid ?? null,
    done,
  };
}
