/**
 * One handler per tool: (args, ctx) → outcome. Handlers validate what a schema cannot, ask the runtime,
 * and shape results; they never write to stdout. Run failures are outcomes with isError, not throws.
 */
import type { CallContext, ToolOutcome } from '../contracts/providers.ts';
import type { JsonObject } from '../util/json.ts';
import type { RunResult } from '../runs/types.ts';
import type { RunEntry } from '../runs/registry.ts';
import { isToolError, ToolError } from '../tool-errors.ts';
import { progressText } from '../native/progress-text.ts';
import { assertNever } from '../util/assert-never.ts';
import type { ToolName } from './declarations.ts';
import type { LiveRun, Runtime } from './runtime.ts';
import type { PreparedRun } from '../runs/execute.ts';
import { DEFAULT_EVENTS_PAGE_LIMIT } from './catalog.ts';
import { describeRun, viewRun, type ResultDetail } from './result-view.ts';
import { askThroughElicitation } from '../permission/elicit.ts';
import { isModernVersion } from '../rpc/negotiate.ts';
import type { RemovedWorktree } from '../worktree/remove.ts';
import { runUsesWorktree } from '../worktree/listing.ts';
import { isAbsolute } from 'node:path';
import { closeBeforeRelease, closeTool, sendTool } from './send.ts';
import type { PastRun } from '../state/past-run.ts';
import { toolOutcomeOf } from './run-records.ts';

export interface HandlerDeps {
  readonly runtime: Runtime;
  /** Validates and prepares a run (input rules, binary, exact argv); throws ToolError before anything starts. */
  readonly prepare: (args: JsonObject) => PreparedRun;
  /** Removes a run's worktree and branch (git through a bounded runner); throws ToolError when refused. */
  readonly removeWorktree: (request: {
    cwd: string;
    name: string;
    force: boolean;
    inUse: (path: string) => boolean;
  }) => Promise<RemovedWorktree>;
  /** What the records say of a run id of a server that is gone; null (or absent): unknown. */
  readonly past?: (runId: string) => PastRun | null;
}

export async function callTool(name: ToolName, args: JsonObject, ctx: CallContext, deps: HandlerDeps): Promise<ToolOutcome> {
  try {
    switch (name) {
      case 'claude.run':
        return await runSync(args, ctx, deps);
      case 'claude.run.start':
        return startDetached(args, ctx, deps);
      case 'claude.run.list':
        return list(deps);
      case 'claude.run.result':
        return await result(args, ctx, deps);
      case 'claude.run.events':
        return events(args, deps);
      case 'claude.run.cancel':
        return cancel(args, deps);
      case 'claude.run.release':
        await closeBeforeRelease(String(args['run_id']), ctx, deps.runtime);
        return release(args, deps);
      case 'claude.run.send':
        return sendTool(args, deps.runtime);
      case 'claude.run.close':
        return closeTool(args, deps.runtime);
      case 'claude.run.answer':
        return answer(args, deps);
      case 'claude.worktree.remove':
        return await removeWorktreeTool(args, deps);
      default:
        return assertNever(name);
    }
  } catch (error) {
    if (isToolError(error)) return toolErrorOutcome(name, error);
    throw error;
  }
}

/** A ToolError thrown before anything started, as the tool's outcome (also for a task that could not start). */
export function toolErrorOutcome(name: ToolName, error: ToolError): ToolOutcome {
  return { ok: false, summary: `${name} failed: ${error.code}`, error: error.toData(), result: null };
}

/**
 * What a settled run reports: the outcome claude.run returns, the one a completed task inlines, and the
 * one claude.run.result reads (with its detail). An ask_host run's permission questions are part of it.
 */
export function settledRunOutcome(runtime: Runtime, entry: RunEntry<LiveRun>, detail: ResultDetail = 'summary'): ToolOutcome {
  const outcome = runOutcome(runtime.resultOf(entry), detail);
  return outcome.result === null ? outcome : { ...outcome, result: withQuestions(outcome.result, entry) };
}

/**
 * A synchronous run holds an active slot while it runs and stays retained afterwards like a detached
 * one: its result carries a run_id that result/events/list/release must keep honouring (see registry.ts).
 */
async function runSync(args: JsonObject, ctx: CallContext, deps: HandlerDeps): Promise<ToolOutcome> {
  refuseAskHostWithoutChannel(args, ctx);
  const prepared = deps.prepare(args);
  const progress = ctx.progress;
  const entry = deps.runtime.start(prepared, {
    acquiredBy: ctx.workInvocation,
    sync: true,
    onEvent: progress ? (kind, event) => progress(progressText(kind, event)) : undefined,
  });
  if (entry.live.broker !== null && ctx.elicit !== undefined) askThroughElicitation(entry.live.broker, entry.run_id, ctx.elicit);
  const onAbort = (): void => entry.live.execution?.cancel();
  if (ctx.signal.aborted) onAbort();
  else ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    await entry.live.settled;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
  return settledRunOutcome(deps.runtime, entry);
}

