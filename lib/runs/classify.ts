/**
 * Decides a settled run's outcome from what was observed. Pure: every fact comes in as input.
 * Priority of the one error code: termination reason > spawn failure > native error > final-event
 * problems > exit status > cleanup. Lower-priority facts stay visible (final event, native_error,
 * cleanup_error) whichever code wins. Figures the native process did not report are null.
 */
import type { VersionProof } from '../supervisor/protocol.ts';
import type { JsonObject } from '../util/json.ts';
import type { CancelStep, RunResult, SessionIntent, UnfinishedSubagents } from './types.ts';
import type { IngestState } from './ingest.ts';
import { SPAWN_ERROR_FILE_CHANGED, SPAWN_ERROR_NO_CGROUP, type CleanupProof, type TerminateReason } from '../supervisor/protocol.ts';
import type { ToolErrorCode, ToolErrorData } from '../tool-errors.ts';
import { TOOL_ERROR_CODES } from '../tool-errors.ts';
import { assertNever } from '../util/assert-never.ts';
import { getArray, getBoolean, getNumber, getObject, getString } from '../native/events.ts';

/** Why the adapter ended the run early: the reasons it sends the supervisor. */
export type Termination = TerminateReason;

export interface ClassifyInput {
  readonly ingest: IngestState;
  /** How the native process ended; null when that is unknown (never spawned, or not reported). */
  readonly exit: { readonly code: number | null; readonly signal: string | null } | null;
  /** Why the adapter stopped the run (first reason wins), or null when it ended on its own. */
  readonly termination: Termination | null;
  /** What ended a cancelled run; absent when nothing of it had started (cancelled while it waited). */
  readonly cancelStep?: CancelStep;
  readonly spawnError: { readonly code: string; readonly message: string } | null;
  readonly cleanup: {
    readonly confirmed: boolean;
    readonly error: string | null;
    /** Defaults to cleanup_unconfirmed; supervisor_failed when the supervisor itself vanished. */
    readonly code?: 'cleanup_unconfirmed' | 'supervisor_failed';
    /** What the confirmation rests on; null when nothing was started. */
    readonly proof: CleanupProof | null;
  };
  readonly stderrTail: string;
  /** What the version check bound the native process to; null when none was started. */
  readonly versionProof: VersionProof | null;
  readonly session: SessionIntent;
  /** For continue: ids of this directory's transcripts that existed before the run (found by the caller). */
  readonly continueKnownSessionIds: readonly string[];
}

export type Classification = Pick<
  RunResult,
  | 'is_error'
  | 'error'
  | 'native_error'
  | 'session_id'
  | 'resume_requested'
  | 'resumed'
  | 'model'
  | 'result'
  | 'structured_output'
  | 'unfinished_subagents'
  | 'final'
  | 'usage'
  | 'model_usage_this_call'
  | 'total_cost_usd'
  | 'cost_scope'
  | 'num_turns'
  | 'duration_ms'
  | 'permission_denials'
  | 'api_retries'
  | 'exit_code'
  | 'signal'
  | 'timed_out'
  | 'cancelled'
  | 'cancel_step'
  | 'cleanup_confirmed'
  | 'cleanup_error'
  | 'cleanup_proof'
  | 'version_proof'
  | 'stderr_tail'
  | 'events_total'
  | 'events_dropped'
  | 'events_omitted'
  | 'malformed_lines'
>;

