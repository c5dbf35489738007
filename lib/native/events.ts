/**
 * One native stream-json frame as a typed view. The parsed object is kept whole (unknown extension
 * fields included) and classified by `type`/`subtype` only, never by key order (it changed between
 * native versions).
 */
import type { JsonObject, JsonValue } from '../util/json.ts';
import { isPlainObject, parseJsonObject } from '../util/json.ts';

/** A native stdout line may not exceed this before its newline; a longer one stops the run. */
export const MAX_NATIVE_FRAME_BYTES = 1024 * 1024;

export const EVENT_KINDS = [
  'system_init',
  'system_status',
  'system_api_retry',
  'system_permission_denied',
  'system_other',
  'stream_event',
  'assistant',
  'user',
  'result',
  'other',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export type ParsedEvent = { readonly ok: true; readonly event: JsonObject; readonly kind: EventKind } | { readonly ok: false };

const NOT_AN_EVENT: ParsedEvent = { ok: false };

/** Parses one frame (without its newline). Anything that is not a JSON object is `{ ok: false }`. */
export function parseNativeEvent(frame: string | Buffer): ParsedEvent {
  const text = typeof frame === 'string' ? frame : frame.toString('utf8');
  const value = parseJsonObject(text);
  if (value === null) return NOT_AN_EVENT;
  const event = value as JsonObject;
  return { ok: true, event, kind: eventKind(event) };
}

export function eventKind(event: JsonObject): EventKind {
  const type = event['type'];
  switch (type) {
    case 'system':
      return systemKind(event['subtype']);
    case 'stream_event':
      return 'stream_event';
    case 'assistant':
      return 'assistant';
    case 'user':
      return 'user';
    case 'result':
      return 'result';
    default:
      return 'other';
  }
}

function systemKind(subtype: JsonValue | undefined): EventKind {
  switch (subtype) {
    case 'init':
      return 'system_init';
    case 'status':
      return 'system_status';
    case 'api_retry':
      return 'system_api_retry';
    case 'permission_denied':
      return 'system_permission_denied';
    default:
      return 'system_other';
  }
}

// Typed field readers: a field of the wrong type reads as absent (null), never coerced.

export function getString(object: JsonObject | null | undefined, key: string): string | null {
  const value = object?.[key];
  return typeof value === 'string' ? value : null;
}

export function getNumber(object: JsonObject | null | undefined, key: string): number | null {
  const value = object?.[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

export function getBoolean(object: JsonObject | null | undefined, key: string): boolean | null {
  const value = object?.[key];
  return typeof value === 'boolean' ? value : null;
}

export function getObject(object: JsonObject | null | undefined, key: string): JsonObject | null {
  const value = object?.[key];
  return isPlainObject(value) ? (value as JsonObject) : null;
}

export function getArray(object: JsonObject | null | undefined, key: string): JsonValue[] | null {
  const value = object?.[key];
  return Array.isArray(value) ? value : null;
}
