/**
 * Every stable tool error code, with the one-line meaning the docs repeat.
 * Codes are data: callers and tests branch on them, never on message text.
 */
export const TOOL_ERROR_CODES = {
  // input and policy (nothing was started)
  invalid_arguments: 'An argument failed validation; `path` names it (JSON Pointer). Nothing was started.',
  permission_rule_fails_open: 'A broad allow rule with a narrower deny carve-out was refused: it fails open.',
  recursion_refused: 'This adapter was started by a Claude Code it launched (recursion sentinel set); it runs nothing.',
  // native binary and version
  native_not_found: 'The Claude Code binary could not be resolved (--claude-bin, CLAUDE_BIN, then PATH).',
  native_version_mismatch: 'The installed Claude Code version differs from the tested version in cli-tree.json.',
  native_version_unreadable: '`claude --version` printed something that is not a version.',
  native_version_failed: '`claude --version` exited non-zero or could not be spawned.',
  native_version_timeout: '`claude --version` did not answer within its bound.',
  // registry and retention
  capacity_exhausted: 'Every retained run (32 by default) is active or unconfirmed, so none could be evicted; nothing was started.',
  active_limit_reached:
    'The active-run limit (4 by default) is reached: that many runs have active work or unconfirmed cleanup; nothing was started.',
  run_not_found: 'No retained run has this run_id (unknown, evicted or released).',
  server_exited:
    'The run belonged to a server that has exited, and ended with it before it settled (or its result was not kept); the message says when, and the resume_session_id to continue its conversation when known.',
  run_active: 'The run is still active (or, for a worktree, a run still works in it); cancel it or wait for it to settle first.',
  cleanup_unconfirmed: 'Process cleanup of the run was not confirmed; the handle stays retained.',
  permission_question_not_pending:
    'The permission question is not pending on this run (already decided, expired, withdrawn or unknown); nothing was answered.',
  session_busy: 'Too many runs are already waiting for this conversation; nothing was started.',
  server_budget_exhausted: 'The server budget (--budget-usd) is spent; nothing was started (or, for claude.run.send, nothing was sent).',
  // open runs (keep_open; claude.run.send)
  run_not_open:
    'The run does not take messages: it was not started with keep_open, or its conversation is closing or has ended; nothing was sent.',
  send_queue_full: 'Too many messages (or bytes) already wait for the running turn; nothing was sent.',
  turn_limit_reached: 'The open run reached its turn_limit; nothing was sent.',
  server_budget_reserved:
    'What remains of the server budget is reserved by runs that have not reported their cost yet; nothing was started (retry once they settle).',
  // worktrees (claude.worktree.remove)
  worktree_not_found: 'The repository has no worktree of that name under .claude/worktrees; nothing was removed.',
  worktree_has_work:
    'The worktree holds uncommitted changes or commits no other branch or tag reaches; nothing was removed (force: true discards them).',
  worktree_occupied: 'A process has its working directory in the worktree; nothing was removed, with or without force.',
  worktree_lock_live: "The worktree's git lock names a pid, and a process with that pid lives; nothing was removed, with or without force.",
  worktree_lock_unverifiable:
    "The worktree's git lock is not Claude Code's (it names no process to check), or names a pid /proc cannot prove gone; nothing was removed, with or without force.",
  worktree_occupancy_unverifiable:
    'This platform cannot show which processes work in the worktree (no /proc on macOS); nothing was removed, with or without force.',
  worktree_operation_in_progress:
    'A rebase, am, merge, cherry-pick, revert or bisect is under way in the worktree; nothing was removed, with or without force.',
  git_failed: 'A git command failed, timed out or printed more than its bound.',
  // supervision and process
  spawn_failed: 'The native process could not be started.',
  cgroup_unavailable:
    "The cgroup cleanup backend was forced (--cleanup-backend cgroup) and the run's own cgroup could not be made (e.g. cgroup.max.descendants reached); nothing was started.",
  native_changed: 'The native binary changed after its version was checked; it was not started, or was killed as it started.',
  supervisor_failed: 'The supervisor process failed or vanished before reporting cleanup.',
  timeout: 'The run exceeded timeout_seconds (including a final event followed by a process that never exits).',
  idle_timeout: 'The native process wrote nothing for idle_timeout_seconds.',
  cancelled: 'The run was cancelled (notifications/cancelled or claude.run.cancel).',
  // native output
  native_frame_too_large: 'A native stdout line exceeded the native frame bound (max_native_frame_bytes, 1 MiB); the run was stopped.',
  final_event_too_large:
    'The native final result event exceeded its bound (max_final_event_bytes, 128 KiB by default); no truncated success is reported.',
  missing_final_event: 'The native process ended without a result event.',
  duplicate_final_event: 'The native process emitted more than one result event.',
  malformed_final_event: 'The native result event lacked required fields (subtype, session id or textual result).',
  native_exit_nonzero: 'The native process exited non-zero without a more specific native error.',
  // native outcomes (mapped from api_error_status, assistant.error, terminal_reason and subtype)
  authentication_failed: 'The model API rejected the credentials (401/403).',
  rate_limited: 'The model API rate-limited the request (429).',
  overloaded: 'The model API was overloaded (529).',
  api_server_error: 'The model API failed or the connection to it broke (5xx, connection errors).',
  api_invalid_request: 'The model API rejected the request (400/413).',
  model_not_found: 'The selected model does not exist or is not accessible (404).',
  max_turns: 'The native run reached --max-turns.',
  budget_exhausted: 'The native run reached --max-budget-usd.',
  output_token_limit: 'The model response exceeded the output token maximum.',
  aborted: 'The native run was interrupted before completing.',
  session_not_found: 'The conversation to resume or continue does not exist.',
  session_id_in_use: 'A new session_id already exists natively; use resume_session_id instead.',
  native_error: 'The native run reported an error (is_error true) that has no more specific code.',
} as const satisfies Record<string, string>;

export type ToolErrorCode = keyof typeof TOOL_ERROR_CODES;

export function isToolErrorCode(code: string): code is ToolErrorCode {
  return Object.hasOwn(TOOL_ERROR_CODES, code);
}

export type ToolErrorData = {
  readonly code: ToolErrorCode;
  readonly message: string;
  /** JSON Pointer of the offending argument, for input errors. Never the submitted value. */
  readonly path?: string;
};

/** Thrown by tool modules; tools/call turns it into an isError result carrying `code`. */
export class ToolError extends Error {
  readonly code: ToolErrorCode;
  readonly path: string | undefined;
  constructor(code: ToolErrorCode, message: string, path?: string) {
    super(message);
    this.name = 'ToolError';
    this.code = code;
    this.path = path;
  }
  toData(): ToolErrorData {
    return this.path === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, path: this.path };
  }
}

/**
 * True only for a ToolError built by this module, the only kind whose `toData()` callers may rely on. An
 * arbitrary Error whose `code` happens to be a tool error code (a Node error, a thrown look-alike) is not one.
 */
export function isToolError(value: unknown): value is ToolError {
  return value instanceof ToolError;
}