function startDetached(args: JsonObject, ctx: CallContext, deps: HandlerDeps): ToolOutcome {
  const entry = deps.runtime.start(deps.prepare(args), { acquiredBy: ctx.workInvocation, sync: false });
  const body = deps.runtime.resultOf(entry);
  return {
    ok: true,
    summary: `started ${entry.run_id} (${body.state}); read it with claude.run.result`,
    result: withQuestions(viewRun(body, 'summary'), entry),
    text: '',
  };
}

function list(deps: HandlerDeps): ToolOutcome {
  // An ask_host run also shows how many permission questions wait (read them with claude.run.result).
  const runs = deps.runtime.list().map((item) => {
    const broker = deps.runtime.registry.get(item.run_id).live.broker;
    return broker === null ? item : { ...item, permission_questions_pending: broker.pending().length };
  });
  const counts = deps.runtime.registry.counts();
  return {
    ok: true,
    summary: `${runs.length} retained run(s), ${counts.active} active`,
    result: { runs, retained: counts.retained, active: counts.active },
  };
}

async function result(args: JsonObject, ctx: CallContext, deps: HandlerDeps): Promise<ToolOutcome> {
  let entry: RunEntry<LiveRun>;
  try {
    entry = lookup(args, deps);
  } catch (error) {
    const past = isToolError(error) && error.code === 'run_not_found' ? (deps.past?.(String(args['run_id'])) ?? null) : null;
    if (past === null) throw error;
    return pastOutcome(past);
  }
  const waitSeconds = typeof args['wait_seconds'] === 'number' ? args['wait_seconds'] : 0;
  await deps.runtime.waitSettled(entry, waitSeconds * 1000, ctx.signal);
  const body = deps.runtime.resultOf(entry);
  const detail: ResultDetail = args['detail'] === 'full' ? 'full' : 'summary';
  // An open run between turns shows its latest answer, as a settled run does.
  const text = body.state === 'idle' ? (body.result ?? '') : '';
  if (!body.completed)
    return { ok: true, summary: describeRun(body) + questionsLine(entry), result: withQuestions(viewRun(body, detail), entry), text };
  return settledRunOutcome(deps.runtime, entry, detail);
}

/**
 * A run of a server that is gone, answered at once from its record: the summary it settled with (only the
 * summary is kept, whatever `detail` asks), or server_exited with what is known.
 */
function pastOutcome(past: PastRun): ToolOutcome {
  if (past.kind === 'ended')
    return {
      ok: false,
      summary: `${past.record.run_id}: server_exited`,
      error: { code: 'server_exited', message: past.message },
      result: null,
    };
  const outcome = toolOutcomeOf(past.outcome);
  return { ...outcome, summary: `${outcome.summary} (answered from the record of the server that ran it, which has exited)` };
}

function events(args: JsonObject, deps: HandlerDeps): ToolOutcome {
  const entry = lookup(args, deps);
  const cursor = typeof args['cursor'] === 'string' ? args['cursor'] : undefined;
  const limit = typeof args['limit'] === 'number' ? args['limit'] : DEFAULT_EVENTS_PAGE_LIMIT;
  const ring = entry.live.execution?.ingest.ring;
  if (ring === undefined) throw new ToolError('run_not_found', 'the run has no event stream');
  const page = ring.page(cursor, limit);
  return {
    ok: true,
    summary: `${page.events.length} event(s)${page.has_more ? ', more follow' : ''}${page.missed_events > 0 ? `, ${page.missed_events} missed` : ''}`,
    result: { run_id: entry.run_id, state: entry.state, completed: entry.completed, ...page },
  };
}

function cancel(args: JsonObject, deps: HandlerDeps): ToolOutcome {
  const entry = lookup(args, deps);
  const requested = !entry.completed;
  if (requested) entry.live.execution?.cancel();
  const body = deps.runtime.resultOf(entry);
  return {
    ok: true,
    summary: requested ? `cancellation requested for ${entry.run_id}` : `${entry.run_id} had already completed`,
    result: { cancel_requested: requested, run: viewRun(body, 'summary') },
  };
}

function release(args: JsonObject, deps: HandlerDeps): ToolOutcome {
  const runId = String(args['run_id']);
  const removed = deps.runtime.release(runId);
  return { ok: true, summary: `released ${runId}`, result: { released: true, run_id: removed.run_id, session_id: removed.session_id } };
}

/**
 * A synchronous claude.run asks through elicitation/create, which only the legacy era offers it (a legacy
 * client that declared form elicitation at initialize). The 2026-07-28 era lets a server ask only from a
 * task, whatever the client declares. Otherwise refused before anything starts, naming the ways that work.
 */
