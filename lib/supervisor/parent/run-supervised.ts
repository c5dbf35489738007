/**
 * Parent side of one supervised native run: starts the supervisor detached (a new session and group that
 * the live supervisor pins), sends `spawn`, reads native stdout (written straight into our pipe) into a
 * hook, collects the bounded report, and falls back to a best-effort kill if the supervisor dies without
 * its cleanup report.
 * Two phases, so the supervisor's own startup can overlap the version check: prepareSupervisor() spawns it
 * idle, start() hands it the run (or dispose() lets it exit unused).
 * A run settles as soon as the cleanup report is in and both pipes ended: the supervisor only exits after
 * that, and Node's teardown of it takes 6-15 ms nobody needs to wait for.
 */
import { assertNever } from '../../util/assert-never.ts';
import { identityOf } from '../../process/proc-stat.ts';
import { readProcStat } from '../../process/proc-table.ts';
import { killLeftovers } from './fallback-kill.ts';
import { cleanupBackendFor, type CleanupBackend } from './cleanup-backend.ts';
import { endLostRunCgroup } from './lost-cgroup.ts';
import { runCgroupDir } from '../../process/cgroup.ts';
import { SPAWN_ERROR_NO_CODE, type ControlMessage, type ProbeOutcome, type ProcessIdentity, type ReportMessage, type TerminateReason } from '../protocol.ts';
import { readReports } from './report-reader.ts';
import { readInSlices } from './sliced-reader.ts';
import { getSupervisorCommand, getSupervisorEnv, type SupervisorCommand } from './supervisor-command.ts';

export { getSupervisorCommand };
export type { SupervisorCommand };

/** Ladder defaults: SIGINT lets the CLI tear down its tools (measured ~0.1 s streaming, ~1.6 s with Bash). */
export const DEFAULT_INTERRUPT_GRACE_MS = 2000;
export const DEFAULT_TERM_GRACE_MS = 1500;
export const DEFAULT_KILL_GRACE_MS = 1000;
export const DEFAULT_TRACK_INTERVAL_MS = 100;
/** After the supervisor exits, its pipes get this long to deliver their last bytes. */
export const SUPERVISOR_PIPE_GRACE_MS = 2000;
/** How long after its own timeout the adapter stops waiting for a probe's answer (the supervisor is then stuck). */
export const PROBE_ANSWER_MARGIN_MS = 5000;
/** Native stdout is ingested at most this much per event-loop turn, so requests never queue behind floods. */
export const STDOUT_SLICE_BYTES = 16 * 1024;

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
  /** null when the run settled on the supervisor's final report, before its exit was observed. */
  readonly supervisorExit: { readonly code: number | null; readonly signal: string | null } | null;
  readonly stderrTail: string;
  readonly stderrBytes: number;
  /** Processes the adapter itself SIGKILLed because the supervisor left no cleanup report. */
  readonly fallbackKilled: number;
  /**
   * 'cgroup' when the supervisor left no report but the adapter ended the run's cgroup and the kernel showed
   * it empty (then removed): cleanup is proven all the same. null otherwise.
   */
  readonly fallbackProof: 'cgroup' | null;
}

export interface SupervisedRun {
  /** The first reason wins; later calls and calls after the run ended do nothing. */
  terminate(reason: TerminateReason): void;
  /** SIGKILLs a supervisor that stopped answering (never after Node reaped it); the fallback then runs. */
  killSupervisor(): void;
  readonly supervisorPid: number | null;
  readonly done: Promise<SupervisedOutcome>;
}

/** One short command run by the supervisor inside the run (the version check, `--help`). */
export type ProbeSpec = Omit<Extract<ControlMessage, { type: 'probe' }>, 'type' | 'id' | 'marker' | 'cgroup'>;

export interface PrepareOptions {
  /** The run's marker (default: a fresh one). */
  readonly marker?: string;
  /** How cleanup is proven (default: this process's detected backend, lib/supervisor/parent/cleanup-backend.ts). */
  readonly cleanup?: CleanupBackend;
}

