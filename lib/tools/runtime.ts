/**
 * The run manager of one adapter process: reserves runs in the registry, drives their executions and
 * settles them. One registry serves claude.run and the detached tools alike.
 */
import type { Clock } from '../util/clock.ts';
import type { RunRequest, RunResult, RunState } from '../runs/types.ts';
import { createRunRegistry, type RunEntry, type RunListItem, type RunRegistry } from '../runs/registry.ts';
import { startRunExecution, type ExecuteDeps, type PreparedRun, type RunExecution } from '../runs/execute.ts';
import type { EventKind } from '../native/events.ts';
import type { JsonObject } from '../util/json.ts';
import { ToolError } from '../tool-errors.ts';
import type { ProcessIdentity } from '../supervisor/protocol.ts';
import { attachAskHost, type AskHostDeps } from '../permission/attach.ts';
import type { PermissionBroker } from '../permission/broker.ts';
import type { WorktreeReport } from '../worktree/changes.ts';
import { worktreeFromCwd, type WorktreePlace } from '../worktree/worktree.ts';

import { buildRunResult, type LiveRun } from './run-result.ts';
import { sendToRun } from './send.ts';
import type { SendReceipt } from '../runs/turns.ts';
import type { RecordHooks } from './run-records.ts';

export type { LiveRun };

export interface Runtime {
  readonly registry: RunRegistry<LiveRun>;
  /** Reserves and starts a run; throws capacity/active-limit ToolErrors before starting anything. */
  start(
    prepared: PreparedRun,
    options: {
      acquiredBy: string | null;
      sync: boolean;
      onEvent?: ((kind: EventKind, event: JsonObject) => void) | undefined;
      /** Started as an MCP task (its record says so: only tasks answer tasks/get). */
      task?: boolean;
    },
  ): RunEntry<LiveRun>;
  /** The next message of an open run (keep_open): written now, or queued behind the running turn; throws ToolError, writing nothing. */
  send(runId: string, message: string): { entry: RunEntry<LiveRun>; receipt: SendReceipt };
  /** Retained runs in creation order; a live run shows the session id of its init event before it settles. */
  list(): RunListItem[];
  /** The result object as it stands now (completed or not). */
  resultOf(entry: RunEntry<LiveRun>): RunResult;
  /** Waits until the run settles, an open run is idle with nothing queued, ms pass, or the signal aborts; never throws. */
  waitSettled(entry: RunEntry<LiveRun>, ms: number, signal: AbortSignal): Promise<void>;
  /** Releases a completed run whose cleanup is confirmed (re-checked first); else run_active / cleanup_unconfirmed. */
  release(runId: string): RunEntry<LiveRun>;
  /**
   * Starts the end of every unsettled run at once and returns without waiting: each supervisor is told
   * to terminate now, and finishes its ladder on its own (also after this process is gone). Each run's
   * permission broker is closed at once (its questions denied).
   */
  stop(): void;
  /** Cancels every unsettled run and waits for all of them to settle. */
  close(): Promise<void>;
}

export interface RuntimeDeps extends ExecuteDeps {
  readonly clock: Clock;
  readonly random: (bytes: number) => Uint8Array;
  /** True when the process with this identity no longer exists (or is a zombie): used to re-check survivors. */
  readonly isGone: (identity: ProcessIdentity) => boolean;
  /** Needed for runs that ask their host (ask_host); without it such runs are refused. */
  readonly askHost?: Omit<AskHostDeps, 'clock' | 'random'>;
  /** Reads a worktree's changes with bounded, read-only git calls; never throws. Without it nothing is read. */
  readonly inspectWorktree?: (place: WorktreePlace) => Promise<WorktreeReport>;
  /** The server instance (a UUID) its run ids carry; default: a random one per runtime. */
  readonly instance?: () => string;
  /** Told when a run starts, learns its conversation, and settles (the runs' records, lib/tools/run-records.ts). */
  readonly records?: RecordHooks;
}

/** What the runtime keeps: its dependencies, the registry, and the worktrees its unsettled runs claimed. */
interface RuntimeState {
  readonly deps: RuntimeDeps;
  readonly registry: RunRegistry<LiveRun>;
  // A worktree name is checked free before the spawn; until the run that asked for it settles, a second run
  // asking for the same one (the native would silently share it) is refused here.
  readonly claimedWorktrees: Set<string>;
}

type StartOptions = Parameters<Runtime['start']>[1];

