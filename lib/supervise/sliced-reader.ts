/**
 * Reads a pipe in slices of at most `sliceBytes`, one per event-loop turn. libuv otherwise delivers up to 32
 * reads (2 MiB) of a busy pipe in a row; with four native floods the adapter's stdin waited 100 ms and
 * more behind them. The stream stays paused while a chunk is being handed on, so its 'end' is only
 * emitted once everything before it was delivered.
 */
import type { Readable } from 'node:stream';

export interface SlicedReader {
  /** Hands on whatever is still queued, at once (used when the pipe is torn down). */
  flush(): void;
  /** True once the stream ended (or closed) and every byte was handed on. */
  ended(): boolean;
}

export function readInSlices(stream: Readable, sliceBytes: number, deliver: (slice: Buffer) => void, onEnd: () => void): SlicedReader {
  let pending: Buffer | null = null;
  let ended = false;
  const step = (): void => {
    const chunk = pending;
    if (chunk === null) return;
    pending = chunk.length > sliceBytes ? chunk.subarray(sliceBytes) : null;
    deliver(chunk.length > sliceBytes ? chunk.subarray(0, sliceBytes) : chunk);
    setImmediate(() => {
      if (pending !== null) step();
      else if (!stream.destroyed) stream.resume();
    });
  };
  const flush = (): void => {
    const rest = pending;
    pending = null;
    if (rest !== null) deliver(rest);
  };
  const markEnded = (): void => {
    if (ended) return;
    flush();
    ended = true;
    onEnd();
  };
  stream.on('data', (chunk: Buffer) => {
    stream.pause();
    pending = chunk;
    step();
  });
  stream.once('end', markEnded);
  stream.once('close', markEnded);
  return { flush, ended: () => ended };
}