/**
 * A supervisor started ahead of its run. It may run probes (each in the run's group, with the run's marker,
 * accounted for in the final cleanup like the run itself), then `start` hands it the run; `dispose` instead
 * closes its control pipe: it ends whatever the probes left and reports cleanup.
 */
export interface PreparedSupervisor {
  readonly supervisorPid: number | null;
  /** The cgroup base its run's cgroup is made under; null when cleanup is proven by /proc scans. */
  readonly cgroup: string | null;
  /** Runs one probe; resolves with its outcome (`cancelled` once dispose was called while it ran). */
  probe(spec: ProbeSpec): Promise<ProbeOutcome>;
  /**
   * The identity `file` had around its latest answered probe (lib/supervisor/file-id.ts); null when that probe
   * cannot vouch for a file (it changed while the probe ran, or could not be read); undefined when no probe
   * of it was answered. `start` binds the run to it: the supervisor refuses a file that is no longer the one
   * whose version was checked.
   */
  probedFile(file: string): string | null | undefined;
  /**
   * The image that gave that latest answer, alone (the probe's `image_id`): equal to probedFile when the
   * file itself answered; another identity when a launcher exec'd another binary; null when unbound.
   */
  probedImage(file: string): string | null | undefined;
  /** Sends `spawn`; at most once, never after dispose. */
  start(spec: SupervisedSpec, hooks: SupervisedHooks): SupervisedRun;
  /** Lets a supervisor go that will not start a run; resolves with its cleanup outcome (also after start). */
  dispose(): Promise<SupervisedOutcome>;
  /** SIGKILLs a supervisor that stopped answering (never after Node reaped it); the fallback then runs. */
  kill(): void;
  /** Resolves once the supervisor process exited and its pipes closed. */
  readonly exited: Promise<void>;
}

/**
 * Starts one supervised run; `done` settles after the supervisor exited and every pipe was drained.
 * Only specs, fixtures/supervisor-parent.ts and the benchmark call this one-call form (the adapter prepares
 * the supervisor first, during the version check); it stays here beside prepareSupervisor because it is
 * that, started at once, and a copy in spec/ could drift from it.
 */
export function startSupervised(spec: SupervisedSpec, hooks: SupervisedHooks, options: PrepareOptions = {}): SupervisedRun {
  return prepareSupervisor(spec.supervisorCommand, options).start(spec, hooks);
}

/** A fresh run marker: 128 random bits, hex. */
export function newRunMarker(): string {
  return process.getBuiltinModule('node:crypto').randomBytes(16).toString('hex');
}

