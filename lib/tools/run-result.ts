/**
 * A run as the runtime keeps it, and the result the tools build from it: the settled classification, or
 * what the live stream has shown so far.
 */
import type { Classification } from '../runs/classify.ts';
import type { RunRequest, RunResult } from '../runs/types.ts';
import type { RunEntry } from '../runs/registry.ts';
import type { RunExecution } from '../runs/execute.ts';
import type { PermissionBroker } from '../permission/broker.ts';
import type { WorktreeReport } from '../worktree/changes.ts';
import type { TurnRecord } from '../runs/turns.ts';

export interface LiveRun {
  readonly request: RunRequest;
  execution: RunExecution | null;
  /** The run's permission broker when it asks its host (ask_host), else null. */
  readonly broker: PermissionBroker | null;
  classification: Classification | null;
  /** What the run changed in its worktree, read after it ended and before it settles; null without one. */
  worktree: WorktreeReport | null;
  /** Resolves when the run settled (classification set, registry settled). */
  readonly settled: Promise<void>;
  markSettled(): void;
}

/** The result of a run as the tools return it: its classification once it settled, else what is known so far. */
export function buildRunResult(entry: RunEntry<LiveRun>): RunResult {
  const live = entry.live;
  const c = live.classification;
  const ingest = live.execution?.ingest.snapshot() ?? null;
  const resumeRequested = live.request.session.kind === 'resume' || live.request.session.kind === 'continue';
  const open = live.execution?.open ?? null;
  const base = {
    run_id: entry.run_id,
    state: entry.state,
    completed: entry.completed,
    created_at: entry.created_at,
    settled_at: entry.settled_at,
    open: open?.report() ?? null,
    turns: open === null ? null : [...open.turns()],
  };
  if (c !== null) {
    return {
      ...base,
      ...c,
      worktree: live.worktree,
      resume: resumeHint(live.request, c.session_id, ingest?.init ?? null),
      cleanup_confirmed: entry.cleanup_confirmed,
      cleanup_error: entry.cleanup_confirmed ? null : c.cleanup_error,
    };
  }
  const sessionId = ingest?.init?.session_id ?? entry.session_id;
  // An open run between turns already has answers: the latest turn's is shown, as its final will be.
  const latest = base.turns?.at(-1) ?? null;
  return {
    ...latestTurnFields(latest),
    ...base,
    is_error: entry.completed,
    error: entry.completed ? { code: 'supervisor_failed', message: 'the run ended without an outcome (internal failure)' } : null,
    native_error: null,
    session_id: sessionId,
    resume_requested: resumeRequested,
    resumed: null,
    model: ingest?.assistant_model ?? ingest?.init?.model ?? null,
    structured_output: null,
    unfinished_subagents: null,
    resume: resumeHint(live.request, sessionId, ingest?.init ?? null),
    worktree: live.worktree,
    final: null,
    model_usage_this_call: null,
    cost_scope: 'conversation',
    num_turns: null,
    permission_denials: null,
    api_retries: ingest?.api_retries ?? 0,
    exit_code: null,
    signal: null,
    timed_out: false,
    cancelled: false,
    cancel_step: null,
    cleanup_confirmed: entry.cleanup_confirmed,
    cleanup_error: null,
    cleanup_proof: null,
    version_proof: null,
    stderr_tail: '',
    events_total: ingest?.events_total ?? 0,
    events_dropped: ingest?.events_dropped ?? 0,
    events_omitted: ingest?.events_omitted ?? 0,
    malformed_lines: ingest?.malformed_lines ?? 0,
  };
}

/** What the latest turn of an open run reported, for a live result; all null before its first answer. */
function latestTurnFields(turn: TurnRecord | null): Pick<RunResult, 'result' | 'usage' | 'total_cost_usd' | 'duration_ms'> {
  return {
    result: turn?.result ?? null,
    usage: turn?.usage ?? null,
    total_cost_usd: turn?.total_cost_usd ?? null,
    duration_ms: turn?.duration_ms ?? null,
  };
}

/**
 * The argument that continues this conversation next time. None when there is no id, when nothing is
 * saved (no_session_persistence), or when the native process never started the conversation (no init
 * event: an unknown resume id or an id in use fail before it, measured on 2.1.332).
 */
function resumeHint(request: RunRequest, sessionId: string | null, init: unknown): RunResult['resume'] {
  if (sessionId === null || init === null || request.nativeOptions['no_session_persistence'] === true) return null;
  return { resume_session_id: sessionId };
}
