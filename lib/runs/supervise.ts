/**
 * The supervised native process of one run: its stdout framed into ingestion, its stop on cancel, timeout,
 * idle timeout or a crossed bound, and the time bounds after which a silent supervisor is killed.
 */
import { createLineSplitter, type LineSplitter } from '../util/line-splitter.ts';
import type { Classification, Termination } from './classify.ts';
import { MAX_NATIVE_FRAME_BYTES } from '../native/events.ts';
import type { IngestSignal } from './ingest.ts';
import {
  DEFAULT_INTERRUPT_GRACE_MS,
  DEFAULT_KILL_GRACE_MS,
  DEFAULT_TERM_GRACE_MS,
  SUPERVISOR_PIPE_GRACE_MS,
} from '../supervisor/parent/run-supervised.ts';
import type { PreparedSupervisor, SupervisedOutcome, SupervisedRun } from '../supervisor/parent/run-supervised.ts';
import { PROBE_ONLY_LADDER, SPAWN_ERROR_NO_CODE } from '../supervisor/protocol.ts';
import { finish } from './run-finish.ts';
import type { ExecuteDeps, RunScope } from './run-scope.ts';
import type { CancelStep } from './types.ts';
import { interruptRequestLine } from '../native/argv.ts';

/** One supervised run's moving parts: the first termination reason wins, and every disposer runs at the end. */
interface Supervision {
  readonly scope: RunScope;
  termination: Termination | null;
  /** The native was spawned (a turn can be interrupted in-band only then). */
  spawned: boolean;
  /** A cancel's interrupt was sent and its turn's result has not come yet. */
  interruptPending: boolean;
  /** 'interrupt' once the interrupted turn ended with its result; 'ladder' when the ladder had to run after all. */
  cancelStep: CancelStep | undefined;
  /** Disposes the pending interrupt grace (result, then exit), if any. */
  disposeGrace: () => void;
  /** clock.now() when native stdout last arrived (the idle timer measures quiet from it). */
  lastActivity: number;
  run: SupervisedRun | null;
  readonly disposers: Array<() => void>;
}

/** How long an interrupted turn has to end with its own result before the ladder runs. */
export const INTERRUPT_RESULT_GRACE_MS = 2000;
/** How long the native has to exit by itself once that result came and its stdin ended. */
export const INTERRUPT_EXIT_GRACE_MS = 2000;
/** The one interrupt a run ever sends; its acknowledgement names it. */
export const INTERRUPT_REQUEST_ID = 'claude-run-mcp-interrupt';

export async function supervise(scope: RunScope, supervisor: PreparedSupervisor): Promise<Classification> {
  const { signal } = scope;
  const sv: Supervision = {
    scope,
    termination: null,
    spawned: false,
    interruptPending: false,
    cancelStep: undefined,
    disposeGrace: () => {},
    lastActivity: scope.deps.clock.now(),
    run: null,
    disposers: [],
  };
  const splitter = frameIntoIngest(sv);
  const run = startNative(sv, supervisor, splitter);
  sv.run = run;
  scope.input.attach({ send: (data) => run.input(data), end: () => run.endInput() });
  stopOnDeadline(sv);
  stopWhenIdle(sv);
  const onAbort = (): void => stop(sv, 'cancel');
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  try {
    const outcome = await run.done;
    splitter.end();
    return judgeSupervised(sv, run, outcome);
  } finally {
    signal.removeEventListener('abort', onAbort);
    for (const dispose of sv.disposers) dispose();
  }
}

/**
 * Stops the run for the first reason given; later reasons change nothing. A cancel asks the native first
 * (its own interrupt, on its stdin) and only runs the ladder when that did not end it.
 */
function stop(sv: Supervision, reason: Termination): void {
  if (sv.termination !== null) return;
  sv.termination = reason;
  sv.scope.hooks.onState('stopping');
  if (reason === 'cancel' && closeIdleOpenRun(sv)) return;
  sv.scope.open?.close(reason === 'cancel' ? 'cancel' : 'run_ended');
  if (reason === 'cancel' && interruptTurn(sv)) return;
  terminate(sv, reason);
}