export function classifyRun(input: ClassifyInput): Classification {
  const { ingest, exit, termination, cleanup } = input;
  const final = ingest.final;
  const nativeError = mapNativeError(ingest, input.stderrTail);
  const cleanupError: ToolErrorData | null = cleanup.confirmed
    ? null
    : error(cleanup.code ?? 'cleanup_unconfirmed', cleanup.error ?? TOOL_ERROR_CODES[cleanup.code ?? 'cleanup_unconfirmed']);
  const outcome =
    terminationError(termination, ingest) ??
    spawnErrorOf(input.spawnError) ??
    nativeError ??
    finalEventError(ingest) ??
    exitError(exit) ??
    cleanupError;
  const reportedSessionId = getString(final, 'session_id') ?? ingest.init?.session_id ?? null;
  return {
    is_error: outcome !== null,
    error: outcome,
    native_error: nativeError,
    session_id: reportedSessionId,
    resume_requested: input.session.kind === 'resume' || input.session.kind === 'continue',
    resumed: resumed(input, nativeError),
    model: reportedModel(ingest),
    result: getString(final, 'result'),
    structured_output: final !== null && Object.hasOwn(final, 'structured_output') ? (final['structured_output'] ?? null) : null,
    unfinished_subagents: unfinishedSubagents(getObject(final, 'subagent_stats')),
    final,
    usage: getObject(final, 'usage'),
    model_usage_this_call: getObject(final, 'model_usage_since_last_result'),
    total_cost_usd: getNumber(final, 'total_cost_usd'),
    cost_scope: 'conversation',
    num_turns: getNumber(final, 'num_turns'),
    duration_ms: getNumber(final, 'duration_ms'),
    permission_denials: getArray(final, 'permission_denials'),
    api_retries: ingest.api_retries,
    exit_code: exit?.code ?? null,
    signal: exit?.signal ?? null,
    timed_out: termination === 'timeout' || termination === 'idle_timeout',
    cancelled: termination === 'cancel',
    cancel_step: termination === 'cancel' ? (input.cancelStep ?? null) : null,
    cleanup_confirmed: cleanup.confirmed,
    cleanup_error: cleanupError,
    cleanup_proof: cleanup.proof,
    version_proof: input.versionProof,
    stderr_tail: input.stderrTail,
    events_total: ingest.events_total,
    events_dropped: ingest.events_dropped,
    events_omitted: ingest.events_omitted,
    malformed_lines: ingest.malformed_lines,
  };
}

/** Killed and refused subagents by native kind (non-zero kinds only); null when the native reported no stats. */
export function unfinishedSubagents(stats: JsonObject | null): UnfinishedSubagents | null {
  if (stats === null) return null;
  const counts = (key: string): Record<string, number> => {
    const group = getObject(stats, key);
    const out: Record<string, number> = {};
    if (group === null) return out;
    for (const [kind, value] of Object.entries(group))
      if (typeof value === 'number' && Number.isFinite(value) && value > 0) out[kind] = value;
    return out;
  };
  const killed = counts('killed');
  const refused = counts('refused');
  const total = [...Object.values(killed), ...Object.values(refused)].reduce((sum, n) => sum + n, 0);
  return { total, killed, refused };
}

/** A spawn error's tool error: a changed file or a refused cgroup is its own condition, not a failure to start. */
export function spawnErrorOf(spawnError: ClassifyInput['spawnError']): ToolErrorData | null {
  if (spawnError === null) return null;
  if (spawnError.code === SPAWN_ERROR_FILE_CHANGED) return error('native_changed', spawnError.message);
  if (spawnError.code === SPAWN_ERROR_NO_CGROUP) return error('cgroup_unavailable', spawnError.message);
  return error('spawn_failed', `${spawnError.code}: ${spawnError.message}`);
}

function error(code: ToolErrorCode, message: string): ToolErrorData {
  return { code, message };
}

function terminationError(termination: Termination | null, ingest: IngestState): ToolErrorData | null {
  switch (termination) {
    case null:
      return null;
    case 'cancel':
      return error('cancelled', TOOL_ERROR_CODES.cancelled);
    case 'timeout':
      return error('timeout', TOOL_ERROR_CODES.timeout);
    case 'idle_timeout':
      return error('idle_timeout', TOOL_ERROR_CODES.idle_timeout);
    case 'frame_too_large':
      return error(
        'native_frame_too_large',
        `A native stdout line of ${ingest.largest_oversize_bytes ?? 'unknown'} bytes exceeded the native frame bound (max_native_frame_bytes); the run was stopped.`,
      );
    case 'final_too_large':
      return error(
        'final_event_too_large',
        `The native final result event of ${ingest.final_too_large_bytes ?? 'unknown'} bytes exceeded its bound of ${ingest.max_final_bytes} bytes.`,
      );
    default:
      return assertNever(termination);
  }
}

