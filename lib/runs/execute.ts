/**
 * Executes one reserved run: session serialization → version assertion → supervised native process →
 * bounded ingestion → classification. Every wait is bounded by the run's timeouts or its cancel signal;
 * the outcome is decided only after the supervisor's cleanup report (or its absence) is known.
 */
import { spawnErrorOf, type Classification } from './classify.ts';
import { SPAWN_ERROR_NO_CGROUP } from '../supervisor/protocol.ts';
import type { NativeQueryFn } from '../native/version.ts';
import { isToolError, type ToolErrorData } from '../tool-errors.ts';
import { createIngest, type Ingest } from './ingest.ts';
import { sessionLockKeys } from './session-lock.ts';
import type { PreparedSupervisor } from '../supervisor/parent/run-supervised.ts';
import type { ProcessIdentity } from '../supervisor/protocol.ts';
import { endEarly, finish } from './run-finish.ts';
import {
  createNativeInputSlot,
  interrupted,
  type ExecuteDeps,
  type NativeInput,
  type NativeInputSlot,
  type PreparedRun,
  type RunExecutionHooks,
  type RunScope,
} from './run-scope.ts';
import { disposeWithin, INTERRUPT_REQUEST_ID, supervise } from './supervise.ts';
import { createControlTally, routeControlLine, type ControlRoute, type ControlTally } from './control-route.ts';
import { parseControlLine } from '../native/control.ts';
import type { EventKind } from '../native/events.ts';
import type { JsonObject } from '../util/json.ts';
import { createOpenConversation, type OpenConversation } from './turns.ts';

export type { ExecuteDeps, PreparedRun, RunExecutionHooks } from './run-scope.ts';
export { SUPERVISOR_MARGIN_MS } from './supervise.ts';

export interface RunExecution {
  readonly ingest: Ingest;
  /** The native's open stdin (stream-json input); see NativeInput. */
  readonly input: NativeInput;
  /** An open run's conversation (keep_open), else null. */
  readonly open: OpenConversation | null;
  /** What became of the native's control lines so far (control-route.ts). */
  control(): Readonly<ControlTally>;
  /** Requests cancellation; the outcome still waits for cleanup. Idempotent. */
  cancel(): void;
  readonly done: Promise<Classification>;
  /** After settling: processes the supervisor reported alive at its end ([] when none; null when unknown). */
  survivors(): readonly ProcessIdentity[] | null;
}

export function startRunExecution(deps: ExecuteDeps, runId: string, prepared: PreparedRun, hooks: RunExecutionHooks): RunExecution {
  const controller = new AbortController();
  const keepOpen = prepared.request.keepOpen ?? null;
  const input = createNativeInputSlot();
  const tally = createControlTally();
  const route: ControlRoute = {
    port: hooks.permissions ?? null,
    send: (line) => input.send(`${line}\n`),
    tally,
    onResponse: (response) => response.requestId === INTERRUPT_REQUEST_ID,
  };
  // Control lines stay in the events as the native wrote them; each is answered or counted here.
  const onEvent = (kind: EventKind, event: JsonObject): void => {
    hooks.onEvent?.(kind, event);
    const line = kind === 'other' ? parseControlLine(event) : null;
    if (line !== null) routeControlLine(line, route);
  };
  const ingest = createIngest({ ringId: runId, onEvent, finalPerTurn: keepOpen !== null });
  let survivors: readonly ProcessIdentity[] | null = [];
  const observed: RunExecutionHooks = {
    ...hooks,
    onOutcome: (outcome) => {
      survivors = outcome.cleanup === null ? null : outcome.cleanup.survivors;
    },
  };
  const open = keepOpen === null ? null : createOpenConversation(keepOpen, { clock: deps.clock, input, onState: hooks.onState });
  const done = execute(deps, prepared, observed, { ingest, input, open }, controller.signal);
  if (open !== null) void done.finally(() => open.onRunEnded()).catch(() => {});
  return { ingest, input, open, control: () => ({ ...tally }), cancel: () => controller.abort(), done, survivors: () => survivors };
}

async function execute(
  deps: ExecuteDeps,
  prepared: PreparedRun,
  hooks: RunExecutionHooks,
  parts: { ingest: Ingest; input: NativeInputSlot; open: OpenConversation | null },
  signal: AbortSignal,
): Promise<Classification> {
  const { request } = prepared;
  // timeout_seconds bounds the whole run, including waiting for its conversation and the version check.
  const deadline = new AbortController();
  const disposeDeadline = deps.clock.setTimeout(() => deadline.abort(), request.timeoutMs);
  const knownIds = request.session.kind === 'continue' ? deps.listSessionIds(request.cwd) : [];
  try {
    return await executeWithin({ deps, prepared, hooks, ...parts, signal, deadline: deadline.signal, knownIds });
  } finally {
    disposeDeadline();
  }
}

/** A wait for the session lock failed: cancel or timeout if one fired, else the lock's ToolError; anything else is a bug. */
function lockWaitFailed(scope: RunScope, error: unknown): Classification {
  const why = interrupted(scope);
  if (why !== null) return endEarly(scope, why, null);
  if (isToolError(error)) return endEarly(scope, null, error.toData());
  throw error;
}

/** The session keys a run holds while it runs; release() lets all of them go. */
interface HeldKeys {
  release: (() => void) | null;
}

/**
 * The phases of a run: its session keys, then the version check and the supervised native process. A run
 * without keys goes straight on, in the same tick.
 */
async function executeWithin(scope: RunScope): Promise<Classification> {
  const { request } = scope.prepared;
  const held: HeldKeys = { release: null };
  try {
    const keys = sessionLockKeys(request.session, request.cwd, scope.knownIds[0] ?? null);
    if (keys.length > 0) {
      const ended = await holdSession(scope, keys, held);
      if (ended !== null) return ended;
    }
    return await checkThenSupervise(scope);
  } finally {
    held.release?.();
  }
}