export function createRuntime(deps: RuntimeDeps): Runtime {
  const rt: RuntimeState = {
    deps,
    registry: createRunRegistry<LiveRun>({
      clock: deps.clock,
      random: deps.random,
      ...(deps.instance === undefined ? {} : { instance: deps.instance }),
    }),
    claimedWorktrees: new Set(),
  };
  const { registry } = rt;
  return {
    registry,
    start: (unwired, options) => startRun(rt, unwired, options),
    list: () => listRuns(rt),
    send(runId, message) {
      const entry = registry.get(runId);
      return { entry, receipt: sendToRun(entry, message) };
    },
    resultOf(entry) {
      recheck(rt, entry);
      return buildRunResult(entry);
    },
    release(runId) {
      recheck(rt, registry.get(runId));
      return registry.release(runId);
    },
    waitSettled: (entry, ms, signal) => waitSettled(deps.clock, entry, ms, signal),
    stop() {
      for (const entry of registry.entries()) {
        if (entry.completed) continue;
        entry.live.execution?.cancel();
        // Now, not when the run settles (the process is about to exit): pending questions are denied on
        // the native's stdin while it is still open.
        entry.live.broker?.close();
      }
    },
    async close() {
      const pending = registry.entries().filter((e) => !e.completed);
      for (const entry of pending) entry.live.execution?.cancel();
      await Promise.all(pending.map((e) => e.live.settled));
    },
  };
}

function startRun(rt: RuntimeState, unwired: PreparedRun, options: StartOptions): RunEntry<LiveRun> {
  const { deps } = rt;
  if (unwired.request.askHost && deps.askHost === undefined)
    throw new ToolError('invalid_arguments', 'ask_host is not available in this adapter', '/ask_host');
  // The broker exists before the slot is reserved, and is closed again when the reservation fails.
  const { prepared, broker } =
    deps.askHost === undefined
      ? { prepared: unwired, broker: null }
      : attachAskHost(unwired, { clock: deps.clock, random: deps.random, ...deps.askHost });
  const { entry, worktreeKey } = reserveRun(rt, prepared, broker, options);
  const runId = entry.run_id;
  deps.records?.started(entry, options.task === true);
  const execution = startRunExecution(deps, runId, prepared, {
    onState: (state) => {
      if (state !== 'completed') setState(rt, runId, state);
    },
    onEvent: withSessionHook(rt, entry, options.onEvent),
    ...(broker === null ? {} : { permissions: broker }),
  });
  entry.live.execution = execution;
  settleWhenDone(rt, entry, execution, worktreeKey);
  return entry;
}

/** Claims the run's worktree and its registry slot; on a refusal both are given back (and the broker closed). */
function reserveRun(
  rt: RuntimeState,
  prepared: PreparedRun,
  broker: PermissionBroker | null,
  options: StartOptions,
): { entry: RunEntry<LiveRun>; worktreeKey: string | null } {
  let worktreeKey: string | null = null;
  try {
    worktreeKey = claimWorktree(rt, prepared.request.worktree ?? null);
    const entry = rt.registry.reserve({
      acquiredBy: options.acquiredBy,
      sync: options.sync,
      live: () => newLiveRun(prepared.request, broker),
    });
    return { entry, worktreeKey };
  } catch (error) {
    broker?.close();
    if (worktreeKey !== null) rt.claimedWorktrees.delete(worktreeKey);
    throw error;
  }
}

function newLiveRun(request: RunRequest, broker: PermissionBroker | null): LiveRun {
  let markSettled = (): void => {};
  const settled = new Promise<void>((resolve) => {
    markSettled = resolve;
  });
  return { request, execution: null, broker, classification: null, worktree: null, settled, markSettled };
}

/** When the execution ends: the broker closes, the worktree is read and released, and the run settles. */
function settleWhenDone(rt: RuntimeState, entry: RunEntry<LiveRun>, execution: RunExecution, worktreeKey: string | null): void {
  const { registry, claimedWorktrees } = rt;
  const live = entry.live;
  const runId = entry.run_id;
  // Whatever is still pending when the run ends is denied.
  void execution.done.finally(() => live.broker?.close()).catch(() => {});
  execution.done.then(
    async (classification) => {
      live.worktree = await readWorktree(rt, live, execution.ingest.snapshot().init?.cwd ?? null);
      if (worktreeKey !== null) claimedWorktrees.delete(worktreeKey);
      live.classification = classification;
      registry.settle(runId, { cleanupConfirmed: classification.cleanup_confirmed, sessionId: classification.session_id });
      rt.deps.records?.settled(entry);
      live.markSettled();
    },
    (error: unknown) => {
      // An engine bug: settle honestly as unconfirmed rather than leaving the slot active forever.
      if (worktreeKey !== null) claimedWorktrees.delete(worktreeKey);
      live.classification = null;
      registry.settle(runId, { cleanupConfirmed: false, sessionId: null });
      rt.deps.records?.settled(entry);
      live.markSettled();
      process.emitWarning(`run ${runId} failed internally: ${error instanceof Error ? error.message : String(error)}`);
    },
  );
}

