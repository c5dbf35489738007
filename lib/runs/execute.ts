/**
 * Executes one reserved run: session serialization → version assertion → supervised native process →
 * bounded ingestion → classification. Every wait is bounded by the run's timeouts or its cancel signal;
 * the outcome is decided only after the supervisor's cleanup report (or its absence) is known.
 */
import { createLineSplitter } from '../util/line-splitter.ts';
import type { Clock } from '../util/clock.ts';
import type { JsonObject } from '../util/json.ts';
import { classifyRun, type Classification, type ClassifyInput, type Termination } from './classify.ts';
import { MAX_NATIVE_FRAME_BYTES, type EventKind } from '../native/events.ts';
import type { NativeArgv } from '../native/argv.ts';
import type { NativeQueryFn } from '../native/version.ts';
import { isToolError, type ToolErrorData } from '../tool-errors.ts';
import { createIngest, type Ingest } from './ingest.ts';
import { sessionLockKeys, type SessionLock } from './session-lock.ts';
import type { RunRequest, RunState } from './types.ts';
import { DEFAULT_INTERRUPT_GRACE_MS, DEFAULT_KILL_GRACE_MS, DEFAULT_TERM_GRACE_MS, SUPERVISOR_PIPE_GRACE_MS } from '../supervisor/parent/run-supervised.ts';
import type { PreparedSupervisor, SupervisedOutcome, SupervisedRun, SupervisedSpec } from '../supervisor/parent/run-supervised.ts';
import type { SupervisorCommand } from '../supervisor/parent/supervisor-command.ts';
import { PROBE_ONLY_LADDER, SPAWN_ERROR_NO_CODE, type ProcessIdentity } from '../supervisor/protocol.ts';

export interface ExecuteDeps {
  readonly clock: Clock;
  /** Asserts the version of the binary about to run (throws a ToolError with a native_version_* code). */
  readonly checkVersion: (bin: string, query: NativeQueryFn) => Promise<void>;
  /** Starts an idle supervisor; it is prepared while the version check runs so their startups overlap. */
  readonly prepareSupervisor: (command?: SupervisorCommand) => PreparedSupervisor;
  readonly sessionLock: SessionLock;
  /** Ids of the saved conversations of a directory, newest first (for honest continue reporting). */
  readonly listSessionIds: (cwd: string) => string[];
  readonly nativeEnv: Readonly<Record<string, string>>;
  /** Ladder and tracking tuning forwarded to the supervisor. */
  readonly supervision?: Pick<SupervisedSpec, 'interruptGraceMs' | 'termGraceMs' | 'killGraceMs' | 'trackIntervalMs' | 'supervisorCommand'>;
}

export interface PreparedRun {
  readonly request: RunRequest;
  /** Absolute path of the resolved native binary. */
  readonly bin: string;
  readonly argv: NativeArgv;
  /** Variables of this run alone, set over the adapter's native environment (an ask_host run's bridge wiring). */
  readonly env?: Readonly<Record<string, string>>;
}

export interface RunExecutionHooks {
  onState(state: RunState): void;
  /** Per native event, only when progress is wanted. */
  readonly onEvent?: ((kind: EventKind, event: JsonObject) => void) | undefined;
  /** Raw native stdout bytes, before framing (the CLI projection keeps them to print them unchanged). */
  readonly onStdout?: ((chunk: Buffer) => void) | undefined;
  /** The supervised outcome, when a supervisor ran. */
  readonly onOutcome?: ((outcome: SupervisedOutcome) => void) | undefined;
}

export interface RunExecution {
  readonly ingest: Ingest;
  /** Requests cancellation; the outcome still waits for cleanup. Idempotent. */
  cancel(): void;
  readonly done: Promise<Classification>;
  /** After settling: processes the supervisor reported alive at its end ([] when none; null when unknown). */
  survivors(): readonly ProcessIdentity[] | null;
}