function refuseAskHostWithoutChannel(args: JsonObject, ctx: CallContext): void {
  if (args['ask_host'] !== true || ctx.elicit !== undefined) return;
  const instead = 'start the run with claude.run.start and answer its questions with claude.run.answer';
  const why = isModernVersion(ctx.protocolVersion)
    ? `under protocol ${ctx.protocolVersion} a synchronous claude.run has no way to ask: a server can ask only from a task. Call claude.run from a client that declares the tasks extension (the run becomes a task that asks through input_required), or ${instead}`
    : `a synchronous claude.run asks through elicitation/create, and this client did not declare form elicitation at initialize. Declare it, or ${instead}`;
  throw new ToolError('invalid_arguments', `ask_host cannot ask here: ${why}`, '/ask_host');
}

async function removeWorktreeTool(args: JsonObject, deps: HandlerDeps): Promise<ToolOutcome> {
  const cwd = String(args['cwd']);
  if (!isAbsolute(cwd) || cwd.includes('\0')) throw new ToolError('invalid_arguments', 'cwd must be an absolute path', '/cwd');
  // A run still working there (its worktree asked for, its cwd in it, or resumed and not yet said where) keeps it.
  const inUse = (path: string): boolean =>
    deps.runtime.registry.entries().some((entry) => {
      if (entry.completed) return false;
      const { request, execution } = entry.live;
      const place = {
        cwd: request.cwd,
        worktreePath: request.worktree?.path ?? null,
        initCwd: execution?.ingest.snapshot().init?.cwd ?? null,
        resumes: request.session.kind === 'resume' || request.session.kind === 'continue',
      };
      return runUsesWorktree(place, path);
    });
  const removed = await deps.removeWorktree({ cwd, name: String(args['name']), force: args['force'] === true, inUse });
  const d = removed.discarded;
  const discarded =
    d.uncommitted_files + d.unreachable_commits + d.populated_submodules > 0
      ? ` (forced: discarded ${d.uncommitted_files} uncommitted file(s), ${d.unreachable_commits} unreachable commit(s), ${d.populated_submodules} populated submodule(s))`
      : '';
  return { ok: true, summary: `removed worktree ${removed.path} and branch ${removed.branch}${discarded}`, result: { removed } };
}

function answer(args: JsonObject, deps: HandlerDeps): ToolOutcome {
  const entry = lookup(args, deps);
  const broker = entry.live.broker;
  if (broker === null)
    throw new ToolError('permission_question_not_pending', 'the run was not started with ask_host: it has no questions', '/question_id');
  const decision = args['decision'] === 'allow' ? 'allow' : 'deny';
  const reason = typeof args['reason'] === 'string' ? args['reason'] : undefined;
  if (decision === 'allow' && reason !== undefined) throw new ToolError('invalid_arguments', 'reason is for deny only', '/reason');
  const decided = broker.answer(String(args['question_id']), { behavior: decision, reason });
  return {
    ok: true,
    summary: `${decision === 'allow' ? 'allowed' : 'denied'} ${decided.tool_name} (${decided.question_id}) for ${entry.run_id}`,
    result: { run_id: entry.run_id, question: decided },
  };
}

/** The run's permission questions (ask_host runs only): pending ones to answer, decided ones as a record. */
function withQuestions(view: JsonObject, entry: RunEntry<LiveRun>): JsonObject {
  const broker = entry.live.broker;
  if (broker === null) return view;
  const decided = broker.decided();
  return {
    ...view,
    permission_questions: {
      pending: [...broker.pending()],
      decided: [...decided.questions],
      decided_dropped: decided.dropped,
      // The native's control lines that were neither a question nor ours: counted, never taken as an answer.
      control_lines: entry.live.execution?.control() ?? null,
    },
  };
}

function questionsLine(entry: RunEntry<LiveRun>): string {
  const n = entry.live.broker?.pending().length ?? 0;
  return n === 0 ? '' : `; ${n} permission question(s) wait for claude.run.answer (permission_questions.pending)`;
}

function lookup(args: JsonObject, deps: HandlerDeps): RunEntry<LiveRun> {
  return deps.runtime.registry.get(String(args['run_id']));
}

/** A settled run: the view as structured data, a human line, and the answer as the text after it. */
function runOutcome(body: RunResult, detail: ResultDetail): ToolOutcome {
  if (!body.is_error && body.error === null)
    return { ok: true, summary: describeRun(body), result: viewRun(body, detail), text: body.result ?? '' };
  const error = body.error ?? { code: 'native_error' as const, message: 'the run failed' };
  // A native failure's text is usually its error message, which the summary line already carries.
  const text = body.result === null || body.result === error.message ? '' : body.result;
  return { ok: false, summary: describeRun({ ...body, error }), error, result: viewRun(body, detail), text };
}
