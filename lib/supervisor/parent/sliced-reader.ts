/**
 * Reads a pipe in slices of at most `sliceBytes`, one per event-loop turn. libuv otherwise delivers up to 32
 * reads (2 MiB) of a busy pipe in a row; with four native floods the adapter's stdin waited 100 ms and
 * more behind them. The stream is paused while slices are handed on, but someone else may resume it
 * (Node resumes a child's stdio when the child exits): chunks that arrive meanwhile are queued behind the
 * ones not yet delivered, never in their place. 'end' is handled only once everything before it went out.
 */
import type { Readable } from 'node:stream';

export interface SlicedReader {
  /** Hands on whatever is still queued, at once (used when the pipe is torn down). */
  flush(): void;
  /** True once the stream ended (or closed) and every byte was handed on. */
  ended(): boolean;
}

export function readInSlices(stream: Readable, sliceBytes: number, deliver: (slice: Buffer) => void, onEnd: () => void): SlicedReader {
  /** Chunks received and not yet fully delivered, in arrival order; the first may be partly delivered. */
  const queue: Buffer[] = [];
  let stepping = false;
  let sawEnd = false;
  let ended = false;
  const finishIfDone = (): void => {
    if (sawEnd && queue.length === 0 && !ended) {
      ended = true;
      onEnd();
    }
  };
  const step = (): void => {
    const chunk = queue[0];
    if (chunk === undefined) {
      stepping = false;
      if (!stream.destroyed && !sawEnd) stream.resume();
      finishIfDone();
      return;
    }
    if (chunk.length > sliceBytes) {
      queue[0] = chunk.subarray(sliceBytes);
      deliver(chunk.subarray(0, sliceBytes));
    } else {
      queue.shift();
      deliver(chunk);
    }
    setImmediate(step);
  };
  const flush = (): void => {
    const rest = queue.splice(0);
    if (rest.length > 0) deliver(rest.length === 1 ? rest[0]! : Buffer.concat(rest));
    finishIfDone();
  };
  stream.on('data', (chunk: Buffer) => {
    stream.pause();
    queue.push(chunk);
    if (!stepping) {
      stepping = true;
      step();
    }
  });
  const markEnded = (): void => {
    sawEnd = true;
    if (!stepping) finishIfDone();
  };
  stream.once('end', markEnded);
  stream.once('close', markEnded);
  return { flush, ended: () => ended };
}
