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

/** One supervised run's moving parts: the first termination reason wins, and every disposer runs at the end. */
interface Supervision {
  readonly scope: RunScope;
  termination: Termination | null;
  /** clock.now() when native stdout last arrived (the idle timer measures quiet from it). */
  lastActivity: number;
  run: SupervisedRun | null;
  readonly disposers: Array<() => void>;
}

export async function supervise(scope: RunScope, supervisor: PreparedSupervisor): Promise<Classification> {
  const { signal } = scope;
  const sv: Supervision = { scope, termination: null, lastActivity: scope.deps.clock.now(), run: null, disposers: [] };
  const splitter = frameIntoIngest(sv);
  const run = startNative(sv, supervisor, splitter);
  sv.run = run;
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

/** Stops the run for the first reason given; later reasons change nothing. */
function stop(sv: Supervision, reason: Termination): void {
  if (sv.termination !== null) return;
  const { deps, hooks } = sv.scope;
  sv.termination = reason;
  hooks.onState('stopping');
  sv.run?.terminate(reason);
  // The ladder is bounded; a supervisor that outlives it by a margin is wedged (e.g. stopped): kill it
  // so the run settles through the adapter's fallback instead of hanging.
  sv.disposers.push(deps.clock.setTimeout(() => sv.run?.killSupervisor(), supervisorDeadlineMs(deps)));
}

/** Frames native stdout into ingestion; a crossed bound stops the run, and after it no further frame is ingested. */
function frameIntoIngest(sv: Supervision): LineSplitter {
  const { ingest } = sv.scope;
  const onSignal = (value: IngestSignal): void => {
    if (value !== 'continue') stop(sv, value);
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
      ...deps.supervision,
    },
    {
      onStdout(chunk) {
        sv.lastActivity = deps.clock.now();
        hooks.onStdout?.(chunk);
        splitter.push(chunk);
      },
      onReport(message) {
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
      const quiet = clock.now() - sv.lastActivity;
      if (quiet >= idleMs) stop(sv, 'idle_timeout');
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
  return finish(scope, { termination, spawnError: outcome.spawnError, outcome, preSpawnError: null });
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
