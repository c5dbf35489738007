/**
 * Classifies one parsed JSON-RPC message. Only the envelope is checked here; params are the
 * method's business (method existence outranks param validity). A message with a `method` key and
 * no `id` key is a notification whatever else is wrong with it: JSON-RPC never answers those.
 */
import { isPlainObject } from '../util/json.ts';
import type { RequestId } from './errors.ts';

export type Params = Record<string, unknown> | readonly unknown[] | undefined;

export type Envelope =
  | { readonly kind: 'request'; readonly id: RequestId; readonly method: string; readonly params: Params }
  | { readonly kind: 'notification'; readonly method: string; readonly params: Params }
  | { readonly kind: 'response'; readonly id: RequestId | null }
  /** Not a valid message; `id` is the request id when one could be read, else null. */
  | { readonly kind: 'invalid'; readonly id: RequestId | null; readonly idOutOfRange?: true }
  /** Notification-shaped but invalid: never answered; `method` is kept (when a string) for the log. */
  | { readonly kind: 'invalid-notification'; readonly method: string | null };

export function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value) && !isUnsafeInteger(value));
}

/**
 * An integer id beyond 2^53-1 was already rounded when the frame was parsed: answering it would name another
 * request (9007199254740993 comes back as 9007199254740992), so such a request is refused with id null.
 */
function isUnsafeInteger(value: number): boolean {
  return Number.isInteger(value) && !Number.isSafeInteger(value);
}

export function classifyMessage(value: unknown): Envelope {
  if (!isPlainObject(value)) return { kind: 'invalid', id: null };
  const params = value['params'];
  const paramsOk = params === undefined || isPlainObject(params) || Array.isArray(params);
  const method = value['method'];
  if (Object.hasOwn(value, 'method') && !Object.hasOwn(value, 'id')) {
    if (value['jsonrpc'] === '2.0' && typeof method === 'string' && paramsOk)
      return { kind: 'notification', method, params: params as Params };
    return { kind: 'invalid-notification', method: typeof method === 'string' ? method : null };
  }
  const id = isRequestId(value['id']) ? value['id'] : null;
  if (value['jsonrpc'] !== '2.0') return { kind: 'invalid', id };
  if (typeof method === 'string') {
    if (!paramsOk) return { kind: 'invalid', id };
    // MCP forbids null ids; any other non-string, non-number id is not a request either.
    if (id === null)
      return typeof value['id'] === 'number' && isUnsafeInteger(value['id'])
        ? { kind: 'invalid', id: null, idOutOfRange: true }
        : { kind: 'invalid', id: null };
    return { kind: 'request', id, method, params: params as Params };
  }
  if (method === undefined && (Object.hasOwn(value, 'result') || Object.hasOwn(value, 'error')) && Object.hasOwn(value, 'id')) {
    return { kind: 'response', id };
  }
  return { kind: 'invalid', id };
}

/** A key that keeps 1 and "1" apart. */
export function idKey(id: RequestId): string {
  return typeof id === 'number' ? `n:${id}` : `s:${id}`;
}
