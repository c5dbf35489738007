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
import { createLineSplitter, type LineSplitter } from '../util/line-splitter.ts';
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

/**
 * Everything one connection knows while it runs. The phases below (dispatch, pump, reading, shutdown)
 * are functions of this state; the stream listeners only feed it.
 */
interface ConnectionState {
  readonly input: Readable;
  readonly output: Writable;
  readonly adapter: ConnectionAdapter;
  readonly log: (line: string) => void;
  readonly clock: Clock;
  readonly writer: MessageWriter;
  readonly maxFrameBytes: number;
  readonly maxQueuedBytes: number;
  readonly maxInFlight: number;
  readonly flushStallMs: number;
  readonly closed: Promise<void>;
  readonly resolveClosed: () => void;
  /** Stops the adapter's notifications from reaching the writer. */
  readonly unsubscribe: () => void;
  /** Removes the stream listeners (set once they are attached). */
  detach: () => void;
  /** Frames split from the input and not yet dispatched: those before `head` are done. */
  frames: QueuedFrame[];
  head: number;
  /** Requests being handled (a batch counts its entries). */
  inFlight: number;
  inputEnded: boolean;
  closing: boolean;
  waitingForRoom: boolean;
  nextTurnScheduled: boolean;
  loggedBackpressure: boolean;
}

export function serveConnection(options: ConnectionOptions): Connection {
  const conn = createState(options);
  const splitter = createLineSplitter({
    maxLineBytes: conn.maxFrameBytes,
    onLine(frame) {
      conn.frames.push(frame);
    },
    onOversize(discardedBytes) {
      conn.frames.push(discardedBytes);
    },
  });
  conn.detach = listen(conn, splitter);
  return { closed: conn.closed, close: () => closeConnection(conn), writer: conn.writer };
}

function createState(options: ConnectionOptions): ConnectionState {
  const { input, output, adapter, log, clock } = options;
  const writer = createMessageWriter(
    output,
    options.maxQueuedProgressBytes === undefined ? {} : { maxQueuedProgressBytes: options.maxQueuedProgressBytes },
  );
  // Progress may be dropped under backpressure; a request to the client (it has an id) never is.
  const unsubscribe = adapter.onNotification((message) => {
    if (Object.hasOwn(message, 'id')) writer.write(message).catch((error: unknown) => log(`output failed: ${String(error)}`));
    else writer.writeDroppable(message);
  });
  let resolveClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  return {
    input,
    output,
    adapter,
    log,
    clock,
    writer,
    maxFrameBytes: options.maxFrameBytes ?? MAX_FRAME_BYTES,
    maxQueuedBytes: options.maxQueuedResponseBytes ?? MAX_QUEUED_RESPONSE_BYTES,
    maxInFlight: options.maxInFlightRequests ?? MAX_IN_FLIGHT_REQUESTS,
    flushStallMs: options.flushStallMs ?? FLUSH_STALL_MS,
    closed,
    resolveClosed,
    unsubscribe,
    detach: () => {},
    frames: [],
    head: 0,
    inFlight: 0,
    inputEnded: false,
    closing: false,
    waitingForRoom: false,
    nextTurnScheduled: false,
    loggedBackpressure: false,
  };
}

/** Feeds input into the splitter and the pump; EOF, an input error or a gone output close. Returns the detach. */
function listen(conn: ConnectionState, splitter: LineSplitter): () => void {
  const { input, output } = conn;
  const onData = (chunk: Buffer | string): void => {
    splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    pump(conn);
  };
  const onEnd = (): void => {
    splitter.end();
    conn.inputEnded = true;
    pump(conn);
  };
  const onInputError = (error: Error): void => {
    conn.log(`input failed: ${error.message}`);
    void closeConnection(conn);
  };
  const onOutputGone = (): void => {
    void closeConnection(conn);
  };
  input.on('data', onData);
  input.on('end', onEnd);
  input.on('error', onInputError);
  output.on('error', onOutputGone);
  output.on('close', onOutputGone);
  return () => {
    input.off('data', onData);
    input.off('end', onEnd);
    input.off('error', onInputError);
    output.off('error', onOutputGone);
    output.off('close', onOutputGone);
  };
}

