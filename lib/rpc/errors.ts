/**
 * Every JSON-RPC error the server puts on the wire is built here. Messages are fixed, short texts:
 * never a stack, a file path or a submitted value.
 */
import type { JsonObject, JsonValue } from '../util/json.ts';

/** Wire error codes: the five JSON-RPC 2.0 codes plus the server-defined ones (-32000..-32099). */
export const RPC_ERROR_CODES = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** A request other than initialize/ping arrived before initialize succeeded. */
  SERVER_NOT_INITIALIZED: -32000,
  /** A request arrived after the server began closing. */
  SERVER_CLOSING: -32001,
  /** resources/read named a URI the server does not list (MCP's conventional code). */
  RESOURCE_NOT_FOUND: -32002,
  /** The resource exists but cannot be read now; data.code says why. */
  RESOURCE_UNAVAILABLE: -32003,
  /** 2026-07-28: the request needs a client capability its `_meta` did not declare; data.requiredCapabilities. */
  MISSING_REQUIRED_CLIENT_CAPABILITY: -32021,
  /** 2026-07-28: the request's protocol version is not served here; data.supported (every date) and data.requested. */
  UNSUPPORTED_PROTOCOL_VERSION: -32022,
} as const satisfies Record<string, number>;

export type RpcErrorCode = (typeof RPC_ERROR_CODES)[keyof typeof RPC_ERROR_CODES];
export type RequestId = string | number;

export interface RpcErrorObject {
  readonly code: RpcErrorCode;
  readonly message: string;
  readonly data?: JsonValue;
}

export interface ErrorResponse {
  readonly jsonrpc: '2.0';
  readonly id: RequestId | null;
  readonly error: RpcErrorObject;
}

/** Thrown by handlers for protocol problems; anything else thrown becomes INTERNAL_ERROR. */
export class RpcError extends Error {
  readonly code: RpcErrorCode;
  readonly data: JsonValue | undefined;
  constructor(code: RpcErrorCode, message: string, data?: JsonValue) {
    super(message);
    this.name = 'RpcError';
    this.code = code;
    this.data = data;
  }
  toObject(): RpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

export function isRpcError(value: unknown): value is RpcError {
  return value instanceof RpcError;
}

export function errorResponse(id: RequestId | null, error: RpcErrorObject): ErrorResponse {
  return { jsonrpc: '2.0', id, error };
}

// The fixed errors, one constructor each, so wording and data shapes live in one place.
export const rpcErrors = {
  parseError: () => new RpcError(RPC_ERROR_CODES.PARSE_ERROR, 'Parse error'),
  invalidUtf8: () => new RpcError(RPC_ERROR_CODES.PARSE_ERROR, 'Parse error: frame is not valid UTF-8'),
  invalidRequest: () => new RpcError(RPC_ERROR_CODES.INVALID_REQUEST, 'Invalid Request'),
  idOutOfRange: () =>
    new RpcError(
      RPC_ERROR_CODES.INVALID_REQUEST,
      `Invalid Request: a numeric id must be an integer within ±${Number.MAX_SAFE_INTEGER} (larger ones cannot be answered exactly); use a string id`,
      { code: 'request_id_out_of_range' },
    ),
  emptyBatch: () => new RpcError(RPC_ERROR_CODES.INVALID_REQUEST, 'Invalid Request: empty batch'),
  batchNotSupported: () =>
    new RpcError(RPC_ERROR_CODES.INVALID_REQUEST, 'Invalid Request: batches are accepted only under protocol 2025-03-26'),
  frameTooLarge: (maxFrameBytes: number) =>
    new RpcError(RPC_ERROR_CODES.INVALID_REQUEST, `Invalid Request: frame exceeds ${maxFrameBytes} bytes`, {
      code: 'frame_too_large',
      max_frame_bytes: maxFrameBytes,
    }),
  duplicateId: () => new RpcError(RPC_ERROR_CODES.INVALID_REQUEST, 'Invalid Request: a request with this id is already in flight'),
  alreadyInitialized: () => new RpcError(RPC_ERROR_CODES.INVALID_REQUEST, 'Invalid Request: already initialized'),
  methodNotFound: () => new RpcError(RPC_ERROR_CODES.METHOD_NOT_FOUND, 'Method not found'),
  invalidParams: (message: string, path?: string) =>
    new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, `Invalid params: ${message}`, path === undefined ? undefined : { path }),
  unknownTool: () => new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, 'Unknown tool'),
  internal: () => new RpcError(RPC_ERROR_CODES.INTERNAL_ERROR, 'Internal error'),
  notInitialized: () => new RpcError(RPC_ERROR_CODES.SERVER_NOT_INITIALIZED, 'Server not initialized'),
  closing: () => new RpcError(RPC_ERROR_CODES.SERVER_CLOSING, 'Server is closing'),
  resourceNotFound: () => new RpcError(RPC_ERROR_CODES.RESOURCE_NOT_FOUND, 'Resource not found'),
  resourceUnavailable: (code: string, message: string) => new RpcError(RPC_ERROR_CODES.RESOURCE_UNAVAILABLE, message, { code }),
  /** 2026-07-28 replaced -32002 by -32602 for an unknown resource. */
  resourceNotFoundInvalidParams: () => new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, 'Invalid params: resource not found', { path: '/uri' }),
  /** `requested` is echoed only because the spec requires it, and only once it is known to be date-shaped. */
  unsupportedVersion: (supported: readonly string[], requested: string) =>
    new RpcError(RPC_ERROR_CODES.UNSUPPORTED_PROTOCOL_VERSION, 'Unsupported protocol version', { supported: [...supported], requested }),
  missingCapability: (requiredCapabilities: JsonObject) =>
    new RpcError(RPC_ERROR_CODES.MISSING_REQUIRED_CLIENT_CAPABILITY, 'Missing required client capability', { requiredCapabilities }),
  /** tasks/update for a question decided without the person (its form outlived the bound); the message says why. */
  lateAnswer: (questionId: string, message: string) =>
    new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, `Invalid params: ${message}`, {
      code: 'permission_question_not_pending',
      path: `/inputResponses/${questionId}`,
    }),
  taskNotFound: () =>
    new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, 'Invalid params: task not found (unknown, evicted or released)', { path: '/taskId' }),
} as const;