/** The caller's event hook, plus the record's: the conversation becomes known with the native's init event. */
function withSessionHook(
  rt: RuntimeState,
  entry: RunEntry<LiveRun>,
  onEvent: StartOptions['onEvent'],
): ((kind: EventKind, event: JsonObject) => void) | undefined {
  const records = rt.deps.records;
  if (records === undefined) return onEvent;
  return (kind, event) => {
    onEvent?.(kind, event);
    if (kind !== 'system_init') return;
    const sessionId = entry.live.execution?.ingest.snapshot().init?.session_id ?? null;
    if (sessionId !== null) records.session(entry, sessionId);
  };
}

function listRuns(rt: RuntimeState): RunListItem[] {
  const { registry } = rt;
  for (const entry of registry.entries()) recheck(rt, entry);
  return registry.list().map((item) => {
    if (item.session_id !== null || item.completed) return item;
    const init = registry.get(item.run_id).live.execution?.ingest.snapshot().init;
    return { ...item, session_id: init?.session_id ?? null };
  });
}

async function waitSettled(clock: Clock, entry: RunEntry<LiveRun>, ms: number, signal: AbortSignal): Promise<void> {
  if (entry.completed || ms <= 0 || signal.aborted) return;
  let dispose = (): void => {};
  let onAbort = (): void => {};
  // An open run that will take more messages answers once it is idle again; one whose stdin ended, once settled.
  const open = entry.live.execution?.open ?? null;
  await Promise.race([
    entry.live.settled,
    ...(open !== null && (open.phase() === 'running' || open.phase() === 'idle') ? [open.whenQuiet()] : []),
    new Promise<void>((resolve) => {
      dispose = clock.setTimeout(resolve, ms);
    }),
    new Promise<void>((resolve) => {
      onAbort = resolve;
      signal.addEventListener('abort', onAbort, { once: true });
    }),
  ]);
  dispose();
  signal.removeEventListener('abort', onAbort);
}

// A run that settled with survivors keeps its slot until they are proven gone: each read re-checks the
// exact identities the supervisor reported (pid + start time), so a later exit frees the slot honestly.
// Without a report (the supervisor itself was lost) nothing can be proven, and the run stays uncertain.
function recheck(rt: RuntimeState, entry: RunEntry<LiveRun>): void {
  if (!entry.completed || entry.cleanup_confirmed) return;
  const survivors = entry.live.execution?.survivors() ?? null;
  if (survivors === null || survivors.length === 0 || entry.live.classification === null) return;
  if (!survivors.every((identity) => rt.deps.isGone(identity))) return;
  rt.registry.confirmCleanup(entry.run_id);
  entry.live.classification = { ...entry.live.classification, cleanup_confirmed: true, cleanup_error: null };
}

function claimWorktree(rt: RuntimeState, place: WorktreePlace | null): string | null {
  if (place === null) return null;
  if (rt.claimedWorktrees.has(place.path))
    throw new ToolError('invalid_arguments', 'the worktree is being created by another run; choose another name', '/worktree');
  rt.claimedWorktrees.add(place.path);
  return place.path;
}

// The native's own cwd (system/init) is the truth: a resumed conversation runs again where it ran.
async function readWorktree(rt: RuntimeState, live: LiveRun, initCwd: string | null): Promise<WorktreeReport | null> {
  const place = (initCwd === null ? null : worktreeFromCwd(initCwd)) ?? live.request.worktree ?? null;
  if (place === null || rt.deps.inspectWorktree === undefined) return null;
  try {
    return await rt.deps.inspectWorktree(place);
  } catch {
    return null; // inspectWorktree reports its failures as data; this only guards the settle path.
  }
}

function setState(rt: RuntimeState, runId: string, state: Exclude<RunState, 'completed'>): void {
  const entry = rt.registry.get(runId);
  if (!entry.completed && entry.state !== state) rt.registry.update(runId, { state });
}
