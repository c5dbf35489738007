/**
 * Parent side of one supervised native run: starts the supervisor detached (a new session and group that
 * the live supervisor pins), sends `spawn`, reads native stdout (written straight into our pipe) into a
 * hook, collects the bounded report, and falls back to a best-effort kill if the supervisor dies without
 * its cleanup report.
 * Two phases, so the supervisor's own startup can overlap the version check: prepareSupervisor() spawns it
 * idle, start() hands it the run (or dispose() lets it exit unused).
 * A run settles as soon as the cleanup report is in and both pipes ended: the supervisor only exits after
 * that, and Node's teardown of it takes 6-15 ms nobody needs to wait for. The link to the process itself (its
 * reports, its control pipe, its end and the fallback) is supervisor-link.ts.
 */
import { identityOf } from '../../process/proc-stat.ts';
import { readProcStat } from '../../process/proc-table.ts';
import { supportedPlatform, type SupportedPlatform } from '../../process/platform.ts';
import { cleanupBackendFor, type CleanupBackend } from './cleanup-backend.ts';
import { platformArg, type ControlMessage, type ProbeOutcome, type TerminateReason } from '../protocol.ts';
import { SUPERVISOR_PS_SCAN_ARG } from '../supervisor-args.ts';
import { getSupervisorCommand, getSupervisorEnv, type SupervisorCommand } from './supervisor-command.ts';
import { openLink, sendControl, type SupervisedHooks, type SupervisedOutcome, type SupervisorLink } from './supervisor-link.ts';
import { getServerTableSource, type TableSource } from './table-source.ts';

export { getSupervisorCommand };
export type { SupervisorCommand };
export { STDOUT_SLICE_BYTES, SUPERVISOR_PIPE_GRACE_MS } from './supervisor-link.ts';
export type { CleanupReport, SupervisedHooks, SupervisedOutcome } from './supervisor-link.ts';

/** Ladder defaults: SIGINT lets the CLI tear down its tools (measured ~0.1 s streaming, ~1.6 s with Bash). */
export const DEFAULT_INTERRUPT_GRACE_MS = 2000;
export const DEFAULT_TERM_GRACE_MS = 1500;
export const DEFAULT_KILL_GRACE_MS = 1000;
export const DEFAULT_TRACK_INTERVAL_MS = 100;
/** How long after its own timeout the adapter stops waiting for a probe's answer (the supervisor is then stuck). */
export const PROBE_ANSWER_MARGIN_MS = 5000;

export interface SupervisedSpec {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** Written to native stdin first (then closed unless keepStdinOpen); null means native stdin is /dev/null. */
  readonly stdin: string | null;
  /** Native stdin stays open for `input` until `endInput` (stream-json input); needs a non-null stdin. */
  readonly keepStdinOpen?: boolean;
  readonly interruptGraceMs?: number;
  readonly termGraceMs?: number;
  readonly killGraceMs?: number;
  readonly trackIntervalMs?: number;
  readonly supervisorCommand?: SupervisorCommand;
}

export interface SupervisedRun {
  /** The first reason wins; later calls and calls after the run ended do nothing. */
  terminate(reason: TerminateReason): void;
  /** SIGKILLs a supervisor that stopped answering (never after Node reaped it); the fallback then runs. */
  killSupervisor(): void;
  /**
   * Writes to the native's open stdin (keepStdinOpen), in order; false (nothing sent) once input was ended,
   * the run is terminating, or the supervisor's control pipe is gone.
   */
  input(data: string): boolean;
  /** Ends the native's stdin (at most once; nothing after it). */
  endInput(): void;
  readonly supervisorPid: number | null;
  readonly done: Promise<SupervisedOutcome>;
}

/** One short command run by the supervisor inside the run (the version check, `--help`). */
export type ProbeSpec = Omit<Extract<ControlMessage, { type: 'probe' }>, 'type' | 'id' | 'marker' | 'cgroup' | 'cgroupRequired'>;

