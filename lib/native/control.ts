/**
 * The native CLI's own control protocol on its stdin and stdout (print mode with `--input-format
 * stream-json`, cli-tree.json `stdin_channel`). Pure: it recognises the control lines the native writes and
 * builds the lines written to it. Recognition is strict and bounded; anything not exactly a known shape is
 * `unknown`, and nothing unknown is ever taken as an answer or as a permission request.
 */
import type { JsonObject, JsonValue } from '../util/json.ts';
import { isPlainObject } from '../util/json.ts';

/** A request id the native (or this package) chose; longer ones are not answered by echoing them. */
export const MAX_CONTROL_REQUEST_ID_CHARS = 128;
/** A tool name as asked about (`Bash`, `mcp__server__tool`). */
export const MAX_CONTROL_TOOL_NAME_CHARS = 256;
/** A tool_use id as asked about (`toolu_…`). */
export const MAX_CONTROL_TOOL_USE_ID_CHARS = 256;
/**
 * The JSON text of a tool input the native asks about. Equal to the native frame bound (a longer line stops
 * the run before it gets here), so it only matters to callers that hand in objects parsed elsewhere.
 */
export const MAX_CONTROL_INPUT_BYTES = 1024 * 1024;
/** The error text of a control_response of subtype error. */
export const MAX_CONTROL_ERROR_CHARS = 4096;
/** The text the model reads when a tool use is denied. */
export const MAX_CONTROL_DENY_MESSAGE_CHARS = 4096;
/** The `type` / `subtype` of an unknown control line, as reported; longer or odd ones are reported as null. */
export const MAX_CONTROL_NAME_CHARS = 64;

/** Printable ASCII without spaces: every id the pinned native was seen to write (UUIDs, `toolu_…`). */
const ID_PATTERN = /^[\x21-\x7e]+$/;
const NAME_PATTERN = /^[a-z][a-z0-9_]*$/;

/** The native asks whether a tool may run; it waits until a control_response with this request_id. */
export interface CanUseToolRequest {
  readonly kind: 'can_use_tool';
  readonly requestId: string;
  readonly toolName: string;
  /** The tool input exactly as the native sent it; an allow echoes this and nothing else. */
  readonly input: JsonObject;
  readonly inputBytes: number;
  readonly toolUseId: string;
}

/** The native's answer to a control_request this package sent (an interrupt). */
export type ControlResponse =
  | { readonly kind: 'response'; readonly outcome: 'success'; readonly requestId: string }
  | { readonly kind: 'response'; readonly outcome: 'error'; readonly requestId: string; readonly error: string };

export const UNKNOWN_CONTROL_REASONS = ['unknown_type', 'unknown_subtype', 'malformed'] as const;
export type UnknownControlReason = (typeof UNKNOWN_CONTROL_REASONS)[number];

/** A control line that is none of the above. Never an answer, never a question. */
export interface UnknownControl {
  readonly kind: 'unknown';
  readonly reason: UnknownControlReason;
  /** The line's `type`/`subtype` when short and plain (MAX_CONTROL_NAME_CHARS), else null. */
  readonly type: string | null;
  readonly subtype: string | null;
  /**
   * The request id of a control_request whose id is well formed: the native waits for an answer to it, so
   * the caller refuses it (errorResponseLine) instead of leaving the native waiting. Null otherwise.
   */
  readonly refusableId: string | null;
  /** Which field broke the shape (a JSON path of the line), for malformed lines; null otherwise. */
  readonly path: string | null;
}

export type ControlLine = CanUseToolRequest | ControlResponse | UnknownControl;

const isId = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max && ID_PATTERN.test(v);
const isRequestId = (v: unknown): v is string => isId(v, MAX_CONTROL_REQUEST_ID_CHARS);
const plainName = (v: unknown): string | null =>
  typeof v === 'string' && v.length <= MAX_CONTROL_NAME_CHARS && NAME_PATTERN.test(v) ? v : null;

/** True for the lines this module owns: every `type` that starts with `control_`. */
export function isControlLine(event: JsonObject): boolean {
  const type = event['type'];
  return typeof type === 'string' && type.startsWith('control_');
}

/** Classifies one native stdout object; null when it is not a control line (an ordinary stream event). */
export function parseControlLine(event: JsonObject): ControlLine | null {
  if (!isControlLine(event)) return null;
  switch (event['type']) {
    case 'control_request':
      return parseRequest(event);
    case 'control_response':
      return parseResponse(event);
    default:
      return unknown('unknown_type', event, null, null, null);
  }
}