/** Exactly one result event, and it carries what a success needs (an error final is the native mapper's). */
function finalEventError(ingest: IngestState): ToolErrorData | null {
  const final = ingest.final;
  if (ingest.results_seen > 1 && !ingest.final_per_turn) {
    return error('duplicate_final_event', `The native process emitted ${ingest.results_seen} result events; exactly one is allowed.`);
  }
  if (final === null) {
    if (ingest.invalid_results > 0)
      return error('malformed_final_event', 'The native result event lacked a string subtype or boolean is_error.');
    // The native CLI writes only JSON lines; a non-JSON line means the final event may have been mangled.
    if (ingest.malformed_lines > 0) {
      return error('malformed_final_event', `No valid result event; the native output had ${ingest.malformed_lines} non-JSON line(s).`);
    }
    return error('missing_final_event', TOOL_ERROR_CODES.missing_final_event);
  }
  const missing: string[] = [];
  if (getString(final, 'subtype') !== 'success') missing.push('success subtype');
  if (getBoolean(final, 'is_error') !== false) missing.push('is_error false');
  if ((getString(final, 'session_id') ?? '') === '') missing.push('session_id');
  if (getString(final, 'result') === null) missing.push('textual result');
  return missing.length === 0 ? null : error('malformed_final_event', `The native result event lacked: ${missing.join(', ')}.`);
}

function exitError(exit: ClassifyInput['exit']): ToolErrorData | null {
  if (exit === null) return error('supervisor_failed', 'The exit status of the native process is unknown.');
  if (exit.code === 0 && exit.signal === null) return null;
  const how = exit.signal === null ? `exit code ${exit.code ?? 'unknown'}` : `signal ${exit.signal}`;
  return error('native_exit_nonzero', `The native process ended with ${how}.`);
}

/** The model the native process reported: assistant messages, then this call's usage, then init. */
function reportedModel(ingest: IngestState): string | null {
  if (ingest.assistant_model !== null) return ingest.assistant_model;
  for (const key of ['model_usage_since_last_result', 'modelUsage']) {
    const usage = getObject(ingest.final, key);
    const models = usage === null ? [] : Object.keys(usage);
    if (models.length === 1) return models[0] ?? null;
  }
  return ingest.init?.model ?? null;
}

/**
 * Whether the native process really continued the requested conversation, from what it reported:
 * resume: its init names the requested id (fork: a different id, since forking mints one) and no
 * "not found" error; continue: the reported id is a transcript that existed before the run (fork:
 * there was a transcript to continue and the native process started without a not-found error).
 * null when the native process reported no session at all (nothing to judge).
 */
function resumed(input: ClassifyInput, nativeError: ToolErrorData | null): boolean | null {
  const { session, ingest } = input;
  if (session.kind === 'fresh' || session.kind === 'new') return false;
  const initId = ingest.init?.session_id ?? null;
  const finalId = getString(ingest.final, 'session_id');
  if (nativeError?.code === 'session_not_found') return false;
  if (initId === null && finalId === null) return null;
  // A run that never initialised (no init event) loaded no conversation.
  if (initId === null) return false;
  if (finalId !== null && finalId !== initId) return false;
  switch (session.kind) {
    case 'resume':
      return session.fork ? initId !== session.sessionId : initId === session.sessionId;
    case 'continue':
      return session.fork
        ? input.continueKnownSessionIds.length > 0 && !input.continueKnownSessionIds.includes(initId)
        : input.continueKnownSessionIds.includes(initId);
    default:
      return assertNever(session);
  }
}

