/**
 * Library exports. Most hosts need only createClaudeRunAdapter (the stdio server's tools, resources and
 * limits, in-process); createAdapter plus the provider contracts let a host bring its own tools instead.
 */
export { createClaudeRunAdapter, type ClaudeRunAdapterOptions, type OptionError } from './library.ts';
export { PlatformUnsupported, PLATFORM_UNSUPPORTED } from './process/platform.ts';
export { createAdapter, SERVER_INFO, type Adapter, type AdapterOptions, type LegacyAdapterOptions } from './adapter.ts';
export { serveConnection, MAX_FRAME_BYTES, type Connection, type ConnectionOptions } from './rpc/connection.ts';
export {
  ALL_PROTOCOL_VERSIONS,
  MODERN_PROTOCOL_VERSIONS,
  SUPPORTED_PROTOCOL_VERSIONS,
  negotiateVersion,
  type AnyProtocolVersion,
  type ProtocolVersion,
} from './rpc/negotiate.ts';
export { RPC_ERROR_CODES, type RpcErrorCode } from './rpc/errors.ts';
export { validate, type ValidationResult } from './schema/validate.ts';
export { ResourceError } from './contracts/providers.ts';
export type {
  CallContext,
  JsonSchema,
  ResourceDescriptor,
  ResourceProvider,
  TaskProvider,
  TaskStart,
  TaskStatus,
  TaskView,
  ToolAnnotations,
  ToolDefinition,
  ToolProvider,
  ToolOutcome,
} from './contracts/providers.ts';
// The names of 0.1.0, when the providers were called hosts: kept so vendored code keeps compiling.
export type { ResourceProvider as ResourceHost, TaskProvider as TaskHost, ToolProvider as ToolHost } from './contracts/providers.ts';
export { TOOL_ERROR_CODES, ToolError, type ToolErrorCode, type ToolErrorData } from './tool-errors.ts';
export { TOOL_NAMES, type ToolName } from './tools/declarations.ts';
export type { RunResult, RunState } from './runs/types.ts';
// For hosts that bundle lib/ into their own entry file: dispatch argv[2] === SUPERVISOR_ARGV_FLAG to runSupervisor().
export { runSupervisor } from './supervisor/child/supervisor.ts';
export { SUPERVISOR_ARGV_FLAG, type SupervisorCommand } from './supervisor/parent/supervisor-command.ts';
export { CleanupBackendUnavailable, CLEANUP_BACKEND_OPTIONS, type CleanupBackendOption } from './supervisor/parent/cleanup-backend.ts';
