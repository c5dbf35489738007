/** A write side that survives its reader vanishing: after EPIPE it drops writes instead of throwing. */
import type { Writable } from 'node:stream';

export interface Sink {
  /** False means "wait for whenDrained before writing more". */
  write(chunk: Buffer | string): boolean;
  whenDrained(fn: () => void): void;
  /** True while a write is waiting for the reader (backpressure). */
  isBlocked(): boolean;
  /** Ends and closes the fd; resolves once flushed or once the reader is known gone. */
  end(): Promise<void>;
}

export function createSink(stream: Writable): Sink {
  let broken = false;
  let blocked = false;
  const waiters: (() => void)[] = [];
  const release = (): void => {
    blocked = false;
    for (const fn of waiters.splice(0)) fn();
  };
  stream.on('error', () => {
    broken = true;
    release();
  });
  stream.on('drain', release);
  return {
    write(chunk) {
      if (broken) return true;
      if (stream.write(chunk)) return true;
      blocked = true;
      return false;
    },
    whenDrained(fn) {
      if (!blocked || broken) fn();
      else waiters.push(fn);
    },
    isBlocked: () => blocked && !broken,
    end() {
      return new Promise((resolve) => {
        if (broken || stream.destroyed) {
          resolve();
          return;
        }
        const finish = (): void => {
          stream.destroy();
          resolve();
        };
        stream.once('error', finish);
        stream.end(finish);
      });
    },
  };
}
