/**
 * Builds the progress callback handed to a tool call: each call becomes one
 * notifications/progress with a strictly increasing counter. Nothing is sent once the request is done.
 */
import { truncateUtf8 } from '../util/utf8.ts';
import type { JsonObject } from '../util/json.ts';
import type { RequestId } from './errors.ts';
import { isRequestId } from './envelope.ts';
import { features, type AnyProtocolVersion } from './negotiate.ts';

/** Progress messages are cut to this many UTF-8 bytes (an ellipsis included). */
export const MAX_PROGRESS_MESSAGE_BYTES = 1024;

export interface ProgressReporter {
  readonly report: ((message: string) => void) | undefined;
  /** After this, report() is a no-op: no progress follows the response or a cancellation. */
  stop(): void;
}

/** Reads _meta.progressToken; anything but a string or number means "no progress wanted". */
export function getProgressToken(params: Record<string, unknown>): RequestId | undefined {
  const meta = params['_meta'];
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return undefined;
  const token = (meta as Record<string, unknown>)['progressToken'];
  return isRequestId(token) ? token : undefined;
}

export { truncateUtf8 };

export function createProgressReporter(
  token: RequestId | undefined,
  version: AnyProtocolVersion,
  send: (notification: JsonObject) => void,
): ProgressReporter {
  if (token === undefined) return { report: undefined, stop: () => {} };
  let active = true;
  let count = 0;
  const withMessage = features.progressMessage(version);
  return {
    report(message) {
      if (!active) return;
      count++;
      const params: JsonObject = { progressToken: token, progress: count };
      if (withMessage) params['message'] = truncateUtf8(String(message), MAX_PROGRESS_MESSAGE_BYTES);
      send({ jsonrpc: '2.0', method: 'notifications/progress', params });
    },
    stop() {
      active = false;
    },
  };
}
