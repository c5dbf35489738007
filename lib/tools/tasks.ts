/**
 * Runs as MCP tasks (the 2026-07-28 tasks extension). A task IS a run: its taskId is the run_id, it is
 * reserved, bounded (32 retained / 4 active), listed, snapshotted, cancelled, cleaned up and released
 * exactly like any run, and every answer is read from the run registry. This layer only remembers which
 * runs were started as tasks, under which tool name, and their newest native event for statusMessage.
 */
import type { CallContext, TaskProvider, TaskStart, TaskUpdate, TaskView, ToolOutcome } from '../contracts/providers.ts';
import type { JsonObject } from '../util/json.ts';
import type { Clock } from '../util/clock.ts';
import type { EventKind } from '../native/events.ts';
import type { PreparedRun } from '../runs/execute.ts';
import type { RunEntry } from '../runs/registry.ts';
import { isToolError } from '../tool-errors.ts';
import { questionMessage, QUESTION_SCHEMA, readAnswer } from '../permission/elicit.ts';
import type { PermissionQuestion } from '../permission/broker.ts';
import { progressText } from '../native/progress-text.ts';
import { truncateUtf8 } from '../util/utf8.ts';
import { fromWireName, toWireName } from './declarations.ts';
import type { PastRun } from '../state/past-run.ts';
import { toolOutcomeOf } from './run-records.ts';
import { settledRunOutcome, toolErrorOutcome } from './call-tool.ts';
import type { LiveRun, Runtime } from './runtime.ts';

/**
 * Suggested poll rate. Claude Code polls at once, again ~1 s later, then at this rate (floor 250 ms):
 * a run lasts seconds to minutes, so once a second costs nothing and reports completion promptly.
 */
export const TASK_POLL_INTERVAL_MS = 1000;
/** statusMessage is cut (with an ellipsis) to this many UTF-8 bytes: a status line, not a transcript. */
export const MAX_STATUS_MESSAGE_BYTES = 256;

export interface TaskProviderDeps {
  readonly runtime: Runtime;
  readonly prepare: (args: JsonObject) => PreparedRun;
  readonly clock: Clock;
  readonly underscoreNames: boolean;
  /** What the records say of a run id of a server that is gone (lib/tools/run-records.ts); null: unknown. */
  readonly past?: (runId: string) => PastRun | null;
}

interface TaskRecord {
  readonly toolName: string;
  lastEvent: { readonly kind: EventKind; readonly event: JsonObject } | null;
  lastEventAt: string | null;
  cancelRequested: boolean;
}

/** What the task provider keeps: its dependencies, and a record per run started as a task. */
interface Tasks {
  readonly deps: TaskProviderDeps;
  // Bounded by the registry: entries whose run left it (released or evicted) are dropped on every start
  // and lookup, so at most MAX_RETAINED_RUNS records exist.
  readonly records: Map<string, TaskRecord>;
}

export function createTaskProvider(deps: TaskProviderDeps): TaskProvider {
  const t: Tasks = { deps, records: new Map() };
  return {
    supports: (name) => fromWireName(name, deps.underscoreNames) === 'claude.run',
    start: (name, args, ctx) => startTask(t, name, args, ctx),
    get(taskId) {
      const entry = entryOf(t, taskId);
      const record = t.records.get(taskId);
      return entry === null || record === undefined ? pastTask(t, taskId) : view(t, entry, record);
    },
    // A task of a server that is gone is over: nothing to answer or cancel, and saying so is the answer.
    update: (taskId, inputResponses) =>
      t.records.has(taskId) || pastTask(t, taskId) === null ? updateTask(t, taskId, inputResponses) : { kind: 'applied' },
    cancel: (taskId) => cancelTask(t, taskId) || pastTask(t, taskId) !== null,
  };
}

function startTask(t: Tasks, name: string, args: JsonObject, ctx: CallContext): TaskStart {
  const { runtime, clock } = t.deps;
  const tool = fromWireName(name, t.deps.underscoreNames);
  if (tool !== 'claude.run') throw new Error(`tool ${name} does not run as a task`);
  prune(t);
  const record: TaskRecord = { toolName: name, lastEvent: null, lastEventAt: null, cancelRequested: false };
  let entry: RunEntry<LiveRun>;
  try {
    // Detached from the request: the call is answered at once, so neither its signal nor its
    // progress token outlives it. Only tasks/cancel and shutdown end the run early.
    entry = runtime.start(t.deps.prepare(args), {
      acquiredBy: ctx.workInvocation,
      sync: false,
      task: true,
      onEvent: (kind, event) => {
        record.lastEvent = { kind, event };
        record.lastEventAt = new Date(clock.wallNow()).toISOString();
      },
    });
  } catch (error) {
    if (isToolError(error)) return { kind: 'outcome', outcome: toolErrorOutcome(tool, error) };
    throw error;
  }
  t.records.set(entry.run_id, record);
  return { kind: 'task', task: view(t, entry, record) };
}

/**
 * A task of a server that is gone, from its record: the completed (or cancelled) result it settled with, or
 * `failed` with what is known (when it ended, the conversation to resume). Only runs started as tasks.
 */
