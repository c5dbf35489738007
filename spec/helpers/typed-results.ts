/**
 * Typed readers for what specs receive (JSON-RPC responses, tool results, JSON lines, run views): each
 * checks the shape it claims and throws naming what is off, so a spec reads fields without casts and a
 * malformed value fails at the read instead of passing through as undefined.
 */
import type { EventPage } from '../../lib/runs/event-ring.ts';
import type { JsonObject, JsonValue } from '../../lib/util/json.ts';

/** A claude.run.events result: the run's id, state and completion, plus the page. */
export type EventPageView = EventPage & { readonly run_id: string; readonly state: string; readonly completed: boolean };

/** A plain object, taken to be JSON: the values specs read come from JSON (a parsed line, or a response built from JSON-safe data). */
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

// ---- Narrowing readers for JSON the specs receive (responses, tool results, logged wire lines). ----
// Each checks what it claims at runtime and throws naming what it read, so a wrong shape fails the test
// at the read with a clear message instead of a cast letting `undefined` through.

type Key = string | number;

function describe(value: unknown): string {
  return JSON.stringify(value)?.slice(0, 300) ?? String(value);
}

/** True for a plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is JsonObject {
  return isObject(value);
}

/**
 * `value` as a JSON object; throws naming `what` otherwise. Only the top level is checked: the values
 * specs read come from JSON (a parsed line or a response the adapter built from JSON-safe data).
 */
export function obj(value: unknown, what = 'value'): JsonObject {
  if (!isObject(value)) throw new Error(`${what} is not an object: ${describe(value)}`);
  return value;
}

/** `value` as an array; throws naming `what` otherwise. */
export function arr(value: unknown, what = 'value'): JsonValue[] {
  if (!Array.isArray(value)) throw new Error(`${what} is not an array: ${describe(value)}`);
  return value;
}

/** `value` as an array of JSON objects; throws naming `what` (and the index) otherwise. */
export function objs(value: unknown, what = 'value'): JsonObject[] {
  return arr(value, what).map((item, i) => obj(item, `${what}[${i}]`));
}

export function str(value: unknown, what = 'value'): string {
  if (typeof value !== 'string') throw new Error(`${what} is not a string: ${describe(value)}`);
  return value;
}

export function num(value: unknown, what = 'value'): number {
  if (typeof value !== 'number') throw new Error(`${what} is not a number: ${describe(value)}`);
  return value;
}

/**
 * The member at `path` (object keys or array indexes); every step before the last must exist and be an
 * object or array, the last may be absent (undefined). Throws naming the path that broke.
 */
export function at(value: unknown, ...path: readonly Key[]): JsonValue | undefined {
  let here: JsonValue | undefined = isObject(value) || Array.isArray(value) ? value : undefined;
  let walked = '$';
  for (const key of path) {
    if (typeof key === 'number') {
      if (!Array.isArray(here)) throw new Error(`${walked} is not an array: ${describe(walked === '$' ? value : here)}`);
      here = here[key];
    } else {
      if (!isObject(here)) throw new Error(`${walked} is not an object: ${describe(walked === '$' ? value : here)}`);
      here = here[key];
    }
    walked += typeof key === 'number' ? `[${key}]` : `.${key}`;
  }
  return here;
}

/**
 * The member at `path`, or undefined when any step is absent or not an object/array: for members that
 * are optional on purpose (read `at` where every step must be there).
 */
export function lookup(value: unknown, ...path: readonly Key[]): JsonValue | undefined {
  let here: JsonValue | undefined = isObject(value) || Array.isArray(value) ? value : undefined;
  for (const key of path) {
    if (typeof key === 'number') here = Array.isArray(here) ? here[key] : undefined;
    else here = isObject(here) ? here[key] : undefined;
  }
  return here;
}

/** The object at `path` (see `at`); throws if it is missing or not an object. */
export function objAt(value: unknown, ...path: readonly Key[]): JsonObject {
  return obj(at(value, ...path), `$.${path.join('.')}`);
}

/** The array at `path` (see `at`); throws if it is missing or not an array. */
export function arrAt(value: unknown, ...path: readonly Key[]): JsonValue[] {
  return arr(at(value, ...path), `$.${path.join('.')}`);
}