/** Waits for the run's conversation keys (kept in `held`); null when the run may go on, else how it ended. */
async function holdSession(scope: RunScope, keys: string[], held: HeldKeys): Promise<Classification | null> {
  scope.hooks.onState('waiting_for_session');
  try {
    held.release = await scope.deps.sessionLock.acquireAll(keys, AbortSignal.any([scope.signal, scope.deadline]));
  } catch (error) {
    return lockWaitFailed(scope, error);
  }
  return scope.prepared.request.session.kind === 'continue' ? holdNewestConversation(scope, held) : null;
}

/**
 * A run queued on this directory may have created or extended a conversation meanwhile: continue is judged
 * against the transcripts that exist now, right before spawning.
 */
async function holdNewestConversation(scope: RunScope, held: HeldKeys): Promise<Classification | null> {
  const {
    deps,
    prepared: { request },
  } = scope;
  const newestBefore = scope.knownIds[0] ?? null;
  scope.knownIds = deps.listSessionIds(request.cwd);
  const newest = scope.knownIds[0] ?? null;
  if (newest === null || newest === newestBefore) return null;
  // The conversation this continue will extend was created while it waited: hold its key too, so a
  // resume of it cannot write at the same time. No cycle: a resume never waits for a directory key.
  try {
    const releaseNewest = await deps.sessionLock.acquire(`session:${newest}`, AbortSignal.any([scope.signal, scope.deadline]));
    const releaseFirst = held.release;
    held.release = () => {
      releaseNewest();
      releaseFirst?.();
    };
    return null;
  } catch (error) {
    return lockWaitFailed(scope, error);
  }
}

/**
 * The version check runs inside the run's supervisor: whatever it leaves is the run's to end and report, and a
 * cancel or timeout ends it at once. A failed check still waits for that cleanup.
 */
async function checkThenSupervise(scope: RunScope): Promise<Classification> {
  const { deps, hooks } = scope;
  if (interrupted(scope) !== null) return endEarly(scope, interrupted(scope), null);
  hooks.onState('checking_version');
  let supervisor: PreparedSupervisor;
  try {
    supervisor = deps.prepareSupervisor(deps.supervision?.supervisorCommand);
  } catch (error) {
    // A synchronous spawn failure (EAGAIN, EMFILE): nothing was started, so nothing needs cleaning.
    return endEarly(scope, null, supervisorSpawnFailed(error instanceof Error ? error.message : String(error)));
  }
  if (supervisor.supervisorPid === null) {
    // It never started (EAGAIN, EMFILE, ENOENT): nothing of the run exists.
    const outcome = await supervisor.dispose();
    return endEarly(scope, null, supervisorSpawnFailed(outcome.spawnError?.message ?? 'unknown error'));
  }
  let started = false;
  try {
    const refusal = await askVersion(scope, supervisor);
    if (refusal !== null || interrupted(scope) !== null) return await endAfterProbes(scope, supervisor, refusal);
    hooks.onState('starting');
    started = true;
    return await supervise(scope, supervisor);
  } finally {
    if (!started) await disposeWithin(deps, supervisor);
  }
}

function supervisorSpawnFailed(why: string): ToolErrorData {
  return { code: 'spawn_failed', message: `the supervisor could not be started: ${why}` };
}

/** Why the binary may not run (the check's ToolError data), or null when it passed or a cancel or timeout cut it short. */
async function askVersion(scope: RunScope, supervisor: PreparedSupervisor): Promise<ToolErrorData | null> {
  const {
    deps,
    prepared: { bin, request },
  } = scope;
  const query: NativeQueryFn = (q) =>
    supervisor.probe({
      file: bin,
      args: q.args,
      cwd: request.cwd,
      env: deps.nativeEnv,
      timeoutMs: q.timeoutMs,
      maxStdoutBytes: q.maxStdoutBytes,
    });
  const checked = deps.checkVersion(bin, query).then(
    () => null,
    (error: unknown) => {
      if (isToolError(error)) return error.toData();
      throw error;
    },
  );
  const versionError = await untilAborted(checked, AbortSignal.any([scope.signal, scope.deadline]));
  if (versionError !== null) return versionError;
  // A passing answer about a file that changed while it was asked (an upgrade re-linking the binary
  // meanwhile) vouches for nothing: the file to run was never checked.
  if (supervisor.probedFile(bin) === null)
    return { code: 'native_changed', message: `${bin} changed while its version was checked; nothing was started` };
  return null;
}

/** The run ends with only probes run (a refused check, a cancel, a timeout): the supervisor's cleanup decides the rest. */
async function endAfterProbes(scope: RunScope, supervisor: PreparedSupervisor, refusal: ToolErrorData | null): Promise<Classification> {
  const outcome = await disposeWithin(scope.deps, supervisor);
  scope.hooks.onOutcome?.(outcome);
  const why = interrupted(scope);
  // A supervisor that refused the run (its forced cgroup could not be made) answered no probe: that refusal,
  // not the unanswered version check, is why nothing ran.
  const preSpawnError = outcome.spawnError?.code === SPAWN_ERROR_NO_CGROUP ? spawnErrorOf(outcome.spawnError) : refusal;
  return finish(scope, { termination: why, spawnError: null, outcome, preSpawnError: why === null ? preSpawnError : null, spawned: false });
}

/** Resolves with the promise's value, or with null as soon as `signal` aborts (the promise is left to settle). */
function untilAborted<T>(promise: Promise<T | null>, signal: AbortSignal): Promise<T | null> {
  if (signal.aborted) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve(null);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
