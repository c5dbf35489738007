/**
 * What a caller (often a model) reads of a run. Hosts such as Claude Code hand their model exactly
 * JSON.stringify(structuredContent), so the default view is the compact summary: the answer once, the
 * outcome, how to continue, cost and turns, denials, unfinished background work (when there is any) and cleanup. The full
 * object (native final event, usage, exit status, stderr tail, counters) is `detail: "full"` of
 * claude.run.result; the final event is also the last of claude.run.events. Pure.
 */
import type { JsonObject, JsonValue } from '../util/json.ts';
import type { JsonSchema } from '../contracts/providers.ts';
import { RUN_STATES, type RunResult } from '../runs/types.ts';

export const RESULT_DETAILS = ['summary', 'full'] as const;
export type ResultDetail = (typeof RESULT_DETAILS)[number];

/** The summary's fields, in this order; every one is also a field of the full object. */
export const SUMMARY_FIELDS = [
  'run_id',
  'state',
  'completed',
  'is_error',
  'error',
  'native_error',
  'result',
  'structured_output',
  'session_id',
  'resume',
  'resumed',
  'model',
  'total_cost_usd',
  'cost_scope',
  'num_turns',
  'duration_ms',
  'permission_denials',
  'unfinished_subagents',
  'worktree',
  'open',
  'cleanup_confirmed',
  'cleanup_error',
] as const satisfies readonly (keyof RunResult)[];

/**
 * Summary fields left out when they carry nothing: unfinished_subagents when every background subagent
 * finished (total 0), worktree when the run had none. A null unfinished_subagents stays: the native
 * process did not say, which is worth knowing.
 */
export const OMITTED_WHEN_EMPTY = [
  'unfinished_subagents',
  'worktree',
  'open',
] as const satisfies readonly (typeof SUMMARY_FIELDS)[number][];

export function viewRun(body: RunResult, detail: ResultDetail): JsonObject {
  if (detail === 'full') return body;
  const view: Record<string, JsonValue> = {};
  for (const field of SUMMARY_FIELDS) {
    if (!carriesNothing(body, field)) view[field] = body[field];
  }
  // The summary names where the work is and how much changed; the file list is in the full object.
  if (body.worktree !== null) {
    const { files: _files, head_commit: _head, ...compact } = body.worktree;
    view['worktree'] = compact;
  }
  // With output_schema the native text is the JSON of structured_output: the answer is sent once.
  if (body.structured_output !== null && body.result === JSON.stringify(body.structured_output)) view['result'] = null;
  return view;
}

function carriesNothing(body: RunResult, field: (typeof SUMMARY_FIELDS)[number]): boolean {
  if (field === 'worktree') return body.worktree === null;
  if (field === 'open') return body.open === null;
  return field === 'unfinished_subagents' && body.unfinished_subagents?.total === 0;
}

/** The human line of a settled or live run; the answer follows it in the text content. */
export function describeRun(body: RunResult): string {
  if (body.state === 'idle')
    return `${body.run_id} is idle after turn ${body.open?.turns_total ?? '?'}: send the next message with claude.run.send, or end it with claude.run.close`;
  if (!body.completed) return `${body.run_id} is ${body.state}${resumeAdvice(body)}`;
  if (body.error !== null)
    return `${body.run_id} failed: ${body.error.code}: ${body.error.message}${worktreeLine(body)}${resumeAdvice(body)}`;
  const turns = body.num_turns === null ? '' : ` in ${body.num_turns} turn(s)`;
  const unfinished =
    body.unfinished_subagents !== null && body.unfinished_subagents.total > 0
      ? `; ${body.unfinished_subagents.total} background subagent(s) did not finish (unfinished_subagents)`
      : '';
  return `${body.run_id} succeeded${turns}${unfinished}${worktreeLine(body)}${resumeAdvice(body)}`;
}

function worktreeLine(body: RunResult): string {
  const w = body.worktree;
  if (w === null) return '';
  const counts =
    w.committed === null && w.uncommitted === null
      ? 'changes unknown'
      : `${w.committed?.files ?? '?'} file(s) committed, ${w.uncommitted?.files ?? '?'} uncommitted`;
  return `; worked in worktree ${w.path} on branch ${w.branch} (${counts})`;
}

function resumeAdvice(body: RunResult): string {
  return body.resume === null ? '' : `; to continue this conversation pass resume_session_id: "${body.resume.resume_session_id}"`;
}

const NULLABLE = ' Null when not reported.';

/** The run view's outputSchema: the summary fields (the full object adds more). Nullable fields carry no type. */
export const RUN_VIEW_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'A run: the summary, or with detail "full" the whole result object (docs/tools.md).',
  required: SUMMARY_FIELDS.filter((field) => !(OMITTED_WHEN_EMPTY as readonly string[]).includes(field)),
  properties: {
    run_id: { type: 'string', description: 'Adapter handle of the run (not a session id).' },
    state: { type: 'string', enum: RUN_STATES },
    completed: { type: 'boolean', description: 'The run settled (says nothing about success).' },
    is_error: { type: 'boolean' },
    error: { description: 'The failure that decides the outcome: { code, message }, or null.' },
    native_error: { description: 'The failure the native process itself reported, or null.' },
    result: { description: `The answer: the native final text (null in the summary when structured_output holds it).${NULLABLE}` },
    structured_output: { description: 'With output_schema: the object the native run validated against it; else null.' },
    session_id: { description: `The native conversation id.${NULLABLE}` },
    resume: { description: 'How to continue this conversation: { resume_session_id } to pass next time; null when it was not saved.' },
    resumed: { description: 'Whether the requested conversation was really continued (null: nothing reported).' },
    model: { description: `The model the native process used.${NULLABLE}` },
    total_cost_usd: { description: `Native cost, cumulative for the whole conversation (cost_scope).${NULLABLE}` },
    cost_scope: { type: 'string', enum: ['conversation'] },
    num_turns: { description: NULLABLE.trim() },
    duration_ms: { description: NULLABLE.trim() },
    permission_denials: { description: `Tool uses that native permissions denied.${NULLABLE}` },
    unfinished_subagents: {
      description: `Background subagents killed or refused: { total, killed, refused } by native kind; left out when none (total 0).${NULLABLE}`,
    },
    worktree: {
      description:
        'With worktree (or a resumed conversation that ran in one): { name, path, branch, base_commit, committed, uncommitted, files_truncated, changes_error }, counts of files added/modified/deleted and lines against base_commit; the full object adds head_commit and the file list. Left out when the run had no worktree.',
    },
    open: {
      description:
        "A run started with keep_open: { phase (running, idle, closing, ended), turns_total, turns_dropped, queued, turn_limit, idle_seconds, close_reason }; left out for one-turn runs. The full object adds turns: each turn's result, subtype, is_error, usage and cost.",
    },
    cleanup_confirmed: { type: 'boolean' },
    cleanup_error: { description: 'Why cleanup is not confirmed, or null.' },
  },
};
