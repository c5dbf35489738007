/**
 * Drives one adapter over a byte stream pair: input bytes → bounded line splitter → frame decode →
 * adapter → the single writer. Requests are handled concurrently (a long tools/call never blocks
 * ping or cancellation); each response is written when ready. Input EOF or error, an output
 * failure, or close() all lead to the same orderly shutdown: stop reading, close the adapter
 * (cleanup of everything it owns), flush what is queued (bounded), resolve `closed`.
 */
import type { Readable, Writable } from 'node:stream';
import type { Clock } from '../util/clock.ts';
import type { JsonObject } from '../util/json.ts';
import { createLineSplitter } from '../util/line-splitter.ts';
import { decodeFrame, oversizeFrameResponse } from './frame.ts';
import { createMessageWriter, type MessageWriter } from './writer.ts';

/** Default inbound frame bound. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** How long shutdown waits for queued output to drain before giving up on a reader that stopped reading. */
export const FLUSH_ON_CLOSE_MS = 1000;

export interface ConnectionAdapter {
  handle(message: unknown): Promise<unknown>;
  onNotification(listener: (notification: JsonObject) => void): () => void;
  close(): Promise<void>;
}

export interface ConnectionOptions {
  readonly input: Readable;
  readonly output: Writable;
  readonly adapter: ConnectionAdapter;
  readonly log: (line: string) => void;
  readonly clock: Clock;
  readonly maxFrameBytes?: number;
  readonly maxQueuedProgressBytes?: number;
}

export interface Connection {
  /** Resolves once shutdown finished; never rejects. */
  readonly closed: Promise<void>;
  /** Starts shutdown (idempotent) and resolves with `closed`. */
  close(): Promise<void>;
  readonly writer: MessageWriter;
}

export function serveConnection(options: ConnectionOptions): Connection {
  const { input, output, adapter, log, clock } = options;
  const maxFrameBytes = options.maxFrameBytes ?? MAX_FRAME_BYTES;
  const writer = createMessageWriter(
    output,
    options.maxQueuedProgressBytes === undefined ? {} : { maxQueuedProgressBytes: options.maxQueuedProgressBytes },
  );
  const send = (message: unknown): void => {
    writer.write(message).catch((error: unknown) => log(`output failed: ${String(error)}`));
  };

  const unsubscribe = adapter.onNotification((notification) => { writer.writeDroppable(notification); });
  const splitter = createLineSplitter({
    maxLineBytes: maxFrameBytes,
    onLine(frame) {
      const decoded = decodeFrame(frame);
      if (decoded.kind === 'blank') return;
      if (decoded.kind === 'error') return send(decoded.response);
      adapter.handle(decoded.value).then(
        (response) => { if (response !== undefined) send(response); },
        (error: unknown) => log(`handler chain failed: ${String(error)}`),
      );
    },
    onOversize(discardedBytes) {
      log(`discarded an inbound frame of ${discardedBytes} bytes (limit ${maxFrameBytes})`);
      send(oversizeFrameResponse(maxFrameBytes));
    },
  });

  const onData = (chunk: Buffer | string): void => { splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk); };
  const onEnd = (): void => { splitter.end(); void close(); };
  const onInputError = (error: Error): void => { log(`input failed: ${error.message}`); void close(); };
  const onOutputGone = (): void => { void close(); };

  let resolveClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => { resolveClosed = resolve; });
  let closing = false;
  const close = (): Promise<void> => {
    if (!closing) {
      closing = true;
      void shutdown().finally(resolveClosed);
    }
    return closed;
  };
  const shutdown = async (): Promise<void> => {
    input.off('data', onData);
    input.off('end', onEnd);
    input.off('error', onInputError);
    output.off('error', onOutputGone);
    output.off('close', onOutputGone);
    input.pause();
    try {
      await adapter.close();
    } catch (error) {
      log(`close failed: ${String(error)}`);
    }
    unsubscribe();
    let cancelTimer: () => void = () => {};
    const timeout = new Promise<void>((resolve) => { cancelTimer = clock.setTimeout(resolve, FLUSH_ON_CLOSE_MS); });
    await Promise.race([writer.flush(), timeout]);
    cancelTimer();
  };

  input.on('data', onData);
  input.on('end', onEnd);
  input.on('error', onInputError);
  output.on('error', onOutputGone);
  output.on('close', onOutputGone);

  return { closed, close, writer };
}