/**
 * Sends the interrupt control request; false when there is no turn to interrupt in-band (not spawned yet,
 * stdin already ended). The turn must end with its result within INTERRUPT_RESULT_GRACE_MS and the native
 * exit within INTERRUPT_EXIT_GRACE_MS after its stdin ended; otherwise the ladder runs.
 */
function interruptTurn(sv: Supervision): boolean {
  if (!sv.spawned || !sv.scope.input.send(interruptRequestLine(INTERRUPT_REQUEST_ID))) return false;
  sv.interruptPending = true;
  armGrace(sv, INTERRUPT_RESULT_GRACE_MS);
  return true;
}

/** An open run idle between turns has no turn to interrupt: its stdin ends, and the native must exit by itself. */
function closeIdleOpenRun(sv: Supervision): boolean {
  if (sv.scope.open?.endIfIdle('cancel') !== true) return false;
  sv.cancelStep = 'close';
  armGrace(sv, INTERRUPT_EXIT_GRACE_MS);
  return true;
}

function armGrace(sv: Supervision, ms: number): void {
  sv.disposeGrace();
  const dispose = sv.scope.deps.clock.setTimeout(() => {
    // From here a result (e.g. written on the ladder's SIGINT) no longer counts as the interrupt's.
    sv.interruptPending = false;
    sv.cancelStep = 'ladder';
    terminate(sv, 'cancel');
  }, ms);
  sv.disposeGrace = dispose;
  sv.disposers.push(dispose);
}

function terminate(sv: Supervision, reason: Termination): void {
  const { deps } = sv.scope;
  sv.disposeGrace();
  sv.run?.terminate(reason);
  // The ladder is bounded; a supervisor that outlives it by a margin is wedged (e.g. stopped): kill it
  // so the run settles through the adapter's fallback instead of hanging.
  sv.disposers.push(deps.clock.setTimeout(() => sv.run?.killSupervisor(), supervisorDeadlineMs(deps)));
}

/** Frames native stdout into ingestion; a crossed bound stops the run, and after it no further frame is ingested. */
function frameIntoIngest(sv: Supervision): LineSplitter {
  const { ingest, input, open } = sv.scope;
  let results = 0;
  const onSignal = (value: IngestSignal): void => {
    if (value !== 'continue') stop(sv, value);
    // The turn is over: ending stdin lets the native exit by itself (measured: 40-150 ms after EOF). An open
    // run's conversation decides instead: the next queued message, idle, or its end.
    if (ingest.resultsSeen() !== results) {
      results = ingest.resultsSeen();
      open?.onTurnResult(ingest.snapshot().final);
      if (open === null || sv.termination !== null) input.end();
      if (sv.interruptPending) {
        sv.interruptPending = false;
        sv.cancelStep = 'interrupt';
        armGrace(sv, INTERRUPT_EXIT_GRACE_MS);
      }
    }
  };
  return createLineSplitter({
    maxLineBytes: MAX_NATIVE_FRAME_BYTES,
    onLine: (frame) => {
      if (sv.termination === null || sv.termination === 'cancel' || sv.termination === 'timeout' || sv.termination === 'idle_timeout')
        onSignal(ingest.onFrame(frame));
    },
    onOversize: (bytes) => onSignal(ingest.onOversizeFrame(bytes)),
  });
}

