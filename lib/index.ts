/** Library exports: the protocol core without stdio, and the contracts a host implements. */
export { createAdapter, SERVER_INFO, type Adapter, type AdapterOptions } from './adapter.ts';
export { serveConnection, MAX_FRAME_BYTES, type Connection, type ConnectionOptions } from './rpc/connection.ts';
export { SUPPORTED_PROTOCOL_VERSIONS, negotiateVersion, type ProtocolVersion } from './rpc/negotiate.ts';
export { RPC_ERROR_CODES, type RpcErrorCode } from './rpc/errors.ts';
export { validate, type ValidationResult } from './schema/validate.ts';
export { ResourceError } from './mcp/types.ts';
export type {
  CallContext,
  JsonSchema,
  ResourceDescriptor,
  ResourceHost,
  ToolAnnotations,
  ToolDefinition,
  ToolHost,
  ToolOutcome,
} from './mcp/types.ts';
export { TOOL_ERROR_CODES, ToolError, type ToolErrorCode, type ToolErrorData } from './tool-errors.ts';
