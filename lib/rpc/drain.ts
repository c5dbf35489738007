/**
 * Waiting for output to reach the reader, bounded by progress instead of a fixed deadline: a slow
 * reader that is alive keeps the wait going for as long as bytes keep draining; a reader that stopped
 * reading ends it after one quiet window. (A fixed short deadline lost responses to slow readers.)
 */
import type { Writable } from 'node:stream';
import type { Clock } from '../util/clock.ts';

/** Shutdown gives up on undelivered output once a whole window this long passes without a byte draining. */
export const FLUSH_STALL_MS = 10_000;

/**
 * Resolves once everything written to `output` so far has left its buffer (for a pipe: libuv's queue
 * too, which `writableLength` counts). An empty write calls back only after every earlier write.
 */
export function drained(output: Writable): Promise<void> {
  if (output.destroyed || output.writableEnded || output.writableLength === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      output.off('close', done);
      resolve();
    };
    output.once('close', done);
    output.write('', done);
  });
}

/**
 * Resolves true once `done` settles, or false once a full `stallMs` window passes in which `mark()`
 * (anything that changes while output drains) did not change.
 */
export function settleUnlessStalled(done: Promise<unknown>, mark: () => number, clock: Clock, stallMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    let settled = false;
    let cancel: () => void = () => {};
    let last = mark();
    const check = (): void => {
      if (settled) return;
      const now = mark();
      if (now === last) {
        settled = true;
        resolve(false);
        return;
      }
      last = now;
      cancel = clock.setTimeout(check, stallMs);
    };
    cancel = clock.setTimeout(check, stallMs);
    const finish = (): void => {
      if (settled) return;
      settled = true;
      cancel();
      resolve(true);
    };
    done.then(finish, finish);
  });
}

/** Waits (bounded by progress) until `output` has handed every buffered byte on; false when it gave up. */
export function flushOutput(output: Writable, clock: Clock, stallMs = FLUSH_STALL_MS): Promise<boolean> {
  return settleUnlessStalled(drained(output), () => output.writableLength, clock, stallMs);
}
