/**
 * tools/call: look the tool up, validate arguments against its advertised inputSchema, read the
 * work-invocation metadata, then hand the call to the tool provider.
 * Invalid arguments: under 2025-11-25 a tool execution error (isError, code invalid_arguments, path);
 * under older dates a -32602 protocol error with data.path. Unknown tool: -32602 "Unknown tool".
 * Tasks: only when this very request declared the tasks extension (modern era) and the provider makes this
 * tool a task does the call return a task at once; every other call is answered synchronously.
 */
import { isUuid } from '../util/uuid.ts';
import { isPlainObject, type JsonObject } from '../util/json.ts';
import { isToolError, type ToolErrorData } from '../tool-errors.ts';
import type { JsonSchema, ToolOutcome } from '../contracts/providers.ts';
import { rpcErrors } from '../rpc/errors.ts';
import { eraFeatures, features } from '../rpc/negotiate.ts';
import { toCreateTaskResult } from './task-result.ts';
import { validate } from '../schema/validate.ts';
import { escapePointerToken } from '../util/json-pointer.ts';
import type { HandlerContext } from './context.ts';
import { toCallToolResult, type CallToolResult } from './tool-result.ts';

export const WORK_INVOCATION_META_KEY = 'io.github.computer-mcp/work-invocation';
const WORK_INVOCATION_PATH = `/_meta/${escapePointerToken(WORK_INVOCATION_META_KEY)}`;

export async function toolsCall(params: Record<string, unknown>, ctx: HandlerContext): Promise<CallToolResult | Record<string, unknown>> {
  const name = params['name'];
  if (typeof name !== 'string') throw rpcErrors.invalidParams('/name must be a string', '/name');
  const tool = ctx.toolProvider.list().find((candidate) => candidate.name === name);
  if (tool === undefined) throw rpcErrors.unknownTool();

  const args = params['arguments'] === undefined ? {} : params['arguments'];
  const invalid = (path: string, message: string): CallToolResult => invalidArguments(ctx, tool.outputSchema, path, message);
  if (!isPlainObject(args)) return invalid('', 'arguments must be an object');
  const checked = validate(tool.inputSchema, args);
  if (!checked.ok) return invalid(checked.path, `${checked.path || 'arguments'} ${checked.message}`);

  const invocation = getWorkInvocation(params['_meta']);
  if (invocation === 'invalid') return invalid(WORK_INVOCATION_PATH, `${WORK_INVOCATION_PATH} must be a UUID`);

  const taskProvider = ctx.toolProvider.tasks;
  if (ctx.tasks && eraFeatures.tasksExtension(ctx.protocolVersion) && taskProvider !== undefined && taskProvider.supports(name)) {
    const started = taskProvider.start(name, args as JsonObject, {
      signal: ctx.signal,
      progress: undefined,
      workInvocation: invocation,
      protocolVersion: ctx.protocolVersion,
    });
    return started.kind === 'task'
      ? toCreateTaskResult(started.task, ctx.protocolVersion, tool.outputSchema)
      : toCallToolResult(started.outcome, ctx.protocolVersion, tool.outputSchema);
  }

  let outcome: ToolOutcome;
  try {
    outcome = await ctx.toolProvider.call(name, args as JsonObject, {
      signal: ctx.signal,
      progress: ctx.progress,
      workInvocation: invocation,
      protocolVersion: ctx.protocolVersion,
      elicit: ctx.elicit,
    });
  } catch (error) {
    // The tool provider's contract is to return ToolErrors; a thrown one is still a tool error, not a bug.
    if (!isToolError(error)) throw error;
    outcome = { ok: false, summary: error.message, error: error.toData(), result: null };
  }
  return toCallToolResult(outcome, ctx.protocolVersion, tool.outputSchema);
}

/** null when absent; the UUID when valid; 'invalid' otherwise (a host must send a UUID or nothing). */
function getWorkInvocation(meta: unknown): string | null | 'invalid' {
  if (!isPlainObject(meta) || !Object.hasOwn(meta, WORK_INVOCATION_META_KEY)) return null;
  const value = meta[WORK_INVOCATION_META_KEY];
  return typeof value === 'string' && isUuid(value) ? value : 'invalid';
}

function invalidArguments(ctx: HandlerContext, outputSchema: JsonSchema | undefined, path: string, message: string): CallToolResult {
  if (!features.validationAsToolError(ctx.protocolVersion)) throw rpcErrors.invalidParams(message, path);
  const error: ToolErrorData = { code: 'invalid_arguments', message, path };
  return toCallToolResult({ ok: false, summary: `Invalid arguments: ${message}`, error, result: null }, ctx.protocolVersion, outputSchema);
}
