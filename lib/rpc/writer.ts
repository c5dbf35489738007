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

export function createMessageWriter(output: Writable, options: MessageWriterOptions = {}): MessageWriter {
  const maxQueuedProgressBytes = options.maxQueuedProgressBytes ?? MAX_QUEUED_PROGRESS_BYTES;
  const queue: Entry[] = [];
  let ownQueuedBytes = 0;
  let queuedProgressBytes = 0;
  let droppedProgress = 0;
  let writtenBytes = 0;
  let pumping = false;
  let failure: Error | null = null;
  let idleWaiters: (() => void)[] = [];
  let roomWaiters: RoomWaiter[] = [];

  const queuedBytes = (): number => ownQueuedBytes + output.writableLength;
  const gone = (): boolean => failure !== null || output.destroyed || output.writableEnded;

  const settleRoom = (): void => {
    if (roomWaiters.length === 0) return;
    const queued = queuedBytes();
    const failed = gone();
    const ready = roomWaiters.filter((waiter) => failed || queued <= waiter.bytes);
    if (ready.length === 0) return;
    roomWaiters = roomWaiters.filter((waiter) => !ready.includes(waiter));
    for (const waiter of ready) waiter.resolve();
  };

  const onFailure = (error: Error): void => {
    failure ??= error;
    settleRoom();
  };
  output.on('error', onFailure);
  output.on('close', () => onFailure(new Error('output closed')));

  const waitForDrain = (): Promise<void> => new Promise((resolve) => {
    const done = (): void => {
      output.off('drain', done);
      output.off('close', onClose);
      output.off('error', done);
      resolve();
    };
    const onClose = (): void => { onFailure(new Error('output closed')); done(); };
    output.on('drain', done);
    output.on('close', onClose);
    output.on('error', done);
  });

  const afterWrite = (bytes: number) => (error?: Error | null): void => {
    if (error == null) writtenBytes += bytes;
    settleRoom();
  };

  /**
   * A line longer than one slice goes out slice by slice, each after the previous one drained, so
   * every slice completes on its own and a reader working through a huge line visibly makes progress.
   * Returns what the last write() returned.
   */
  const writeSlices = async (json: string, bytes: number): Promise<boolean> => {
    // Encoded once, straight from the serialized string, into one buffer that is not pooled.
    const buffer = Buffer.allocUnsafeSlow(bytes);
    buffer.write(json, 0);
    buffer[bytes - 1] = NEWLINE;
    for (let at = 0; ; at += WRITE_SLICE_BYTES) {
      const slice = buffer.subarray(at, at + WRITE_SLICE_BYTES);
      ownQueuedBytes -= slice.length;
      const ok = output.write(slice, afterWrite(slice.length));
      if (at + WRITE_SLICE_BYTES >= buffer.length) return ok;
      if (!ok) await waitForDrain();
      if (gone()) {
        ownQueuedBytes -= buffer.length - at - slice.length;
        return true;
      }
    }
  };

  const settleIdle = (): void => {
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const waiter of waiters) waiter();
  };

  const pump = async (): Promise<void> => {
    pumping = true;
    for (let entry = queue.shift(); entry !== undefined; entry = queue.shift()) {
      if (entry.droppable) queuedProgressBytes -= entry.bytes;
      if (gone()) {
        ownQueuedBytes -= entry.bytes;
        failure ??= new Error('output closed');
        entry.reject(failure);
        continue;
      }
      let ok: boolean;
      if (entry.bytes <= WRITE_SLICE_BYTES) {
        ownQueuedBytes -= entry.bytes;
        ok = output.write(`${entry.json}\n`, afterWrite(entry.bytes));
      } else {
        ok = await writeSlices(entry.json, entry.bytes);
      }
      entry.resolve();
      if (!ok) await waitForDrain();
      settleRoom();
    }
    pumping = false;
    settleRoom();
    settleIdle();
  };

  const enqueue = (entry: Entry): void => {
    queue.push(entry);
    ownQueuedBytes += entry.bytes;
    if (!pumping) void pump();
  };

  const idle = (): Promise<void> => (pumping ? new Promise((resolve) => { idleWaiters.push(resolve); }) : Promise.resolve());

  return {
    write(message) {
      const json = JSON.stringify(message);
      return new Promise<void>((resolve, reject) => {
        enqueue({ json, droppable: false, bytes: Buffer.byteLength(json) + 1, resolve, reject });
      });
    },
    writeDroppable(message) {
      const json = JSON.stringify(message);
      const bytes = Buffer.byteLength(json) + 1;
      if (failure !== null || queuedProgressBytes + bytes > maxQueuedProgressBytes) {
        droppedProgress++;
        return false;
      }
      queuedProgressBytes += bytes;
      enqueue({ json, droppable: true, bytes, resolve: noop, reject: noop });
      return true;
    },
    async flush() {
      // Messages may be queued while we wait (late responses), so loop until both levels are empty.
      while (pumping || (!gone() && output.writableLength > 0)) {
        await idle();
        if (!gone()) await drained(output);
      }
    },
    queuedBytes,
    whenQueuedAtMost(bytes) {
      if (gone() || queuedBytes() <= bytes) return Promise.resolve();
      return new Promise((resolve) => { roomWaiters.push({ bytes, resolve }); });
    },
    stats: () => ({ droppedProgress, queuedProgressBytes, queuedMessages: queue.length, queuedBytes: queuedBytes(), writtenBytes }),
  };
}
