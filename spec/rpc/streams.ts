// In-memory streams for protocol specs.
import { PassThrough, Writable } from 'node:stream';

/** A sink whose writes stay pending (write() returns false) while it is gated. */
export interface GatedSink {
  readonly stream: Writable;
  /** Complete lines written so far, parsed. */
  messages(): unknown[];
  gate(): void;
  release(): void;
}

export function createGatedSink(gated = false): GatedSink {
  let text = '';
  let closed = gated;
  let held: (() => void)[] = [];
  const stream = new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString('utf8');
      if (closed) held.push(() => callback());
      else callback();
    },
  });
  return {
    stream,
    messages: () => text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as unknown),
    gate() { closed = true; },
    release() {
      closed = false;
      const callbacks = held;
      held = [];
      for (const callback of callbacks) callback();
    },
  };
}

/** Resolves when `predicate` holds, polling each macrotask; rejects after `deadlineMs`. */
export async function waitFor(predicate: () => boolean, deadlineMs = 5000): Promise<void> {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > deadlineMs) throw new Error('waitFor: deadline passed');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export function createInput(): PassThrough {
  return new PassThrough();
}
