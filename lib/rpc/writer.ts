/**
 * The single writer of the outbound stream: one JSON message per line, in order, awaiting 'drain'
 * whenever the stream asks for it. Responses are never dropped. Progress notifications are advisory:
 * while the stream is backed up, at most MAX_QUEUED_PROGRESS_BYTES of them wait in the queue and the
 * rest are dropped and counted, so a slow reader cannot make the server buffer without bound.
 */
import type { Writable } from 'node:stream';

export const MAX_QUEUED_PROGRESS_BYTES = 64 * 1024;

export interface MessageWriterOptions {
  readonly maxQueuedProgressBytes?: number;
}

export interface WriterStats {
  readonly droppedProgress: number;
  readonly queuedProgressBytes: number;
  readonly queuedMessages: number;
}

export interface MessageWriter {
  /** Queues a message that must be sent; resolves once handed to the stream, rejects if the stream failed. */
  write(message: unknown): Promise<void>;
  /** Queues an advisory message; returns false (and counts a drop) when it would exceed the bound. */
  writeDroppable(message: unknown): boolean;
  /** Resolves when everything queued so far was handed to the stream and no drain is pending. */
  flush(): Promise<void>;
  stats(): WriterStats;
}

interface Entry {
  readonly line: string;
  readonly droppable: boolean;
  readonly bytes: number;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

const noop = (): void => {};

export function createMessageWriter(output: Writable, options: MessageWriterOptions = {}): MessageWriter {
  const maxQueuedProgressBytes = options.maxQueuedProgressBytes ?? MAX_QUEUED_PROGRESS_BYTES;
  const queue: Entry[] = [];
  let queuedProgressBytes = 0;
  let droppedProgress = 0;
  let pumping = false;
  let failure: Error | null = null;
  let idleWaiters: (() => void)[] = [];

  const onFailure = (error: Error): void => { failure ??= error; };
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

  const settleIdle = (): void => {
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const waiter of waiters) waiter();
  };

  const pump = async (): Promise<void> => {
    pumping = true;
    for (let entry = queue.shift(); entry !== undefined; entry = queue.shift()) {
      if (entry.droppable) queuedProgressBytes -= entry.bytes;
      if (failure !== null || output.destroyed || output.writableEnded) {
        failure ??= new Error('output closed');
        entry.reject(failure);
        continue;
      }
      const ok = output.write(entry.line);
      entry.resolve();
      if (!ok) await waitForDrain();
    }
    pumping = false;
    settleIdle();
  };

  const enqueue = (entry: Entry): void => {
    queue.push(entry);
    if (!pumping) void pump();
  };

  return {
    write(message) {
      const line = `${JSON.stringify(message)}\n`;
      return new Promise<void>((resolve, reject) => {
        enqueue({ line, droppable: false, bytes: Buffer.byteLength(line), resolve, reject });
      });
    },
    writeDroppable(message) {
      const line = `${JSON.stringify(message)}\n`;
      const bytes = Buffer.byteLength(line);
      if (failure !== null || queuedProgressBytes + bytes > maxQueuedProgressBytes) {
        droppedProgress++;
        return false;
      }
      queuedProgressBytes += bytes;
      enqueue({ line, droppable: true, bytes, resolve: noop, reject: noop });
      return true;
    },
    flush() {
      if (!pumping) return Promise.resolve();
      return new Promise((resolve) => { idleWaiters.push(resolve); });
    },
    stats: () => ({ droppedProgress, queuedProgressBytes, queuedMessages: queue.length }),
  };
}