export function startRunExecution(deps: ExecuteDeps, runId: string, prepared: PreparedRun, hooks: RunExecutionHooks): RunExecution {
  const controller = new AbortController();
  const ingest = createIngest({ ringId: runId, ...(hooks.onEvent ? { onEvent: hooks.onEvent } : {}) });
  let survivors: readonly ProcessIdentity[] | null = [];
  const observed: RunExecutionHooks = { ...hooks, onOutcome: (outcome) => { survivors = outcome.cleanup === null ? null : outcome.cleanup.survivors; } };
  const done = execute(deps, prepared, observed, ingest, controller.signal);
  return { ingest, cancel: () => controller.abort(), done, survivors: () => survivors };
}

/** What every step of one run shares: built once per run rather than threaded as positional parameters. */
interface RunScope {
  readonly deps: ExecuteDeps;
  readonly prepared: PreparedRun;
  readonly hooks: RunExecutionHooks;
  readonly ingest: Ingest;
  /** The run's cancel signal. */
  readonly signal: AbortSignal;
  /** Aborts when timeout_seconds has passed. */
  readonly deadline: AbortSignal;
  /** The cwd's saved conversations, newest first, as last read (continue runs only; re-read after the lock). */
  knownIds: string[];
}

async function execute(deps: ExecuteDeps, prepared: PreparedRun, hooks: RunExecutionHooks, ingest: Ingest, signal: AbortSignal): Promise<Classification> {
  const { request } = prepared;
  // timeout_seconds bounds the whole run, including waiting for its conversation and the version check.
  const deadline = new AbortController();
  const disposeDeadline = deps.clock.setTimeout(() => deadline.abort(), request.timeoutMs);
  const knownIds = request.session.kind === 'continue' ? deps.listSessionIds(request.cwd) : [];
  try {
    return await executeWithin({ deps, prepared, hooks, ingest, signal, deadline: deadline.signal, knownIds });
  } finally {
    disposeDeadline();
  }
}

/** Cancel wins over the deadline; null while neither has fired. */
function interrupted(scope: RunScope): Termination | null {
  return scope.signal.aborted ? 'cancel' : scope.deadline.aborted ? 'timeout' : null;
}

/** The run ends before any process of it was started. */
function endEarly(scope: RunScope, termination: Termination | null, error: ToolErrorData | null): Classification {
  return finish(scope, { termination, spawnError: null, outcome: null, preSpawnError: error });
}

/** A wait for the session lock failed: cancel or timeout if one fired, else the lock's ToolError; anything else is a bug. */
function lockWaitFailed(scope: RunScope, error: unknown): Classification {
  const why = interrupted(scope);
  if (why !== null) return endEarly(scope, why, null);
  if (isToolError(error)) return endEarly(scope, null, error.toData());
  throw error;
}

