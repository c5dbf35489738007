/**
 * A short, single-line progress message per native event: `type/subtype` plus a brief excerpt,
 * at most MAX_PROGRESS_BYTES of UTF-8 (cut on a code point boundary).
 */
import { truncateUtf8 } from '../util/utf8.ts';
import type { JsonObject } from '../util/json.ts';
import { assertNever } from '../util/assert-never.ts';
import type { EventKind } from './events.ts';
import { getArray, getBoolean, getNumber, getObject, getString } from './events.ts';

export const MAX_PROGRESS_BYTES = 1024;

export function progressText(kind: EventKind, event: JsonObject): string {
  return truncateUtf8(singleLine(describe(kind, event)), MAX_PROGRESS_BYTES);
}

function describe(kind: EventKind, event: JsonObject): string {
  const subtype = getString(event, 'subtype');
  switch (kind) {
    case 'system_init':
      return join('system/init', field('model', getString(event, 'model')), field('session', getString(event, 'session_id')));
    case 'system_status':
      return join('system/status', getString(event, 'status'));
    case 'system_api_retry': {
      const attempt = getNumber(event, 'attempt');
      const max = getNumber(event, 'max_retries');
      const delay = getNumber(event, 'retry_delay_ms');
      return join(
        'system/api_retry',
        attempt === null ? null : `attempt ${attempt}${max === null ? '' : `/${max}`}`,
        field('status', getNumber(event, 'error_status')),
        getString(event, 'error'),
        delay === null ? null : `retry in ${delay} ms`,
      );
    }
    case 'system_permission_denied':
      return join('system/permission_denied', getString(event, 'tool_name'), getString(event, 'message'));
    case 'system_other':
      return `system/${subtype ?? '?'}`;
    case 'stream_event':
      return streamText(getObject(event, 'event'));
    case 'assistant':
      return assistantText(event);
    case 'user':
      return userText(event);
    case 'result':
      return join(
        `result/${subtype ?? '?'}`,
        field('is_error', getBoolean(event, 'is_error')),
        field('turns', getNumber(event, 'num_turns')),
        getString(event, 'result'),
      );
    case 'other':
      return getString(event, 'type') ?? 'event';
    default:
      return assertNever(kind);
  }
}

function streamText(raw: JsonObject | null): string {
  const type = getString(raw, 'type') ?? '?';
  const head = `stream_event/${type}`;
  const block = getObject(raw, 'content_block');
  const delta = getObject(raw, 'delta');
  if (block !== null) return join(head, getString(block, 'type'), getString(block, 'name'));
  if (delta !== null) {
    const deltaType = getString(delta, 'type');
    const text = getString(delta, 'text') ?? getString(delta, 'thinking') ?? getString(delta, 'partial_json');
    return join(
      head,
      deltaType,
      text === null ? null : `${text.length} chars: ${text}`,
      field('stop_reason', getString(delta, 'stop_reason')),
    );
  }
  return head;
}

function assistantText(event: JsonObject): string {
  const error = getString(event, 'error');
  const message = getObject(event, 'message');
  const parts: Array<string | null> = ['assistant', error === null ? null : `error ${error}`];
  for (const item of getArray(message, 'content') ?? []) {
    const block = typeof item === 'object' && item !== null && !Array.isArray(item) ? item : null;
    const type = getString(block, 'type');
    if (type === 'text') parts.push(`text: ${getString(block, 'text') ?? ''}`);
    else if (type === 'tool_use') parts.push(`tool_use ${getString(block, 'name') ?? '?'}`);
    else parts.push(type);
  }
  return join(...parts);
}

function userText(event: JsonObject): string {
  const parts: Array<string | null> = ['user'];
  for (const item of getArray(getObject(event, 'message'), 'content') ?? []) {
    const block = typeof item === 'object' && item !== null && !Array.isArray(item) ? item : null;
    const type = getString(block, 'type');
    if (type === 'tool_result') parts.push(getBoolean(block, 'is_error') === true ? 'tool_result (error)' : 'tool_result');
    else if (type === 'text') parts.push(`text: ${getString(block, 'text') ?? ''}`);
    else parts.push(type);
  }
  return join(...parts);
}

function field(name: string, value: string | number | boolean | null): string | null {
  return value === null ? null : `${name}=${value}`;
}

function join(...parts: Array<string | null>): string {
  return parts.filter((part): part is string => part !== null && part !== '').join(' ');
}

function singleLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ');
}

export { truncateUtf8 };
