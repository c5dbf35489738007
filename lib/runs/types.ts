import type { JsonObject, JsonValue } from '../util/json.ts';
import type { VersionProof } from '../supervisor/protocol.ts';
import type { ToolErrorData } from '../tool-errors.ts';

export { PERMISSION_MODES, type PermissionMode } from '../native/tree.ts';
import type { PermissionMode } from '../native/tree.ts';
import type { WorktreePlace } from '../worktree/worktree.ts';
import type { WorktreeReport } from '../worktree/changes.ts';
import type { OpenReport, TurnRecord } from './turns.ts';

/** How a run relates to a native conversation. Exactly one kind per run. */
export type SessionIntent =
  | { readonly kind: 'fresh' } // native picks a new id
  | { readonly kind: 'new'; readonly sessionId: string } // --session-id
  | { readonly kind: 'resume'; readonly sessionId: string; readonly fork: boolean }
  | { readonly kind: 'continue'; readonly fork: boolean };

/** A validated, normalized request: everything needed to spawn, nothing left to decide. */
export interface RunRequest {
  readonly prompt: string;
  readonly cwd: string;
  readonly permissionMode: PermissionMode;
  /** Native options keyed by their MCP argument name (cli-tree.json `arg`), only those supplied. */
  readonly nativeOptions: Readonly<Record<string, JsonValue>>;
  readonly session: SessionIntent;
  readonly timeoutMs: number;
  readonly idleTimeoutMs: number | null;
  /** Set when the caller opted in to ask_host: permission prompts go to the person at the MCP client. */
  readonly askHost?: { readonly timeoutMs: number; readonly defaultMode: boolean } | null;
  /** Set when the run stays open for more turns (keep_open): its idle bound between turns and its turn limit. */
  readonly keepOpen?: { readonly idleMs: number; readonly turnLimit: number } | null;
  /** Set when the run asked for a new worktree (checked before the spawn: repository found, name free). */
  readonly worktree?: WorktreePlace | null;
}

/**
 * Lifecycle of one adapter run. `completed` is true only in `completed`: the run settled,
 * which says nothing about success (see is_error).
 */
export const RUN_STATES = [
  'waiting_for_session', // serialized behind another run of the same conversation
  'checking_version',
  'starting',
  'running',
  'idle', // an open run (keep_open) between turns, waiting for claude.run.send
  'stopping', // termination ladder in progress (cancel, timeout, failure)
  'completed',
] as const;
export type RunState = (typeof RUN_STATES)[number];

/**
 * Subagents that did not finish, by the native kinds of subagent_stats.killed and .refused: only kinds
 * with a count above zero are listed; total is their sum. Not an error by itself.
 */
export type UnfinishedSubagents = {
  total: number;
  killed: Record<string, number>;
  refused: Record<string, number>;
};

/**
 * The result object: the same shape for claude.run and claude.run.result. Unreported figures are null.
 * A type, not an interface, so it is assignable to JsonObject as it is (an interface has no index signature).
 */
export const CANCEL_STEPS = ['interrupt', 'close', 'ladder'] as const;
export type CancelStep = (typeof CANCEL_STEPS)[number];

export type RunResult = {
  run_id: string;
  state: RunState;
  completed: boolean;
  is_error: boolean;
  error: ToolErrorData | null;
  /** The native failure the native process reported, kept even when a termination or cleanup code wins. */
  native_error: ToolErrorData | null;
  session_id: string | null;
  /** Whether resume/continue was asked for, and whether the native process really continued it. */
  resume_requested: boolean;
  resumed: boolean | null;
  model: string | null;
  result: string | null;
  /** The native structured_output (runs given output_schema): the object the schema validated, else null. */
  structured_output: JsonValue | null;
  /** How to continue this conversation: the argument to pass next time, or null (no id, or not saved). */
  resume: { resume_session_id: string } | null;
  /** Background work the native run reported killed or refused (subagent_stats); null when not reported. */
  unfinished_subagents: UnfinishedSubagents | null;
  /**
   * The git worktree the native run ran in (asked for with `worktree`, or a resumed conversation that ran
   * in one): path, branch, base commit and what changed against it, read after the run. Null otherwise.
   */
  worktree: WorktreeReport | null;
  /** An open run (keep_open): its phase, turns so far, queue, bounds and why it ended; null for one-turn runs. */
  open: OpenReport | null;
  /** An open run's turns, oldest first (at most MAX_TURNS_KEPT; open.turns_dropped counts older ones); null for one-turn runs. */
  turns: TurnRecord[] | null;
  final: JsonObject | null;
  usage: JsonObject | null;
  model_usage_this_call: JsonObject | null;
  /** Native total_cost_usd: cumulative for the whole conversation in 2.1.332, not this call. */
  total_cost_usd: number | null;
  cost_scope: 'conversation';
  num_turns: number | null;
  duration_ms: number | null;
  permission_denials: JsonValue[] | null;
  api_retries: number;
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  cancelled: boolean;
  /**
   * What ended a cancelled run: "interrupt" (the native's own interrupt ended its turn with a result within
   * the grace, the session consistent), "close" (an open run idle between turns: its stdin was closed and the
   * native exited by itself), "ladder" (signals: no result came, or there was no turn to interrupt);
   * null when the run was not cancelled, or was cancelled before anything of it started.
   */
  cancel_step: CancelStep | null;
  cleanup_confirmed: boolean;
  cleanup_error: ToolErrorData | null;
  /**
   * What cleanup_confirmed rests on: "cgroup" (the kernel showed the run's own cgroup empty, and it was
   * removed), "process_scan" (/proc scans of the run's tracked processes), "ps_scan" (the system `ps`: two
   * consecutive tables without the run's processes or an unattributed orphan); null when no process was started.
   */
  cleanup_proof: 'cgroup' | 'process_scan' | 'ps_scan' | null;
  /**
   * What the version check bound the native process to: "image" (the machine code that answered is the image
   * that runs, Linux only), "file" (the file's identity, unchanged from before the check to right after the
   * spawn; a script's interpreter opens it again by path), "path"; null when no native process was started.
   */
  version_proof: VersionProof | null;
  stderr_tail: string;
  events_total: number;
  events_dropped: number;
  events_omitted: number;
  /** Native stdout lines that were not JSON objects (counted, never stored). */
  malformed_lines: number;
  created_at: string;
  settled_at: string | null;
};