async function executeWithin(scope: RunScope): Promise<Classification> {
  const { deps, prepared, hooks, signal, deadline } = scope;
  const { request } = prepared;

  const keys = sessionLockKeys(request.session, request.cwd, scope.knownIds[0] ?? null);
  let release: (() => void) | null = null;
  if (keys.length > 0) {
    hooks.onState('waiting_for_session');
    try {
      release = await deps.sessionLock.acquireAll(keys, AbortSignal.any([signal, deadline]));
    } catch (error) {
      return lockWaitFailed(scope, error);
    }
  }
  try {
    // A run queued on this directory may have created or extended a conversation meanwhile: judge
    // continue against the transcripts that exist now, right before spawning.
    if (request.session.kind === 'continue') {
      const newestBefore = scope.knownIds[0] ?? null;
      scope.knownIds = deps.listSessionIds(request.cwd);
      const newest = scope.knownIds[0] ?? null;
      if (newest !== null && newest !== newestBefore) {
        // The conversation this continue will extend was created while it waited: hold its key too, so a
        // resume of it cannot write at the same time. No cycle: a resume never waits for a directory key.
        try {
          const releaseNewest = await deps.sessionLock.acquire(`session:${newest}`, AbortSignal.any([signal, deadline]));
          const releaseFirst = release;
          release = () => { releaseNewest(); releaseFirst?.(); };
        } catch (error) {
          return lockWaitFailed(scope, error);
        }
      }
    }
    if (interrupted(scope) !== null) return endEarly(scope, interrupted(scope), null);
    hooks.onState('checking_version');
    // The version check runs inside the run's supervisor: whatever it leaves is the run's to end and
    // report, and a cancel or timeout ends it at once. A failed check still waits for that cleanup.
    let supervisor: PreparedSupervisor;
    try {
      supervisor = deps.prepareSupervisor(deps.supervision?.supervisorCommand);
    } catch (error) {
      // A synchronous spawn failure (EAGAIN, EMFILE): nothing was started, so nothing needs cleaning.
      return endEarly(scope, null, { code: 'spawn_failed', message: `the supervisor could not be started: ${error instanceof Error ? error.message : String(error)}` });
    }
    if (supervisor.supervisorPid === null) {
      // It never started (EAGAIN, EMFILE, ENOENT): nothing of the run exists.
      const outcome = await supervisor.dispose();
      return endEarly(scope, null, { code: 'spawn_failed', message: `the supervisor could not be started: ${outcome.spawnError?.message ?? 'unknown error'}` });
    }
    let started = false;
    try {
      const query: NativeQueryFn = (q) => supervisor.probe({ file: prepared.bin, args: q.args, cwd: request.cwd, env: deps.nativeEnv, timeoutMs: q.timeoutMs, maxStdoutBytes: q.maxStdoutBytes });
      const checked = deps.checkVersion(prepared.bin, query).then(() => null, (error: unknown) => {
        if (isToolError(error)) return error.toData();
        throw error;
      });
      const versionError = await untilAborted(checked, AbortSignal.any([signal, deadline]));
      // A passing answer about a file that changed while it was asked (an upgrade re-linking the binary
      // meanwhile) vouches for nothing: the file to run was never checked.
      const unbound = versionError === null && supervisor.probedFile(prepared.bin) === null
        ? { code: 'native_changed' as const, message: `${prepared.bin} changed while its version was checked; nothing was started` }
        : null;
      if (versionError !== null || unbound !== null || interrupted(scope) !== null) {
        const outcome = await disposeWithin(deps, supervisor);
        hooks.onOutcome?.(outcome);
        const why = interrupted(scope);
        return finish(scope, { termination: why, spawnError: null, outcome, preSpawnError: why === null ? versionError ?? unbound : null, spawned: false });
      }
      hooks.onState('starting');
      started = true;
      return await supervise(scope, supervisor);
    } finally {
      if (!started) await disposeWithin(deps, supervisor);
    }
  } finally {
    release?.();
  }
}

