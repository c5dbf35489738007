/**
 * Requests this server sends to its client (elicitation/create), and the routing of the client's
 * responses to them. Bounded: at most MAX_OUTBOUND_REQUESTS wait at once; more are refused at once.
 * Ids are strings with a prefix no client request id of ours can collide with (they live in the other
 * direction anyway). A request whose signal aborts is withdrawn with notifications/cancelled.
 */
import type { JsonObject } from '../util/json.ts';

export const MAX_OUTBOUND_REQUESTS = 64;
const ID_PREFIX = 'claude-run-mcp-';

export type OutboundFailure = 'aborted' | 'closed' | 'error_response' | 'too_many';

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
  /** A response message from the client; true when it answered one of our requests. */
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
          send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'the question was decided otherwise' } });
          reject(new OutboundError('aborted'));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiting.set(id, {
          resolve: (result) => { signal.removeEventListener('abort', onAbort); resolve(result); },
          reject: (error) => { signal.removeEventListener('abort', onAbort); reject(error); },
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
      const result = m['result'];
      if (typeof result === 'object' && result !== null && !Array.isArray(result)) w.resolve(result as JsonObject);
      else w.reject(new OutboundError('error_response'));
      return true;
    },
    close() {
      closed = true;
      for (const w of waiting.values()) w.reject(new OutboundError('closed'));
      waiting.clear();
    },
  };
}