/** A JSON text that must hold an object. */
export function parseObj(text: string, what = 'JSON text'): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${what} is not JSON (${String(error)}): ${text.slice(0, 300)}`);
  }
  return obj(value, what);
}

/** The non-empty lines of a JSON-lines text, each an object. */
export function jsonLines(text: string, what = 'line'): JsonObject[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => parseObj(line, `${what} ${i + 1}`));
}

// ---- JSON-RPC responses ----

export interface RpcErrorView {
  readonly code: number;
  readonly message: string;
  readonly data?: JsonValue;
}

/** The `result` of a JSON-RPC response; throws (with the error) when the response is an error. */
export function rpcResult(response: unknown): JsonObject {
  const r = obj(response, 'JSON-RPC response');
  if (!('result' in r)) throw new Error(`expected a result, got: ${describe(r)}`);
  return obj(r['result'], 'result');
}

/** The `error` of a JSON-RPC response, checked to carry a numeric code and a message. */
export function rpcError(response: unknown): RpcErrorView {
  const r = obj(response, 'JSON-RPC response');
  if (!('error' in r)) throw new Error(`expected an error, got: ${describe(r)}`);
  const e = obj(r['error'], 'error');
  const view = { code: num(e['code'], 'error.code'), message: str(e['message'], 'error.message') };
  return e['data'] === undefined ? view : { ...view, data: e['data'] };
}

// ---- MCP results ----

/** The text of the first content item of a tool result (or of a resources/read content). */
export function firstText(result: unknown, member: 'content' | 'contents' = 'content'): string {
  return str(at(result, member, 0, 'text'), `${member}[0].text`);
}

/** The body of a tool result: its structuredContent, or else the JSON after the first line of its text. */
export function toolBody(result: unknown): JsonObject {
  const r = obj(result, 'tool result');
  if (r['structuredContent'] !== undefined) return obj(r['structuredContent'], 'structuredContent');
  const text = firstText(r);
  return parseObj(text.slice(text.indexOf('\n') + 1), 'tool result text body');
}

/** The `result` member of a successful tool result's body (structuredContent.result). */
export function toolResultOf(result: unknown): JsonObject {
  return objAt(toolBody(result), 'result');
}

// ---- Domain views ----

/** A claude.run.events result, every member checked. */
export function eventPageOf(result: unknown): EventPageView {
  const r = obj(result, 'claude.run.events result');
  const bool = (key: string): boolean => {
    if (typeof r[key] !== 'boolean') throw new Error(`claude.run.events result: ${key} is not a boolean: ${describe(r[key])}`);
    return r[key];
  };
  const int = (key: string): number => {
    const n = num(r[key], `claude.run.events result: ${key}`);
    if (!Number.isInteger(n)) throw new Error(`claude.run.events result: ${key} is not an integer: ${n}`);
    return n;
  };
  const events = objs(r['events'], 'events').map((e, i) => ({
    seq: num(e['seq'], `events[${i}].seq`),
    event: obj(e['event'], `events[${i}].event`),
  }));
  return {
    run_id: str(r['run_id'], 'run_id'),
    state: str(r['state'], 'state'),
    completed: bool('completed'),
    events,
    next_cursor: str(r['next_cursor'], 'next_cursor'),
    has_more: bool('has_more'),
    missed_events: int('missed_events'),
    stale_cursor: bool('stale_cursor'),
    events_total: int('events_total'),
    events_retained: int('events_retained'),
    bytes_retained: int('bytes_retained'),
    events_dropped: int('events_dropped'),
    events_omitted: int('events_omitted'),
  };
}

/** A run's permission_questions (ask_host): pending and decided questions, and how many decided were dropped. */
export interface QuestionsView {
  readonly pending: JsonObject[];
  readonly decided: JsonObject[];
  readonly decided_dropped: number;
}

export function questionsOf(value: unknown): QuestionsView {
  const q = obj(value, 'permission_questions');
  return {
    pending: objs(q['pending'], 'permission_questions.pending'),
    decided: objs(q['decided'], 'permission_questions.decided'),
    decided_dropped: num(q['decided_dropped'], 'permission_questions.decided_dropped'),
  };
}

/** A CallToolResult as the wire carries it, checked: text content items, isError, optional structuredContent. */
export interface CallToolResultView {
  readonly content: Array<{ readonly type: string; readonly text: string }>;
  readonly isError: boolean;
  readonly structuredContent?: JsonObject;
}

export function callToolResultOf(value: unknown): CallToolResultView {
  const r = obj(value, 'CallToolResult');
  const content = objs(r['content'], 'content').map((item, i) => ({
    type: str(item['type'], `content[${i}].type`),
    text: str(item['text'], `content[${i}].text`),
  }));
  if (r['isError'] !== undefined && typeof r['isError'] !== 'boolean')
    throw new Error(`isError is not a boolean: ${describe(r['isError'])}`);
  const view = { content, isError: r['isError'] === true };
  return r['structuredContent'] === undefined ? view : { ...view, structuredContent: obj(r['structuredContent'], 'structuredContent') };
}