export interface PrepareOptions {
  /** The run's marker (default: a fresh one). */
  readonly marker?: string;
  /** How cleanup is proven (default: this process's detected backend, lib/supervisor/parent/cleanup-backend.ts). */
  readonly cleanup?: CleanupBackend;
  /** Called once when the run was to have a cgroup and its report says it was tracked through /proc instead. */
  readonly onFallback?: () => void;
  /** The platform decision the supervisor is told (default: this process's, lib/process/platform.ts). */
  readonly platform?: SupportedPlatform;
  /** Where its table requests go (default: this server's one source, shared by all its supervisors). */
  readonly tables?: TableSource;
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
  const platform = options.platform ?? supportedPlatform();
  const cleanupBackend = options.cleanup ?? cleanupBackendFor('auto', platform);
  const cgroup = cleanupBackend.kind === 'cgroup' ? cleanupBackend.base : null;
  const cgroupRequired = cleanupBackend.kind === 'cgroup' && cleanupBackend.forced;
  // child_process is loaded at the first supervisor, not at startup (docs/benchmarks.md, cold start).
  // The server's decisions go on the command line: the cleanup source, and last the platform.
  const args = [...command.args, ...(cleanupBackend.kind === 'ps_scan' ? [SUPERVISOR_PS_SCAN_ARG] : []), platformArg(platform)];
  const child = process.getBuiltinModule('node:child_process').spawn(command.file, args, {
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: getSupervisorEnv(process.env),
    windowsHide: true,
  });
  // No /proc on darwin: the fallback there ends only what the supervisor reported (fallback-kill.ts).
  const supervisorStat = child.pid === undefined || platform !== 'linux' ? null : readProcStat(child.pid);
  const supervisorId = supervisorStat ? identityOf(supervisorStat) : null;
  const tables = options.tables ?? getServerTableSource();
  const link = openLink(child, {
    marker,
    cgroup,
    cgroupRequired,
    supervisorId,
    fallbackGraceMs: DEFAULT_KILL_GRACE_MS,
    platform,
    tables,
    ...(options.onFallback === undefined ? {} : { onFallback: options.onFallback }),
  });
  return {
    supervisorPid: child.pid ?? null,
    cgroup,
    exited: link.exited,
    probe: (spec) => runProbe(link, spec),
    kill() {
      child.kill('SIGKILL');
    },
    probedFile: (file) => link.probedFiles.get(file),
    probedImage: (file) => link.probedImages.get(file),
    start: (spec, hooks) => startRun(link, spec, hooks),
    dispose: () => dispose(link),
  };
}

function runProbe(link: SupervisorLink, spec: ProbeSpec): Promise<ProbeOutcome> {
  const { phase, child, marker, cgroup, cgroupRequired } = link;
  if (phase !== 'idle' || !link.controlOpen || child.pid === undefined)
    return Promise.resolve({ kind: 'spawn_error', message: `the supervisor is ${phase === 'idle' ? 'gone' : phase}` });
  const id = link.nextProbeId++;
  const result = new Promise<ProbeOutcome>((resolve) => {
    // The supervisor kills the probe at its timeout; a supervisor that stopped answering does not, so the
    // adapter gives up a little later on its own (the caller then disposes, which is bounded too).
    const timer = setTimeout(() => {
      link.probes.delete(id);
      link.probeFiles.delete(id);
      resolve({ kind: 'timeout' });
    }, spec.timeoutMs + PROBE_ANSWER_MARGIN_MS);
    timer.unref();
    link.probes.set(id, (outcome) => {
      clearTimeout(timer);
      resolve(outcome);
    });
  });
  link.probeFiles.set(id, spec.file);
  sendControl(link, {
    type: 'probe',
    id,
    marker,
    cgroup,
    cgroupRequired,
    file: spec.file,
    args: spec.args,
    cwd: spec.cwd,
    env: spec.env,
    timeoutMs: spec.timeoutMs,
    maxStdoutBytes: spec.maxStdoutBytes,
  });
  return result;
}

function startRun(link: SupervisorLink, spec: SupervisedSpec, hooks: SupervisedHooks): SupervisedRun {
  if (link.phase !== 'idle') throw new Error(`supervisor already ${link.phase}`);
  link.phase = 'started';
  link.hooks = hooks;
  sendControl(link, {
    type: 'spawn',
    marker: link.marker,
    cgroup: link.cgroup,
    cgroupRequired: link.cgroupRequired,
    file: spec.file,
    args: spec.args,
    cwd: spec.cwd,
    env: spec.env,
    stdin: spec.stdin,
    keepStdinOpen: spec.keepStdinOpen === true && spec.stdin !== null,
    interruptGraceMs: spec.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS,
    termGraceMs: spec.termGraceMs ?? DEFAULT_TERM_GRACE_MS,
    killGraceMs: spec.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
    trackIntervalMs: spec.trackIntervalMs ?? DEFAULT_TRACK_INTERVAL_MS,
    expectFileId: link.probedFiles.get(spec.file) ?? null,
    expectImageId: link.probedImages.get(spec.file) ?? null,
  });
  const { child } = link;
  let inputOpen = spec.keepStdinOpen === true && spec.stdin !== null;
  return {
    input(data) {
      if (!inputOpen || link.terminated || !link.controlOpen) return false;
      sendControl(link, { type: 'input', data });
      return true;
    },
    endInput() {
      if (!inputOpen) return;
      inputOpen = false;
      sendControl(link, { type: 'input_end' });
    },
    terminate(reason) {
      if (link.terminated) return;
      link.terminated = true;
      sendControl(link, { type: 'terminate', reason });
    },
    // ChildProcess.kill is a no-op once the exit was reaped, so a recycled pid is never signalled.
    killSupervisor() {
      child.kill('SIGKILL');
    },
    supervisorPid: child.pid ?? null,
    done: link.done,
  };
}

function dispose(link: SupervisorLink): Promise<SupervisedOutcome> {
  if (link.phase === 'idle') {
    link.phase = 'disposed';
    // EOF before any `spawn`: the supervisor ends a running probe and what probes left, reports, exits.
    if (link.controlOpen) link.child.stdin.end();
    link.controlOpen = false;
  }
  return link.done;
}