/** Spawns a supervisor that waits for its run; nothing runs until `probe` or `start`. */
export function prepareSupervisor(command: SupervisorCommand = getSupervisorCommand(), options: PrepareOptions = {}): PreparedSupervisor {
  const marker = options.marker ?? newRunMarker();
  const cleanupBackend = options.cleanup ?? cleanupBackendFor();
  const cgroup = cleanupBackend.kind === 'cgroup' ? cleanupBackend.base : null;
  // child_process is loaded at the first supervisor, not at startup (docs/benchmarks.md, cold start).
  const child = process.getBuiltinModule('node:child_process').spawn(command.file, [...command.args], {
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: getSupervisorEnv(process.env),
    windowsHide: true,
  });
  // Unreaped until its exit event, so this identity is stable for the fallback.
  const supervisorStat = child.pid === undefined ? null : readProcStat(child.pid);
  const supervisorId = supervisorStat ? identityOf(supervisorStat) : null;

  let hooks: SupervisedHooks | null = null;
  let phase: 'idle' | 'started' | 'disposed' = 'idle';
  let spawned: ProcessIdentity | null = null;
  let spawnError: SupervisedOutcome['spawnError'] = null;
  let exit: SupervisedOutcome['exit'] = null;
  let cleanup: CleanupReport | null = null;
  let terminated = false;
  let controlOpen = true;
  let nextProbeId = 0;
  const probes = new Map<number, (outcome: ProbeOutcome) => void>();
  const probeFiles = new Map<number, string>();
  /** File → identity at its latest answered probe. */
  const probedFiles = new Map<string, string | null>();
  /** File → the image that gave its latest answered probe. */
  const probedImages = new Map<string, string | null>();
  const endProbes = (outcome: ProbeOutcome): void => {
    for (const resolve of probes.values()) resolve(outcome);
    probes.clear();
  };

  const onReport = (message: ReportMessage): void => {
    switch (message.type) {
      case 'probe_result': {
        const resolve = probes.get(message.id);
        probes.delete(message.id);
        const file = probeFiles.get(message.id);
        probeFiles.delete(message.id);
        if (file !== undefined && resolve !== undefined) {
          probedFiles.set(file, message.fileId);
          probedImages.set(file, message.imageId);
        }
        resolve?.(message.outcome);
        return;
      }
      case 'spawned': spawned = { pid: message.pid, start: message.start }; break;
      case 'spawn_error': spawnError = { code: message.code, message: message.message }; break;
      case 'exit': exit = { code: message.code, signal: message.signal }; break;
      case 'cleanup': cleanup = message; endProbes({ kind: 'cancelled' }); break;
      default: assertNever(message);
    }
    hooks?.onReport?.(message);
  };
  const send = (message: ControlMessage): void => {
    if (!controlOpen) return;
    child.stdin.write(JSON.stringify(message) + '\n');
  };
  child.stdin.on('error', () => { controlOpen = false; });
  let settleEarly = (): void => {};
  // Native stdout (nothing comes before `start`; whatever might come then is drained, not kept).
  const stdout = readInSlices(child.stdout, STDOUT_SLICE_BYTES, (slice) => { hooks?.onStdout(slice); }, () => settleEarly());
  const reports = readReports(child.stderr, onReport, () => settleEarly());

  let resolveExited = (): void => {};
  const exited = new Promise<void>((resolve) => { resolveExited = resolve; });
  const done = new Promise<SupervisedOutcome>((resolve) => {
    let supervisorExit: SupervisedOutcome['supervisorExit'] = null;
    let pipeTimer: NodeJS.Timeout | null = null;
    let settled = false;
    let fallbackKilled = 0;
    let fallbackProof: 'cgroup' | null = null;
    let lostCgroup: Promise<void> | null = null;
    const settle = (): void => {
      if (settled) return;
      settled = true;
      reports.end();
      endProbes({ kind: 'spawn_error', message: 'the supervisor ended before the probe finished' });
      const report: CleanupReport | null = cleanup;
      resolve({
        spawned, spawnError, exit, cleanup: report, supervisorExit, fallbackKilled, fallbackProof,
        stderrTail: report?.stderr_tail ?? '',
        stderrBytes: report?.stderr_bytes ?? 0,
      });
    };
    settleEarly = () => { if (cleanup !== null && stdout.ended() && reports.ended()) settle(); };
    child.once('exit', (code, signal) => {
      supervisorExit = { code, signal };
      controlOpen = false;
      child.stdin.destroy();
      // The supervisor exits by itself (code 0) only after its report was written; any other end means it
      // died mid-run. Act at once: every moment waited lets a dying native orphan its children.
      if ((code !== 0 || signal !== null) && cleanup === null) {
        // The run's cgroup, if the supervisor had made one, holds every process of the run: end it there.
        const dir = cgroup === null || supervisorId === null ? null : runCgroupDir(cgroup, supervisorId);
        lostCgroup = dir === null ? null : endLostRunCgroup(dir, DEFAULT_KILL_GRACE_MS).then((lost) => {
          if (lost.proven) fallbackProof = 'cgroup';
          if (!lost.existed) fallbackKilled += killLeftovers(supervisorId, spawned, marker);
        });
        if (lostCgroup === null) fallbackKilled += killLeftovers(supervisorId, spawned, marker);
      }
      // A process that escaped could still hold our read ends' peers open; do not wait on it forever.
      pipeTimer = setTimeout(() => { child.stdout.destroy(); child.stderr.destroy(); }, SUPERVISOR_PIPE_GRACE_MS);
      pipeTimer.unref();
    });
    child.once('close', () => {
      if (pipeTimer) clearTimeout(pipeTimer);
      stdout.flush();
      const lost = lostCgroup;
      if (lost !== null) {
        void lost.then(() => { settle(); resolveExited(); });
        return;
      }
      // A second sweep: whatever was re-parented or started while the first one ran.
      if (!settled && cleanup === null) fallbackKilled += killLeftovers(supervisorId, spawned, marker);
      settle();
      resolveExited();
    });
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return;
      controlOpen = false;
      spawnError = { code: error.code ?? SPAWN_ERROR_NO_CODE, message: error.message };
      settle();
      resolveExited();
    });
  });

  return {
    supervisorPid: child.pid ?? null,
    cgroup,
    exited,
    probe(spec) {
      if (phase !== 'idle' || !controlOpen || child.pid === undefined) return Promise.resolve({ kind: 'spawn_error', message: `the supervisor is ${phase === 'idle' ? 'gone' : phase}` });
      const id = nextProbeId++;
      const result = new Promise<ProbeOutcome>((resolve) => {
        // The supervisor kills the probe at its timeout; a supervisor that stopped answering does not, so the
        // adapter gives up a little later on its own (the caller then disposes, which is bounded too).
        const timer = setTimeout(() => {
          probes.delete(id);
          probeFiles.delete(id);
          resolve({ kind: 'timeout' });
        }, spec.timeoutMs + PROBE_ANSWER_MARGIN_MS);
        timer.unref();
        probes.set(id, (outcome) => {
          clearTimeout(timer);
          resolve(outcome);
        });
      });
      probeFiles.set(id, spec.file);
      send({ type: 'probe', id, marker, cgroup, file: spec.file, args: spec.args, cwd: spec.cwd, env: spec.env, timeoutMs: spec.timeoutMs, maxStdoutBytes: spec.maxStdoutBytes });
      return result;
    },
    kill() { child.kill('SIGKILL'); },
    probedFile: (file) => probedFiles.get(file),
    probedImage: (file) => probedImages.get(file),
    start(spec, runHooks) {
      if (phase !== 'idle') throw new Error(`supervisor already ${phase}`);
      phase = 'started';
      hooks = runHooks;
      send({
        type: 'spawn',
        marker,
        cgroup,
        file: spec.file,
        args: spec.args,
        cwd: spec.cwd,
        env: spec.env,
        stdin: spec.stdin,
        interruptGraceMs: spec.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS,
        termGraceMs: spec.termGraceMs ?? DEFAULT_TERM_GRACE_MS,
        killGraceMs: spec.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
        trackIntervalMs: spec.trackIntervalMs ?? DEFAULT_TRACK_INTERVAL_MS,
        expectFileId: probedFiles.get(spec.file) ?? null,
        expectImageId: probedImages.get(spec.file) ?? null,
      });
      return {
        terminate(reason) {
          if (terminated) return;
          terminated = true;
          send({ type: 'terminate', reason });
        },
        // ChildProcess.kill is a no-op once the exit was reaped, so a recycled pid is never signalled.
        killSupervisor() { child.kill('SIGKILL'); },
        supervisorPid: child.pid ?? null,
        done,
      };
    },
    dispose() {
      if (phase === 'idle') {
        phase = 'disposed';
        // EOF before any `spawn`: the supervisor ends a running probe and what probes left, reports, exits.
        if (controlOpen) child.stdin.end();
        controlOpen = false;
      }
      return done;
    },
  };
}
