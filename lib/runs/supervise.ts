/**
 * The supervised native process of one run: its stdout framed into ingestion, its stop on cancel, timeout,
 * idle timeout or a crossed bound, and the time bounds after which a silent supervisor is killed.
 */
import { createLineSplitter } from '../util/line-splitter.ts';
import type { Classification, Termination } from './classify.ts';
import { MAX_NATIVE_FRAME_BYTES } from '../native/events.ts';
import type { Ingest } from './ingest.ts';
import { DEFAULT_INTERRUPT_GRACE_MS, DEFAULT_KILL_GRACE_MS, DEFAULT_TERM_GRACE_MS, SUPERVISOR_PIPE_GRACE_MS } from '../supervisor/parent/run-supervised.ts';
import type { PreparedSupervisor, SupervisedOutcome, SupervisedRun } from '../supervisor/parent/run-supervised.ts';
import { PROBE_ONLY_LADDER, SPAWN_ERROR_NO_CODE } from '../supervisor/protocol.ts';
import { finish } from './run-finish.ts';
import type { ExecuteDeps, RunScope } from './run-scope.ts';

export async function supervise(scope: RunScope, supervisor: PreparedSupervisor): Promise<Classification> {
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
export async function disposeWithin(deps: ExecuteDeps, supervisor: PreparedSupervisor): Promise<SupervisedOutcome> {
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
