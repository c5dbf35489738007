import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { readInSlices } from '../../../lib/supervisor/parent/sliced-reader.ts';

const LINES = 40_000;

/** Writes numbered lines in uneven chunks; `meddle` runs between writes (it may resume the stream). */
async function feed(stream: PassThrough, meddle: (i: number) => void): Promise<void> {
  let pending = '';
  for (let i = 0; i < LINES; i++) {
    pending += `${i} ${'x'.repeat(i % 97)}\n`;
    if (pending.length > 3000 + (i % 7) * 1500) {
      stream.write(pending);
      pending = '';
      meddle(i);
      if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
  }
  stream.end(pending);
}

function collect(slice: number, meddleWith: (stream: PassThrough) => (i: number) => void): Promise<{ text: string; maxSlice: number }> {
  const stream = new PassThrough({ highWaterMark: 1024 });
  const parts: Buffer[] = [];
  let maxSlice = 0;
  return new Promise((resolve) => {
    readInSlices(
      stream,
      slice,
      (s) => {
        parts.push(Buffer.from(s));
        maxSlice = Math.max(maxSlice, s.length);
      },
      () => {
        resolve({ text: Buffer.concat(parts).toString('utf8'), maxSlice });
      },
    );
    void feed(stream, meddleWith(stream));
  });
}

function assertEveryLineOnceInOrder(text: string): void {
  const lines = text.split('\n');
  assert.equal(lines.pop(), '');
  assert.equal(lines.length, LINES);
  for (let i = 0; i < LINES; i++) assert.equal(lines[i], `${i} ${'x'.repeat(i % 97)}`, `line ${i}`);
}

test('every byte arrives once and in order, in slices no larger than the bound', async () => {
  const { text, maxSlice } = await collect(4096, () => () => {});
  assertEveryLineOnceInOrder(text);
  assert.ok(maxSlice <= 4096, `slice of ${maxSlice} bytes`);
});

test('a stream resumed from outside while slices are pending loses nothing and keeps the order', async () => {
  // Node resumes a child's stdio when the child exits; here someone resumes it after every write.
  const { text, maxSlice } = await collect(512, (stream) => () => {
    stream.resume();
  });
  assertEveryLineOnceInOrder(text);
  assert.ok(maxSlice <= 512);
});

test('a flush while slices are pending hands on the rest at once, then end follows', async () => {
  const stream = new PassThrough();
  const parts: Buffer[] = [];
  let ended = false;
  const reader = readInSlices(
    stream,
    10,
    (s) => parts.push(Buffer.from(s)),
    () => {
      ended = true;
    },
  );
  stream.write('0123456789abcdefghij');
  stream.resume();
  stream.write('KLMNOPQRST');
  reader.flush();
  assert.equal(Buffer.concat(parts).toString(), '0123456789abcdefghijKLMNOPQRST');
  stream.end();
  await new Promise((resolve) => stream.once('close', resolve));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(ended, true);
  assert.equal(reader.ended(), true);
});