function unknown(
  reason: UnknownControlReason,
  event: JsonObject,
  subtype: unknown,
  refusableId: string | null,
  path: string | null,
): UnknownControl {
  return { kind: 'unknown', reason, type: plainName(event['type']), subtype: plainName(subtype), refusableId, path };
}

function parseRequest(event: JsonObject): ControlLine {
  const id = isRequestId(event['request_id']) ? event['request_id'] : null;
  const request = event['request'];
  if (!isPlainObject(request)) return unknown('malformed', event, null, id, '/request');
  const subtype = request['subtype'];
  if (id === null) return unknown('malformed', event, subtype, null, '/request_id');
  if (subtype !== 'can_use_tool') return unknown('unknown_subtype', event, subtype, id, null);
  const toolName = request['tool_name'];
  if (!isId(toolName, MAX_CONTROL_TOOL_NAME_CHARS)) return unknown('malformed', event, subtype, id, '/request/tool_name');
  const toolUseId = request['tool_use_id'];
  if (!isId(toolUseId, MAX_CONTROL_TOOL_USE_ID_CHARS)) return unknown('malformed', event, subtype, id, '/request/tool_use_id');
  const input = request['input'];
  if (!isPlainObject(input)) return unknown('malformed', event, subtype, id, '/request/input');
  const inputBytes = Buffer.byteLength(JSON.stringify(input), 'utf8');
  if (inputBytes > MAX_CONTROL_INPUT_BYTES) return unknown('malformed', event, subtype, id, '/request/input');
  return { kind: 'can_use_tool', requestId: id, toolName, input: input as JsonObject, inputBytes, toolUseId };
}

function parseResponse(event: JsonObject): ControlLine {
  const response = event['response'];
  if (!isPlainObject(response)) return unknown('malformed', event, null, null, '/response');
  const subtype = response['subtype'];
  const requestId = response['request_id'];
  if (subtype !== 'success' && subtype !== 'error') return unknown('unknown_subtype', event, subtype, null, null);
  if (!isRequestId(requestId)) return unknown('malformed', event, subtype, null, '/response/request_id');
  if (subtype === 'success') return { kind: 'response', outcome: 'success', requestId };
  const error = response['error'];
  if (typeof error !== 'string' || error.length > MAX_CONTROL_ERROR_CHARS)
    return unknown('malformed', event, subtype, null, '/response/error');
  return { kind: 'response', outcome: 'error', requestId, error };
}

// Lines for the native's stdin. Each is one JSON text without its newline.

/** One user turn: `content` is the message text, of any size (it never goes through argv). */
export function userMessageLine(content: string): string {
  return JSON.stringify({ type: 'user', message: { role: 'user', content } });
}

/**
 * Allows the tool use asked about, with the native's OWN input as updatedInput (the input is the request's,
 * never anything a client sent: a changed object would run as changed), and no updatedPermissions.
 */
export function allowLine(request: CanUseToolRequest): string {
  return success(request.requestId, { behavior: 'allow', updatedInput: request.input });
}

/** Denies the tool use; the model reads `message`. Throws RangeError over MAX_CONTROL_DENY_MESSAGE_CHARS. */
export function denyLine(requestId: string, message: string): string {
  if (message.length > MAX_CONTROL_DENY_MESSAGE_CHARS)
    throw new RangeError(`deny message over ${MAX_CONTROL_DENY_MESSAGE_CHARS} characters`);
  return success(requestId, { behavior: 'deny', message });
}

/** Refuses a request this package does not serve (an unknown subtype); the native treats it as failed. */
export function errorResponseLine(requestId: string, error: string): string {
  if (error.length > MAX_CONTROL_ERROR_CHARS) throw new RangeError(`error text over ${MAX_CONTROL_ERROR_CHARS} characters`);
  return JSON.stringify({ type: 'control_response', response: { subtype: 'error', request_id: checkedId(requestId), error } });
}

/** Asks the native to stop its current turn; it acknowledges with a success response naming `requestId`. */
export function interruptLine(requestId: string): string {
  return JSON.stringify({ type: 'control_request', request_id: checkedId(requestId), request: { subtype: 'interrupt' } });
}

function success(requestId: string, response: Readonly<Record<string, JsonValue>>): string {
  return JSON.stringify({ type: 'control_response', response: { subtype: 'success', request_id: checkedId(requestId), response } });
}

function checkedId(requestId: string): string {
  if (!isRequestId(requestId)) throw new RangeError(`request id not 1..${MAX_CONTROL_REQUEST_ID_CHARS} printable characters`);
  return requestId;
}
