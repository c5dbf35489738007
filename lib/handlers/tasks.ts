/**
 * The tasks extension's methods (2026-07-28): tasks/get, tasks/cancel, tasks/update. Each needs the
 * extension declared on its own request (-32021 otherwise); an unknown taskId is -32602. Answers come
 * straight from the run registry through the provider, so polling is cheap and never waits.
 */
import type { TaskProvider } from '../contracts/providers.ts';
import { rpcErrors } from '../rpc/errors.ts';
import { requiredTasksCapability } from '../rpc/modern.ts';
import { isPlainObject, type JsonObject } from '../util/json.ts';
import type { HandlerContext } from './context.ts';
import { toWireTask } from './task-result.ts';
import { assertNever } from '../util/assert-never.ts';

/** Longest taskId looked up; longer ones cannot be ours (the extension's bound is 1024 characters). */
export const MAX_TASK_ID_CHARS = 1024;

export function tasksGet(params: Record<string, unknown>, ctx: HandlerContext): Record<string, unknown> {
  const { provider, taskId } = taskRequest(params, ctx);
  const task = provider.get(taskId);
  if (task === null) throw rpcErrors.taskNotFound();
  const tool = ctx.toolProvider.list().find((candidate) => candidate.name === task.toolName);
  return toWireTask(task, ctx.protocolVersion, tool?.outputSchema);
}

/** Idempotent: a second cancel (Claude Code sends two at once) or a cancel after the end is acknowledged too. */
export function tasksCancel(params: Record<string, unknown>, ctx: HandlerContext): Record<string, never> {
  const { provider, taskId } = taskRequest(params, ctx);
  if (!provider.cancel(taskId)) throw rpcErrors.taskNotFound();
  return {};
}

/**
 * Answers the outstanding permission questions of an ask_host run (keys are question ids). An answer to a
 * question that was decided without the person (the form outlived its bound) is refused with -32602 and
 * data.code permission_question_not_pending, so the provider re-polls for the task's real state instead of
 * believing it was heard; other keys that are not outstanding are acknowledged and ignored, as the extension says.
 */
export function tasksUpdate(params: Record<string, unknown>, ctx: HandlerContext): Record<string, never> {
  const { provider, taskId } = taskRequest(params, ctx);
  const responses = params['inputResponses'];
  if (!isPlainObject(responses)) throw rpcErrors.invalidParams('/inputResponses must be an object', '/inputResponses');
  const outcome = provider.update(taskId, responses as JsonObject);
  switch (outcome.kind) {
    case 'applied':
      return {};
    case 'not_found':
      throw rpcErrors.taskNotFound();
    case 'late':
      throw rpcErrors.lateAnswer(outcome.questionId, outcome.message);
    default:
      return assertNever(outcome);
  }
}

function taskRequest(params: Record<string, unknown>, ctx: HandlerContext): { provider: TaskProvider; taskId: string } {
  if (!ctx.tasks) throw rpcErrors.missingCapability(requiredTasksCapability());
  const provider = ctx.toolProvider.tasks;
  const taskId = params['taskId'];
  if (typeof taskId !== 'string' || taskId.length === 0 || taskId.length > MAX_TASK_ID_CHARS) {
    throw rpcErrors.invalidParams(`/taskId must be a string of 1 to ${MAX_TASK_ID_CHARS} characters`, '/taskId');
  }
  // A provider without tasks never issued one.
  if (provider === undefined) throw rpcErrors.taskNotFound();
  return { provider, taskId };
}
