/**
 * The single writer of the outbound stream: one JSON message per line, in order, awaiting 'drain'
 * whenever the stream asks for it. Responses are never dropped. Progress notifications are advisory:
 * while the stream is backed up, at most MAX_QUEUED_PROGRESS_BYTES of them wait in the queue and the
 * rest are dropped and counted, so a slow reader cannot make the server buffer without bound.
 * Responses are bounded one level up: the connection stops reading requests while queuedBytes() is
 * too high, and resumes through whenQueuedAtMost().
 */
import type { Writable } from 'node:stream';
import { drained } from './drain.ts';

export const MAX_QUEUED_PROGRESS_BYTES = 64 * 1024;
/** Long lines reach the stream in slices of this size, so a reader working through one shows progress. */
export const WRITE_SLICE_BYTES = 64 * 1024;

export interface MessageWriterOptions {
  readonly maxQueuedProgressBytes?: number;
}

export interface WriterStats {
  readonly droppedProgress: number;
  readonly queuedProgressBytes: number;
  readonly queuedMessages: number;
  /** Bytes not yet delivered: this writer's queue plus the stream's own buffer (`writableLength`). */
  readonly queuedBytes: number;
  /** Bytes the stream reported written (write callbacks); only grows, so it measures progress. */
  readonly writtenBytes: number;
}

export interface MessageWriter {
  /** Queues a message that must be sent; resolves once handed to the stream, rejects if the stream failed. */
  write(message: unknown): Promise<void>;
  /** Queues an advisory message; returns false (and counts a drop) when it would exceed the bound. */
  writeDroppable(message: unknown): boolean;
  /** Resolves when everything queued so far has left the stream's buffer too, or the stream failed. */
  flush(): Promise<void>;
  /** Bytes not yet delivered (see WriterStats.queuedBytes). */
  queuedBytes(): number;
  /** Resolves once queuedBytes() <= bytes, or the stream failed. */
  whenQueuedAtMost(bytes: number): Promise<void>;
  stats(): WriterStats;
}

