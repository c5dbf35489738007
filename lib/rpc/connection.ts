/**
 * Drives one adapter over a byte stream pair: input bytes → bounded line splitter → frame queue →
 * frame decode → adapter → the single writer. Requests are handled concurrently (a long tools/call
 * never blocks ping or cancellation); each response is written when ready.
 *
 * Backpressure: a client that stops reading must not make the server buffer without bound, so
 * reading input pauses while more than MAX_QUEUED_RESPONSE_BYTES wait for the reader or
 * MAX_IN_FLIGHT_REQUESTS are being handled, and resumes once both are back under. Pausing loses
 * nothing: frames already split from a chunk wait in the queue, the rest waits in the input stream.
 * Worst case the output holds the byte bound plus the responses of the requests in flight.
 *
 * Input EOF or error, an output failure, or close() all lead to the same orderly shutdown: stop
 * reading, close the adapter (cleanup of everything it owns), flush what is queued (bounded by
 * progress, see drain.ts), resolve `closed`. At EOF the frames still queued are handled first.
 */
import type { Readable, Writable } from 'node:stream';
import type { Clock } from '../util/clock.ts';
import type { JsonObject } from '../util/json.ts';
import { createLineSplitter } from '../util/line-splitter.ts';
import { FLUSH_STALL_MS, settleUnlessStalled } from './drain.ts';
import { decodeFrame, oversizeFrameResponse } from './frame.ts';
import { createMessageWriter, type MessageWriter } from './writer.ts';

/** Default inbound frame bound. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** Reading input pauses while more response bytes than this wait for the reader. */
export const MAX_QUEUED_RESPONSE_BYTES = 8 * 1024 * 1024;
/** Reading input pauses while this many requests are being handled (a batch counts its entries). */
export const MAX_IN_FLIGHT_REQUESTS = 1024;
/**
 * At most this many frames are dispatched per event-loop turn: a fast handler's response is queued
 * only after the turn, so this bounds how much work is in the air before the byte bound is re-checked.
 */
export const MAX_DISPATCH_PER_TURN = 64;

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
  readonly maxQueuedResponseBytes?: number;
  readonly maxInFlightRequests?: number;
  /** Shutdown gives up on undelivered output after a window this long without progress. */
  readonly flushStallMs?: number;
}

export interface Connection {
  /** Resolves once shutdown finished; never rejects. */
  readonly closed: Promise<void>;
  /** Starts shutdown (idempotent) and resolves with `closed`. */
  close(): Promise<void>;
  readonly writer: MessageWriter;
}

/** A frame's bytes, or the size of an oversize frame that was discarded (answered in its turn). */
type QueuedFrame = Buffer | number;