const MAX_NATIVE_MESSAGE_CHARS = 2000;

/**
 * The native failure, if the native process reported one: a final event with is_error true (whatever
 * its subtype: API errors arrive as subtype "success") or a non-success subtype; without a final event,
 * only the stderr and assistant-error evidence. Most specific evidence first (the
 * evidence each error leaves was measured on 2.1.332; docs/tools.md lists the codes).
 */
export function mapNativeError(ingest: IngestState, stderrTail: string): ToolErrorData | null {
  const final = ingest.final;
  const failed = final === null || getBoolean(final, 'is_error') !== false || getString(final, 'subtype') !== 'success';
  if (!failed) return null;
  const code = nativeCode(final, ingest, stderrTail);
  if (code === null) return null;
  return error(code, nativeMessage(final, stderrTail) ?? TOOL_ERROR_CODES[code]);
}

function nativeCode(final: JsonObject | null, ingest: IngestState, stderr: string): ToolErrorCode | null {
  const errors = (getArray(final, 'errors') ?? []).filter((item): item is string => typeof item === 'string').join('\n');
  if (/No conversation found|--resume requires a valid session ID/.test(`${errors}\n${stderr}`)) return 'session_not_found';
  if (/is already in use/.test(stderr)) return 'session_id_in_use';
  const fromAssistant = assistantErrorCode(ingest.last_assistant_error);
  if (final === null) return fromAssistant;
  const subtype = getString(final, 'subtype');
  const terminal = getString(final, 'terminal_reason');
  if (subtype === 'error_max_turns' || terminal === 'max_turns') return 'max_turns';
  if (subtype === 'error_max_budget_usd' || terminal === 'budget_exhausted') return 'budget_exhausted';
  if (terminal?.startsWith('aborted') === true) return 'aborted';
  const fromStatus = statusCode(getNumber(final, 'api_error_status') ?? ingest.last_assistant_error_status);
  if (fromStatus !== null) return fromStatus;
  if (fromAssistant !== null) return fromAssistant;
  if (terminal === 'image_error') return 'api_invalid_request';
  return 'native_error';
}

function statusCode(status: number | null): ToolErrorCode | null {
  if (status === null) return null;
  if (status === 401 || status === 403) return 'authentication_failed';
  if (status === 429) return 'rate_limited';
  if (status === 529) return 'overloaded';
  if (status === 404) return 'model_not_found';
  if (status === 400 || status === 413) return 'api_invalid_request';
  if (status >= 500 && status <= 599) return 'api_server_error';
  return null;
}

/** Codes of the synthetic assistant error messages of 2.1.332 ("unknown" has no specific code). */
function assistantErrorCode(code: string | null): ToolErrorCode | null {
  switch (code) {
    case 'authentication_failed':
      return 'authentication_failed';
    case 'rate_limit':
      return 'rate_limited';
    case 'overloaded':
      return 'overloaded';
    case 'server_error':
      return 'api_server_error';
    case 'invalid_request':
      return 'api_invalid_request';
    case 'model_not_found':
      return 'model_not_found';
    case 'max_output_tokens':
      return 'output_token_limit';
    default:
      return null;
  }
}

/** The native words for the failure: result text, else errors[], else the last stderr line. */
function nativeMessage(final: JsonObject | null, stderr: string): string | null {
  const text = getString(final, 'result');
  const errors = (getArray(final, 'errors') ?? []).filter((item): item is string => typeof item === 'string');
  const lastStderrLine = stderr.trimEnd().split('\n').pop()?.trim() ?? '';
  const message =
    text !== null && text !== '' ? text : errors.length > 0 ? errors.join('; ') : lastStderrLine !== '' ? lastStderrLine : null;
  return message === null ? null : message.slice(0, MAX_NATIVE_MESSAGE_CHARS);
}