async function supervise(scope: RunScope, supervisor: PreparedSupervisor): Promise<Classification> {
  const { deps, prepared, hooks, ingest, signal, deadline } = scope;
  const { request, bin, argv } = prepared;
  const { clock } = deps;
  let termination: Termination | null = null;
  let lastActivity = clock.now();
  const disposers: Array<() => void> = [];

  let run: SupervisedRun | null = null;
  const stop = (reason: Termination): void => {
    if (termination !== null) return;
    termination = reason;
    hooks.onState('stopping');
    run?.terminate(reason);
    // The ladder is bounded; a supervisor that outlives it by a margin is wedged (e.g. stopped): kill it
    // so the run settles through the adapter's fallback instead of hanging.
    disposers.push(clock.setTimeout(() => run?.killSupervisor(), supervisorDeadlineMs(deps)));
  };
  const onSignal = (signalValue: ReturnType<Ingest['onFrame']>): void => {
    if (signalValue !== 'continue') stop(signalValue);
  };
  const splitter = createLineSplitter({
    maxLineBytes: MAX_NATIVE_FRAME_BYTES,
    onLine: (frame) => { if (termination === null || termination === 'cancel' || termination === 'timeout' || termination === 'idle_timeout') onSignal(ingest.onFrame(frame)); },
    onOversize: (bytes) => onSignal(ingest.onOversizeFrame(bytes)),
  });

  run = supervisor.start(
    { file: bin, args: argv.args, cwd: request.cwd, env: prepared.env === undefined ? deps.nativeEnv : { ...deps.nativeEnv, ...prepared.env }, stdin: argv.stdin, ...deps.supervision },
    {
      onStdout(chunk) {
        lastActivity = clock.now();
        hooks.onStdout?.(chunk);
        splitter.push(chunk);
      },
      onReport(message) {
        if (message.type === 'spawned' && termination === null) hooks.onState('running');
      },
    },
  );
  const onDeadline = (): void => stop('timeout');
  if (deadline.aborted) onDeadline();
  else deadline.addEventListener('abort', onDeadline, { once: true });
  disposers.push(() => deadline.removeEventListener('abort', onDeadline));
  if (request.idleTimeoutMs !== null) {
    const idleMs = request.idleTimeoutMs;
    // One live idle timer, re-armed for the remaining quiet time when output arrived meanwhile.
    let disposeIdle = (): void => {};
    const arm = (delay: number): void => {
      disposeIdle = clock.setTimeout(() => {
        const quiet = clock.now() - lastActivity;
        if (quiet >= idleMs) stop('idle_timeout');
        else arm(idleMs - quiet);
      }, delay);
    };
    arm(idleMs);
    disposers.push(() => disposeIdle());
  }
  const onAbort = (): void => stop('cancel');
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });

  try {
    const outcome = await run.done;
    splitter.end();
    if (run.supervisorPid === null) {
      // The supervisor itself never started (spawn failed: EAGAIN, EMFILE, ENOENT): nothing of the run exists.
      const message = outcome.spawnError?.message ?? 'the supervisor process could not be started';
      return finish(scope, { termination, spawnError: { code: outcome.spawnError?.code ?? SPAWN_ERROR_NO_CODE, message }, outcome: null, preSpawnError: null });
    }
    hooks.onOutcome?.(outcome);
    return finish(scope, { termination, spawnError: outcome.spawnError, outcome, preSpawnError: null });
  } finally {
    signal.removeEventListener('abort', onAbort);
    for (const dispose of disposers) dispose();
  }
}

/**
 * Lets a supervisor go before its run started; one that stops answering (e.g. stopped) is SIGKILLed once its
 * probe-only ladder, the pipe grace and the margin have passed, so the run settles through the fallback.
 */
async function disposeWithin(deps: ExecuteDeps, supervisor: PreparedSupervisor): Promise<SupervisedOutcome> {
  const { interruptGraceMs, termGraceMs, killGraceMs } = PROBE_ONLY_LADDER;
  const cancel = deps.clock.setTimeout(() => supervisor.kill(), interruptGraceMs + termGraceMs + killGraceMs + SUPERVISOR_PIPE_GRACE_MS + SUPERVISOR_MARGIN_MS);
  try {
    return await supervisor.dispose();
  } finally {
    cancel();
  }
}

/** Ladder total plus pipe grace plus margin: how long a terminated run may take before its supervisor is killed. */
export const SUPERVISOR_MARGIN_MS = 5_000;
function supervisorDeadlineMs(deps: ExecuteDeps): number {
  const s = deps.supervision ?? {};
  return (s.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS) + (s.termGraceMs ?? DEFAULT_TERM_GRACE_MS) + (s.killGraceMs ?? DEFAULT_KILL_GRACE_MS) + SUPERVISOR_PIPE_GRACE_MS + SUPERVISOR_MARGIN_MS;
}

interface FinishInput {
  readonly termination: Termination | null;
  readonly spawnError: SupervisedOutcome['spawnError'];
  readonly outcome: SupervisedOutcome | null;
  /** An error decided before the native process was spawned (version, session lock). */
  readonly preSpawnError: ToolErrorData | null;
  /** False when the run ended before the native process was asked for (only probes ran). */
  readonly spawned?: boolean;
}

/**
 * The run's classification, judged once. When only probes ran, the run is judged as if nothing had been
 * started and the probes' cleanup then becomes the run's.
 */