export function serveConnection(options: ConnectionOptions): Connection {
  const { input, output, adapter, log, clock } = options;
  const maxFrameBytes = options.maxFrameBytes ?? MAX_FRAME_BYTES;
  const maxQueuedBytes = options.maxQueuedResponseBytes ?? MAX_QUEUED_RESPONSE_BYTES;
  const maxInFlight = options.maxInFlightRequests ?? MAX_IN_FLIGHT_REQUESTS;
  const flushStallMs = options.flushStallMs ?? FLUSH_STALL_MS;
  const writer = createMessageWriter(
    output,
    options.maxQueuedProgressBytes === undefined ? {} : { maxQueuedProgressBytes: options.maxQueuedProgressBytes },
  );
  const send = (message: unknown): void => {
    writer.write(message).catch((error: unknown) => log(`output failed: ${String(error)}`));
  };

  // Progress may be dropped under backpressure; a request to the client (it has an id) never is.
  const unsubscribe = adapter.onNotification((message) => {
    if (Object.hasOwn(message, 'id')) writer.write(message).catch((error: unknown) => log(`output failed: ${String(error)}`));
    else writer.writeDroppable(message);
  });

  let frames: QueuedFrame[] = [];
  let head = 0;
  let inFlight = 0;
  let inputEnded = false;
  let closing = false;
  let waitingForRoom = false;
  let nextTurnScheduled = false;
  let loggedBackpressure = false;

  const dispatch = (frame: QueuedFrame): void => {
    if (typeof frame === 'number') {
      log(`discarded an inbound frame of ${frame} bytes (limit ${maxFrameBytes})`);
      return send(oversizeFrameResponse(maxFrameBytes));
    }
    const decoded = decodeFrame(frame);
    if (decoded.kind === 'blank') return;
    if (decoded.kind === 'error') return send(decoded.response);
    const weight = Array.isArray(decoded.value) ? Math.max(1, decoded.value.length) : 1;
    inFlight += weight;
    const settle = (): void => {
      inFlight -= weight;
      pump();
    };
    adapter.handle(decoded.value).then(
      (response) => {
        if (response !== undefined) send(response);
        settle();
      },
      (error: unknown) => {
        log(`handler chain failed: ${String(error)}`);
        settle();
      },
    );
  };

  const outputBackedUp = (): boolean => writer.queuedBytes() > maxQueuedBytes;
  const blocked = (): boolean => inFlight >= maxInFlight || outputBackedUp();

  /** Dispatches queued frames while there is room, then pauses or resumes reading to match. */
  const pump = (): void => {
    if (closing) return;
    // At EOF the rest is dispatched regardless (at most one input chunk) so that shutdown answers it.
    for (let turn = 0; head < frames.length && (inputEnded || !blocked()); turn++) {
      if (turn === MAX_DISPATCH_PER_TURN) {
        if (!nextTurnScheduled) {
          nextTurnScheduled = true;
          setImmediate(() => {
            nextTurnScheduled = false;
            pump();
          });
        }
        break;
      }
      const frame = frames[head] as QueuedFrame;
      frames[head++] = 0;
      dispatch(frame);
    }
    if (head === frames.length) {
      frames = [];
      head = 0;
      if (inputEnded) {
        void close();
        return;
      }
      if (!blocked()) {
        input.resume();
        return;
      }
    }
    input.pause();
    if (outputBackedUp() && !waitingForRoom) {
      waitingForRoom = true;
      if (!loggedBackpressure) {
        loggedBackpressure = true;
        log(`output backed up (${writer.queuedBytes()} bytes queued): reading paused until the client reads`);
      }
      void writer.whenQueuedAtMost(maxQueuedBytes).then(() => {
        waitingForRoom = false;
        pump();
      });
    }
  };

  const splitter = createLineSplitter({
    maxLineBytes: maxFrameBytes,
    onLine(frame) { frames.push(frame); },
    onOversize(discardedBytes) { frames.push(discardedBytes); },
  });

  const onData = (chunk: Buffer | string): void => {
    splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    pump();
  };
  const onEnd = (): void => {
    splitter.end();
    inputEnded = true;
    pump();
  };
  const onInputError = (error: Error): void => { log(`input failed: ${error.message}`); void close(); };
  const onOutputGone = (): void => { void close(); };

  let resolveClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => { resolveClosed = resolve; });
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
    const unhandled = frames.length - head;
    if (unhandled > 0) log(`closing: ${unhandled} received frames were not handled`);
    frames = [];
    head = 0;
    try {
      await adapter.close();
    } catch (error) {
      log(`close failed: ${String(error)}`);
    }
    unsubscribe();
    const flushed = await settleUnlessStalled(writer.flush(), () => writer.stats().writtenBytes, clock, flushStallMs);
    if (!flushed) log(`gave up on ${writer.queuedBytes()} undelivered output bytes: none drained for ${flushStallMs} ms`);
  };

  input.on('data', onData);
  input.on('end', onEnd);
  input.on('error', onInputError);
  output.on('error', onOutputGone);
  output.on('close', onOutputGone);

  return { closed, close, writer };
}
