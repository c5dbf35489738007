/**
 * Requests this server sends to its client (elicitation/create), and the routing of the client's
 * responses to them. Bounded: at most MAX_OUTBOUND_REQUESTS wait at once; more are refused at once.
 * Ids are strings with a prefix no client request id of ours can collide with (they live in the other
 * direction anyway). A request whose signal aborts is withdrawn with notifications/cancelled.
 */
import type { JsonObject } from '../util/json.ts';

export const MAX_OUTBOUND_REQUESTS = 64;
const ID_PREFIX = 'claude-run-mcp-';

/** `malformed_response`: not a JSON-RPC success (both or neither of result and error, a result that is not an object, no `jsonrpc: "2.0"`). */
export type OutboundFailure = 'aborted' | 'closed' | 'error_response' | 'malformed_response' | 'too_many';

export class OutboundError extends Error {
  readonly reason: OutboundFailure;
  constructor(reason: OutboundFailure) {
    super(`outbound request failed: ${reason}`);
    this.reason = reason;
  }
}

export interface Outbound {
  /** Sends one request; resolves with the client's result object, rejects with OutboundError. */
  request(method: string, params: JsonObject, signal: AbortSignal): Promise<JsonObject>;
  /**
   * A message without a method that names one of our pending requests (also one the envelope found invalid);
   * true when it did. Only a well-formed success resolves the request; anything else rejects it.
   */
  onResponse(message: unknown): boolean;
  /** Rejects everything pending (closing). */
  close(): void;
}

interface Waiting {
  resolve(result: JsonObject): void;
  reject(error: OutboundError): void;
}

export function createOutbound(send: (message: JsonObject) => void): Outbound {
  const waiting = new Map<string, Waiting>();
  let seq = 0;
  let closed = false;
  return {
    request(method, params, signal) {
      if (closed) return Promise.reject(new OutboundError('closed'));
      if (signal.aborted) return Promise.reject(new OutboundError('aborted'));
      if (waiting.size >= MAX_OUTBOUND_REQUESTS) return Promise.reject(new OutboundError('too_many'));
      seq += 1;
      const id = `${ID_PREFIX}${seq}`;
      return new Promise<JsonObject>((resolve, reject) => {
        const onAbort = (): void => {
          if (!waiting.delete(id)) return;
          send({
            jsonrpc: '2.0',
            method: 'notifications/cancelled',
            params: { requestId: id, reason: 'the question was decided otherwise' },
          });
          reject(new OutboundError('aborted'));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiting.set(id, {
          resolve: (result) => {
            signal.removeEventListener('abort', onAbort);
            resolve(result);
          },
          reject: (error) => {
            signal.removeEventListener('abort', onAbort);
            reject(error);
          },
        });
        send({ jsonrpc: '2.0', id, method, params });
      });
    },
    onResponse(message) {
      if (typeof message !== 'object' || message === null || Array.isArray(message)) return false;
      const m = message as Record<string, unknown>;
      const id = m['id'];
      if (typeof id !== 'string') return false;
      const w = waiting.get(id);
      if (w === undefined) return false;
      waiting.delete(id);
      const outcome = responseOutcome(m);
      if (typeof outcome === 'string') w.reject(new OutboundError(outcome));
      else w.resolve(outcome);
      return true;
    },
    close() {
      closed = true;
      for (const w of waiting.values()) w.reject(new OutboundError('closed'));
      waiting.clear();
    },
  };
}

/**
 * JSON-RPC 2.0: a response carries exactly one of `result` and `error`. A result is trusted only when the
 * message is a clean success; a response with both keys is not "a result with an extra key".
 */
function responseOutcome(m: Record<string, unknown>): JsonObject | 'error_response' | 'malformed_response' {
  const hasResult = Object.hasOwn(m, 'result');
  const hasError = Object.hasOwn(m, 'error');
  if (m['jsonrpc'] !== '2.0' || Object.hasOwn(m, 'method') || hasResult === hasError) return 'malformed_response';
  if (hasError) return 'error_response';
  const result = m['result'];
  return typeof result === 'object' && result !== null && !Array.isArray(result) ? (result as JsonObject) : 'malformed_response';
}
