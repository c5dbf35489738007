/**
 * The one place that shapes a task (tasks extension) for the wire: the CreateTaskResult of tools/call
 * and the DetailedTask of tasks/get. A completed task inlines the CallToolResult built by
 * toCallToolResult, the same function the synchronous tools/call uses, so both paths return one result.
 */
import type { JsonSchema, TaskView } from '../contracts/providers.ts';
import { RPC_ERROR_CODES } from '../rpc/errors.ts';
import type { AnyProtocolVersion } from '../rpc/negotiate.ts';
import { assertNever } from '../util/assert-never.ts';
import { toCallToolResult } from './tool-result.ts';

export function toWireTask(task: TaskView, version: AnyProtocolVersion, outputSchema: JsonSchema | undefined): Record<string, unknown> {
  const wire: Record<string, unknown> = {
    taskId: task.taskId,
    status: task.status,
    statusMessage: task.statusMessage,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
  };
  switch (task.status) {
    case 'working':
    case 'cancelled':
      return wire;
    case 'input_required':
      return { ...wire, inputRequests: task.inputRequests ?? {} };
    case 'completed':
      // A completed view always has its outcome; without one the task is reported failed, never as an empty success.
      if (task.outcome === null) return { ...wire, status: 'failed', error: internalError() };
      return { ...wire, result: toCallToolResult(task.outcome, version, outputSchema) };
    case 'failed':
      return { ...wire, error: task.error === undefined ? internalError() : { ...task.error } };
    default:
      return assertNever(task.status);
  }
}

/** tools/call's answer when it started a task: resultType "task" plus the task itself. */
export function toCreateTaskResult(
  task: TaskView,
  version: AnyProtocolVersion,
  outputSchema: JsonSchema | undefined,
): Record<string, unknown> {
  return { resultType: 'task', ...toWireTask(task, version, outputSchema) };
}

// `failed` is only for a JSON-RPC error during execution (extension rule); every run failure is a tool result instead.
function internalError(): Record<string, unknown> {
  return { code: RPC_ERROR_CODES.INTERNAL_ERROR, message: 'Internal error' };
}