function send(conn: ConnectionState, message: unknown): void {
  conn.writer.write(message).catch((error: unknown) => conn.log(`output failed: ${String(error)}`));
}

const outputBackedUp = (conn: ConnectionState): boolean => conn.writer.queuedBytes() > conn.maxQueuedBytes;
const blocked = (conn: ConnectionState): boolean => conn.inFlight >= conn.maxInFlight || outputBackedUp(conn);

/** Dispatches queued frames while there is room, then pauses or resumes reading to match. */
function pump(conn: ConnectionState): void {
  if (conn.closing) return;
  dispatchQueued(conn);
  if (conn.head === conn.frames.length) {
    conn.frames = [];
    conn.head = 0;
    if (conn.inputEnded) {
      void closeConnection(conn);
      return;
    }
    if (!blocked(conn)) {
      conn.input.resume();
      return;
    }
  }
  conn.input.pause();
  if (outputBackedUp(conn) && !conn.waitingForRoom) waitForRoom(conn);
}

/** At most MAX_DISPATCH_PER_TURN frames, then the rest in a later turn. */
function dispatchQueued(conn: ConnectionState): void {
  // At EOF the rest is dispatched regardless (at most one input chunk) so that shutdown answers it.
  for (let turn = 0; conn.head < conn.frames.length && (conn.inputEnded || !blocked(conn)); turn++) {
    if (turn === MAX_DISPATCH_PER_TURN) {
      scheduleNextTurn(conn);
      return;
    }
    const frame = conn.frames[conn.head] as QueuedFrame;
    conn.frames[conn.head++] = 0;
    dispatch(conn, frame);
  }
}

function scheduleNextTurn(conn: ConnectionState): void {
  if (conn.nextTurnScheduled) return;
  conn.nextTurnScheduled = true;
  setImmediate(() => {
    conn.nextTurnScheduled = false;
    pump(conn);
  });
}

/** Reading stays paused until the writer's queue is back under the bound. */
function waitForRoom(conn: ConnectionState): void {
  conn.waitingForRoom = true;
  if (!conn.loggedBackpressure) {
    conn.loggedBackpressure = true;
    conn.log(`output backed up (${conn.writer.queuedBytes()} bytes queued): reading paused until the client reads`);
  }
  void conn.writer.whenQueuedAtMost(conn.maxQueuedBytes).then(() => {
    conn.waitingForRoom = false;
    pump(conn);
  });
}

function dispatch(conn: ConnectionState, frame: QueuedFrame): void {
  if (typeof frame === 'number') {
    conn.log(`discarded an inbound frame of ${frame} bytes (limit ${conn.maxFrameBytes})`);
    return send(conn, oversizeFrameResponse(conn.maxFrameBytes));
  }
  const decoded = decodeFrame(frame);
  if (decoded.kind === 'blank') return;
  if (decoded.kind === 'error') return send(conn, decoded.response);
  const weight = Array.isArray(decoded.value) ? Math.max(1, decoded.value.length) : 1;
  conn.inFlight += weight;
  const settle = (): void => {
    conn.inFlight -= weight;
    pump(conn);
  };
  conn.adapter.handle(decoded.value).then(
    (response) => {
      if (response !== undefined) send(conn, response);
      settle();
    },
    (error: unknown) => {
      conn.log(`handler chain failed: ${String(error)}`);
      settle();
    },
  );
}

function closeConnection(conn: ConnectionState): Promise<void> {
  if (!conn.closing) {
    conn.closing = true;
    void shutdown(conn).finally(conn.resolveClosed);
  }
  return conn.closed;
}

async function shutdown(conn: ConnectionState): Promise<void> {
  const { writer, log } = conn;
  conn.detach();
  conn.input.pause();
  const unhandled = conn.frames.length - conn.head;
  if (unhandled > 0) log(`closing: ${unhandled} received frames were not handled`);
  conn.frames = [];
  conn.head = 0;
  try {
    await conn.adapter.close();
  } catch (error) {
    log(`close failed: ${String(error)}`);
  }
  conn.unsubscribe();
  const flushed = await settleUnlessStalled(writer.flush(), () => writer.stats().writtenBytes, conn.clock, conn.flushStallMs);
  if (!flushed) log(`gave up on ${writer.queuedBytes()} undelivered output bytes: none drained for ${conn.flushStallMs} ms`);
}