function startNative(sv: Supervision, supervisor: PreparedSupervisor, splitter: LineSplitter): SupervisedRun {
  const { deps, prepared, hooks } = sv.scope;
  const { request, bin, argv } = prepared;
  return supervisor.start(
    {
      file: bin,
      args: argv.args,
      cwd: request.cwd,
      env: prepared.env === undefined ? deps.nativeEnv : { ...deps.nativeEnv, ...prepared.env },
      stdin: argv.stdin,
      keepStdinOpen: argv.streamInput,
      ...deps.supervision,
    },
    {
      onStdout(chunk) {
        sv.lastActivity = deps.clock.now();
        hooks.onStdout?.(chunk);
        splitter.push(chunk);
      },
      onReport(message) {
        if (message.type === 'spawned') sv.spawned = true;
        if (message.type === 'spawned' && sv.termination === null) hooks.onState('running');
      },
    },
  );
}

function stopOnDeadline(sv: Supervision): void {
  const { deadline } = sv.scope;
  const onDeadline = (): void => stop(sv, 'timeout');
  if (deadline.aborted) onDeadline();
  else deadline.addEventListener('abort', onDeadline, { once: true });
  sv.disposers.push(() => deadline.removeEventListener('abort', onDeadline));
}

/** One live idle timer, re-armed for the remaining quiet time when output arrived meanwhile. */
function stopWhenIdle(sv: Supervision): void {
  const idleMs = sv.scope.prepared.request.idleTimeoutMs;
  if (idleMs === null) return;
  const { clock } = sv.scope.deps;
  let disposeIdle = (): void => {};
  const arm = (delay: number): void => {
    disposeIdle = clock.setTimeout(() => {
      // An open run idle between turns is bounded by its own idle bound; quiet counts from its last message too.
      const { open } = sv.scope;
      const quiet = clock.now() - Math.max(sv.lastActivity, open?.lastWriteAt() ?? 0);
      if (open?.phase() === 'idle') arm(idleMs);
      else if (quiet >= idleMs) stop(sv, 'idle_timeout');
      else arm(idleMs - quiet);
    }, delay);
  };
  arm(idleMs);
  sv.disposers.push(() => disposeIdle());
}

function judgeSupervised(sv: Supervision, run: SupervisedRun, outcome: SupervisedOutcome): Classification {
  const { scope, termination } = sv;
  if (run.supervisorPid === null) {
    // The supervisor itself never started (spawn failed: EAGAIN, EMFILE, ENOENT): nothing of the run exists.
    const message = outcome.spawnError?.message ?? 'the supervisor process could not be started';
    return finish(scope, {
      termination,
      spawnError: { code: outcome.spawnError?.code ?? SPAWN_ERROR_NO_CODE, message },
      outcome: null,
      preSpawnError: null,
    });
  }
  scope.hooks.onOutcome?.(outcome);
  // An interrupt whose turn never wrote its result did not end the run in-band, whatever ended it then; a
  // supervisor that had started (a probe at least) was ended by its ladder.
  const step = sv.interruptPending ? 'ladder' : (sv.cancelStep ?? 'ladder');
  const cancelStep = termination === 'cancel' ? { cancelStep: step } : {};
  return finish(scope, { termination, spawnError: outcome.spawnError, outcome, preSpawnError: null, ...cancelStep });
}

/**
 * Lets a supervisor go before its run started; one that stops answering (e.g. stopped) is SIGKILLed once its
 * probe-only ladder, the pipe grace and the margin have passed, so the run settles through the fallback.
 */
export async function disposeWithin(deps: ExecuteDeps, supervisor: PreparedSupervisor): Promise<SupervisedOutcome> {
  const { interruptGraceMs, termGraceMs, killGraceMs } = PROBE_ONLY_LADDER;
  const cancel = deps.clock.setTimeout(
    () => supervisor.kill(),
    interruptGraceMs + termGraceMs + killGraceMs + SUPERVISOR_PIPE_GRACE_MS + SUPERVISOR_MARGIN_MS,
  );
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
  return (
    (s.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS) +
    (s.termGraceMs ?? DEFAULT_TERM_GRACE_MS) +
    (s.killGraceMs ?? DEFAULT_KILL_GRACE_MS) +
    SUPERVISOR_PIPE_GRACE_MS +
    SUPERVISOR_MARGIN_MS
  );
}