function pastTask(t: Tasks, taskId: string): TaskView | null {
  const past = t.deps.past?.(taskId) ?? null;
  if (past === null || !past.record.task) return null;
  const { record } = past;
  const base = {
    taskId,
    toolName: toWireName('claude.run', t.deps.underscoreNames),
    createdAt: record.created_at,
    lastUpdatedAt: record.ended?.at ?? record.created_at,
    ttlMs: null,
    pollIntervalMs: TASK_POLL_INTERVAL_MS,
  };
  if (past.kind === 'ended') {
    return {
      ...base,
      status: 'failed',
      statusMessage: past.message,
      outcome: null,
      error: { code: SERVER_GONE_CODE, message: past.message },
    };
  }
  const { outcome: o } = past;
  const outcome: ToolOutcome = toolOutcomeOf(o);
  if (o.cancelled) return { ...base, status: 'cancelled', statusMessage: statusLine(o.summary), outcome: null };
  return { ...base, status: 'completed', statusMessage: statusLine(o.summary), outcome };
}

/**
 * The JSON-RPC code in a gone server's failed task: -32001, the code a request gets while its server closes,
 * which is what ended the run.
 */
const SERVER_GONE_CODE = -32001;

function updateTask(t: Tasks, taskId: string, inputResponses: JsonObject): TaskUpdate {
  const entry = entryOf(t, taskId);
  if (entry === null || !t.records.has(taskId)) return { kind: 'not_found' };
  const broker = entry.live.broker;
  if (broker === null) return { kind: 'applied' };
  let late: TaskUpdate = { kind: 'applied' };
  for (const [key, response] of Object.entries(inputResponses)) {
    // Anything but an accepted, well-formed form is a deny (decline, cancel, malformed).
    const answer =
      typeof response === 'object' && response !== null && !Array.isArray(response) ? readAnswer(response as JsonObject) : null;
    try {
      broker.answer(key, answer ?? { behavior: 'deny', reason: 'the form was declined, cancelled or malformed' });
    } catch (error) {
      if (!isToolError(error)) throw error;
      // A key of a question decided without the person: its form stayed open past the bound (Claude Code
      // does not poll while a form is open, so it could not be withdrawn). Refused, and recorded.
      if (late.kind === 'applied' && broker.decided().questions.some((q) => q.question_id === key && q.late_answer !== undefined)) {
        late = { kind: 'late', questionId: key, message: error.message };
      }
    }
  }
  return late;
}

function cancelTask(t: Tasks, taskId: string): boolean {
  const entry = entryOf(t, taskId);
  const record = t.records.get(taskId);
  if (entry === null || record === undefined) return false;
  if (!entry.completed) {
    record.cancelRequested = true;
    entry.live.execution?.cancel();
  }
  return true;
}

function entryOf(t: Tasks, taskId: string): RunEntry<LiveRun> | null {
  if (!t.records.has(taskId)) return null;
  try {
    return t.deps.runtime.registry.get(taskId);
  } catch (error) {
    if (!isToolError(error)) throw error;
    t.records.delete(taskId);
    return null;
  }
}

function prune(t: Tasks): void {
  for (const taskId of t.records.keys()) entryOf(t, taskId);
}

function view(t: Tasks, entry: RunEntry<LiveRun>, record: TaskRecord): TaskView {
  const { runtime } = t.deps;
  const base = {
    taskId: entry.run_id,
    toolName: record.toolName,
    createdAt: entry.created_at,
    lastUpdatedAt: entry.settled_at ?? record.lastEventAt ?? entry.created_at,
    ttlMs: null,
    pollIntervalMs: TASK_POLL_INTERVAL_MS,
  };
  if (!entry.completed) {
    const asking = entry.live.broker?.pending() ?? [];
    if (asking.length > 0) {
      const first = asking[0]!;
      return {
        ...base,
        status: 'input_required',
        statusMessage: statusLine(`waiting for a permission answer: ${first.tool_name}`),
        outcome: null,
        inputRequests: taskInputRequests(entry.run_id, asking, t.deps.clock.wallNow()),
      };
    }
    return { ...base, status: 'working', statusMessage: workingMessage(entry, record), outcome: null };
  }
  const outcome: ToolOutcome = settledRunOutcome(runtime, entry);
  // The model-facing summary leaves the flag out; the run itself knows.
  if (runtime.resultOf(entry).cancelled) return { ...base, status: 'cancelled', statusMessage: statusLine(outcome.summary), outcome: null };
  return { ...base, status: 'completed', statusMessage: statusLine(outcome.summary), outcome };
}

/** The pending permission questions as the extension's inputRequests: key = question id, one form each. */
function taskInputRequests(runId: string, questions: readonly PermissionQuestion[], nowMs: number): Record<string, JsonObject> {
  const requests: Record<string, JsonObject> = {};
  for (const q of questions) {
    const leftMs = Date.parse(q.expires_at) - nowMs;
    requests[q.question_id] = {
      method: 'elicitation/create',
      params: { mode: 'form', message: questionMessage(runId, q, leftMs), requestedSchema: QUESTION_SCHEMA },
    };
  }
  return requests;
}

function workingMessage(entry: RunEntry<LiveRun>, record: TaskRecord): string {
  const last = record.lastEvent === null ? null : progressText(record.lastEvent.kind, record.lastEvent.event);
  return workingStatusMessage(entry.state, last, record.cancelRequested);
}

/** A working task's statusMessage: the run state, a cancel request, then the newest event's progress text. */
export function workingStatusMessage(state: string, lastEventText: string | null, cancelRequested: boolean): string {
  const head = cancelRequested ? `${state} (cancel requested)` : state;
  return statusLine(lastEventText === null ? head : `${head}: ${lastEventText}`);
}

function statusLine(text: string): string {
  return truncateUtf8(text, MAX_STATUS_MESSAGE_BYTES);
}