function finish(scope: RunScope, input: FinishInput): Classification {
  const { outcome } = input;
  const probesOnly = input.spawned === false && outcome !== null;
  const cleanup = cleanupOf(outcome);
  const native = probesOnly ? null : outcome;
  const classification = classifyRun({
    ingest: scope.ingest.snapshot(),
    exit: native?.exit ?? null,
    termination: input.termination,
    spawnError: input.spawnError,
    cleanup: probesOnly ? NOTHING_STARTED : cleanup,
    stderrTail: native?.stderrTail ?? '',
    session: scope.prepared.request.session,
    continueKnownSessionIds: scope.knownIds,
  });
  const judged = withRunError(classification, input, native);
  return probesOnly ? withProbeCleanup(judged, cleanup) : judged;
}

/** The error that outranks what the native output looks like, when the run has one. */
function withRunError(classification: Classification, input: FinishInput, native: SupervisedOutcome | null): Classification {
  if (input.preSpawnError !== null && input.termination === null) {
    return { ...classification, is_error: true, error: input.preSpawnError };
  }
  // The supervisor died mid-run: its cgroup proves cleanup, but how the native ended is unknown. That loss
  // is the run's error, not whatever the cut-off output looks like.
  if (native !== null && native.cleanup === null && native.exit === null && input.termination === null) {
    return { ...classification, is_error: true, error: { code: 'supervisor_failed', message: describeLostSupervisor(native) } };
  }
  return classification;
}

/** A run that ended while only probes ran: their cleanup, confirmed or not, is the run's. */
function withProbeCleanup(before: Classification, cleanup: ClassifyInput['cleanup']): Classification {
  if (cleanup.confirmed) return { ...before, cleanup_proof: cleanup.proof };
  const cleanupError = { code: cleanup.code ?? 'cleanup_unconfirmed', message: cleanup.error ?? 'cleanup could not be proven' };
  return { ...before, cleanup_confirmed: false, cleanup_error: cleanupError, cleanup_proof: cleanup.proof, is_error: true, error: before.error ?? cleanupError };
}

/** Nothing of the run was started, so nothing needed cleaning. */
const NOTHING_STARTED: ClassifyInput['cleanup'] = { confirmed: true, error: null, proof: null };

/** The run's cleanup as the supervisor reported it, or as the adapter established it when the supervisor died. */
function cleanupOf(outcome: SupervisedOutcome | null): ClassifyInput['cleanup'] {
  if (outcome === null) return NOTHING_STARTED;
  if (outcome.cleanup !== null) {
    const { confirmed, proof } = outcome.cleanup;
    return { confirmed, proof, error: outcome.cleanup.error ?? (confirmed ? null : survivorsText(outcome)) };
  }
  // The run's cgroup, ended by the adapter and shown empty by the kernel, proves cleanup without the report.
  if (outcome.fallbackProof === 'cgroup') return { confirmed: true, error: null, proof: 'cgroup' };
  return { confirmed: false, error: describeLostSupervisor(outcome), code: 'supervisor_failed', proof: 'process_scan' };
}

function describeLostSupervisor(outcome: SupervisedOutcome): string {
  const exit = outcome.supervisorExit;
  const how = exit === null ? 'exit not observed' : (exit.signal ?? `exit code ${String(exit.code)}`);
  if (outcome.fallbackProof === 'cgroup') return `the supervisor ended (${how}) without a cleanup report; the adapter ended the run's cgroup and the kernel showed it empty`;
  return `the supervisor ended (${how}) without a cleanup report; the adapter killed ${outcome.fallbackKilled} leftover process(es) but cannot prove nothing survived`;
}

function survivorsText(outcome: SupervisedOutcome): string {
  const survivors = outcome.cleanup?.survivors ?? [];
  return `${survivors.length} process(es) could not be proven dead: ${survivors.slice(0, 8).map((s) => s.pid).join(', ')}`;
}

/** Resolves with the promise's value, or with null as soon as `signal` aborts (the promise is left to settle). */
function untilAborted<T>(promise: Promise<T | null>, signal: AbortSignal): Promise<T | null> {
  if (signal.aborted) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve(null);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => { signal.removeEventListener('abort', onAbort); resolve(value); },
      (error: unknown) => { signal.removeEventListener('abort', onAbort); reject(error); },
    );
  });
}
