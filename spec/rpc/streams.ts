// In-memory streams for protocol specs.
import { PassThrough, Writable } from 'node:stream';
import { pollUntil } from '../helpers/poll.ts';
import { jsonLines } from '../helpers/typed-results.ts';
import type { JsonObject } from '../../lib/util/json.ts';

/**
 * A sink whose writes stay pending while it is gated: their bytes count in `writableLength` (like
 * libuv's queue for a pipe) and write() returns false once that passes `highWaterMark`.
 */
export interface GatedSink {
  readonly stream: Writable;
  /** Complete lines written so far, parsed. */
  /** Every line written so far, each checked to be a JSON object. */
  messages(): JsonObject[];
  /** Every chunk size the stream was handed, in order. */
  readonly chunkSizes: number[];
  gate(): void;
  release(): void;
  /** Completes the oldest pending write and stays gated; false when none was pending. */
  releaseOne(): boolean;
}

export function createGatedSink(gated = false, highWaterMark = 1): GatedSink {
  // Bytes, decoded only when read: a slice may end inside a multibyte character, as on a real pipe.
  const bytes: Buffer[] = [];
  let closed = gated;
  let held: (() => void)[] = [];
  const chunkSizes: number[] = [];
  const stream = new Writable({
    highWaterMark,
    write(chunk: Buffer, _encoding, callback) {
      bytes.push(Buffer.from(chunk));
      chunkSizes.push(chunk.length);
      if (closed) held.push(() => callback());
      else callback();
    },
  });
  return {
    stream,
    chunkSizes,
    messages: () => jsonLines(Buffer.concat(bytes).toString('utf8'), 'written line'),
    gate() {
      closed = true;
    },
    release() {
      closed = false;
      const callbacks = held;
      held = [];
      for (const callback of callbacks) callback();
    },
    releaseOne() {
      const callback = held.shift();
      callback?.();
      return callback !== undefined;
    },
  };
}

/** Lets queued microtasks and immediates run `rounds` times (for asserting that nothing more happens). */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Resolves when `predicate` holds, polled at once and then each timer turn; rejects (naming it) after `deadlineMs`. */
export async function waitFor(predicate: () => boolean, deadlineMs = 5000): Promise<void> {
  await pollUntil(() => `${predicate.toString().slice(0, 200)}`, predicate, { timeoutMs: deadlineMs, intervalMs: 0 });
}

export function createInput(): PassThrough {
  return new PassThrough();
}