interface Entry {
  /** The serialized message, without its newline (added when written: a concatenation would be copied whole). */
  readonly json: string;
  readonly droppable: boolean;
  readonly bytes: number;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

interface RoomWaiter {
  readonly bytes: number;
  readonly resolve: () => void;
}

const noop = (): void => {};
const NEWLINE = 0x0a;

/** Everything one writer knows; the phases below (enqueue, pump, write, settle waiters) work on it. */
interface WriterState {
  readonly output: Writable;
  readonly maxQueuedProgressBytes: number;
  readonly queue: Entry[];
  /** Bytes queued here and not yet handed to the stream. */
  ownQueuedBytes: number;
  queuedProgressBytes: number;
  droppedProgress: number;
  writtenBytes: number;
  pumping: boolean;
  failure: Error | null;
  idleWaiters: (() => void)[];
  roomWaiters: RoomWaiter[];
}

export function createMessageWriter(output: Writable, options: MessageWriterOptions = {}): MessageWriter {
  const w: WriterState = {
    output,
    maxQueuedProgressBytes: options.maxQueuedProgressBytes ?? MAX_QUEUED_PROGRESS_BYTES,
    queue: [],
    ownQueuedBytes: 0,
    queuedProgressBytes: 0,
    droppedProgress: 0,
    writtenBytes: 0,
    pumping: false,
    failure: null,
    idleWaiters: [],
    roomWaiters: [],
  };
  output.on('error', (error: Error) => onFailure(w, error));
  output.on('close', () => onFailure(w, new Error('output closed')));
  return {
    write: (message) => write(w, message),
    writeDroppable: (message) => writeDroppable(w, message),
    flush: () => flush(w),
    queuedBytes: () => queuedBytes(w),
    whenQueuedAtMost: (bytes) => whenQueuedAtMost(w, bytes),
    stats: () => ({
      droppedProgress: w.droppedProgress,
      queuedProgressBytes: w.queuedProgressBytes,
      queuedMessages: w.queue.length,
      queuedBytes: queuedBytes(w),
      writtenBytes: w.writtenBytes,
    }),
  };
}

function write(w: WriterState, message: unknown): Promise<void> {
  const json = JSON.stringify(message);
  return new Promise<void>((resolve, reject) => {
    enqueue(w, { json, droppable: false, bytes: Buffer.byteLength(json) + 1, resolve, reject });
  });
}

function writeDroppable(w: WriterState, message: unknown): boolean {
  const json = JSON.stringify(message);
  const bytes = Buffer.byteLength(json) + 1;
  if (w.failure !== null || w.queuedProgressBytes + bytes > w.maxQueuedProgressBytes) {
    w.droppedProgress++;
    return false;
  }
  w.queuedProgressBytes += bytes;
  enqueue(w, { json, droppable: true, bytes, resolve: noop, reject: noop });
  return true;
}

async function flush(w: WriterState): Promise<void> {
  // Messages may be queued while we wait (late responses), so loop until both levels are empty.
  while (w.pumping || (!gone(w) && w.output.writableLength > 0)) {
    await idle(w);
    if (!gone(w)) await drained(w.output);
  }
}

function whenQueuedAtMost(w: WriterState, bytes: number): Promise<void> {
  if (gone(w) || queuedBytes(w) <= bytes) return Promise.resolve();
  return new Promise((resolve) => {
    w.roomWaiters.push({ bytes, resolve });
  });
}

const queuedBytes = (w: WriterState): number => w.ownQueuedBytes + w.output.writableLength;
const gone = (w: WriterState): boolean => w.failure !== null || w.output.destroyed || w.output.writableEnded;

function enqueue(w: WriterState, entry: Entry): void {
  w.queue.push(entry);
  w.ownQueuedBytes += entry.bytes;
  if (!w.pumping) void pump(w);
}

/** Hands queued entries to the stream one at a time, waiting for 'drain' whenever it asks. */
async function pump(w: WriterState): Promise<void> {
  w.pumping = true;
  for (let entry = w.queue.shift(); entry !== undefined; entry = w.queue.shift()) {
    if (entry.droppable) w.queuedProgressBytes -= entry.bytes;
    if (gone(w)) {
      w.ownQueuedBytes -= entry.bytes;
      w.failure ??= new Error('output closed');
      entry.reject(w.failure);
      continue;
    }
    // A short line is written at once (no await: the loop stays synchronous while the stream takes it).
    const ok = entry.bytes <= WRITE_SLICE_BYTES ? writeLine(w, entry) : await writeSlices(w, entry.json, entry.bytes);
    entry.resolve();
    if (!ok) await waitForDrain(w);
    settleRoom(w);
  }
  w.pumping = false;
  settleRoom(w);
  settleIdle(w);
}

function writeLine(w: WriterState, entry: Entry): boolean {
  w.ownQueuedBytes -= entry.bytes;
  return w.output.write(`${entry.json}\n`, afterWrite(w, entry.bytes));
}

/**
 * A line longer than one slice goes out slice by slice, each after the previous one drained, so
 * every slice completes on its own and a reader working through a huge line visibly makes progress.
 * Returns what the last write() returned.
 */
async function writeSlices(w: WriterState, json: string, bytes: number): Promise<boolean> {
  // Encoded once, straight from the serialized string, into one buffer that is not pooled.
  const buffer = Buffer.allocUnsafeSlow(bytes);
  buffer.write(json, 0);
  buffer[bytes - 1] = NEWLINE;
  for (let at = 0; ; at += WRITE_SLICE_BYTES) {
    const slice = buffer.subarray(at, at + WRITE_SLICE_BYTES);
    w.ownQueuedBytes -= slice.length;
    const ok = w.output.write(slice, afterWrite(w, slice.length));
    if (at + WRITE_SLICE_BYTES >= buffer.length) return ok;
    if (!ok) await waitForDrain(w);
    if (gone(w)) {
      w.ownQueuedBytes -= buffer.length - at - slice.length;
      return true;
    }
  }
}

const afterWrite =
  (w: WriterState, bytes: number) =>
  (error?: Error | null): void => {
    if (error == null) w.writtenBytes += bytes;
    settleRoom(w);
  };

function waitForDrain(w: WriterState): Promise<void> {
  const { output } = w;
  return new Promise((resolve) => {
    const done = (): void => {
      output.off('drain', done);
      output.off('close', onClose);
      output.off('error', done);
      resolve();
    };
    const onClose = (): void => {
      onFailure(w, new Error('output closed'));
      done();
    };
    output.on('drain', done);
    output.on('close', onClose);
    output.on('error', done);
  });
}

function onFailure(w: WriterState, error: Error): void {
  w.failure ??= error;
  settleRoom(w);
}

function settleRoom(w: WriterState): void {
  if (w.roomWaiters.length === 0) return;
  const queued = queuedBytes(w);
  const failed = gone(w);
  const ready = w.roomWaiters.filter((waiter) => failed || queued <= waiter.bytes);
  if (ready.length === 0) return;
  w.roomWaiters = w.roomWaiters.filter((waiter) => !ready.includes(waiter));
  for (const waiter of ready) waiter.resolve();
}

const idle = (w: WriterState): Promise<void> =>
  w.pumping
    ? new Promise((resolve) => {
        w.idleWaiters.push(resolve);
      })
    : Promise.resolve();

function settleIdle(w: WriterState): void {
  const waiters = w.idleWaiters;
  w.idleWaiters = [];
  for (const waiter of waiters) waiter();
}
