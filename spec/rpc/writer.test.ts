import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { createMessageWriter, WRITE_SLICE_BYTES } from '../../lib/rpc/writer.ts';
import { createGatedSink, settle, waitFor } from './streams.ts';

const progress = (n: number): unknown => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: n } });
const lineBytes = (message: unknown): number => Buffer.byteLength(`${JSON.stringify(message)}\n`);

describe('message writer', () => {
  it('writes one JSON message per line, in order', async () => {
    const sink = createGatedSink();
    const writer = createMessageWriter(sink.stream);
    await writer.write({ a: 'line\nbreak' });
    writer.writeDroppable({ b: 2 });
    await writer.write({ c: 3 });
    await writer.flush();
    assert.deepEqual(sink.messages(), [{ a: 'line\nbreak' }, { b: 2 }, { c: 3 }]);
  });

  it('waits for drain, never drops responses, and drops progress beyond the byte bound', async () => {
    const sink = createGatedSink(true);
    const bound = lineBytes(progress(1)) * 2; // room for exactly two queued progress lines
    const writer = createMessageWriter(sink.stream, { maxQueuedProgressBytes: bound });
    const first = writer.write({ id: 1 });
    await first; // handed to the stream, which now reports backpressure
    assert.equal(writer.writeDroppable(progress(1)), true);
    assert.equal(writer.writeDroppable(progress(2)), true, 'exactly at the bound is kept');
    assert.equal(writer.writeDroppable(progress(3)), false, 'one past the bound is dropped');
    const responses = Array.from({ length: 50 }, (_, i) => writer.write({ id: i + 2 }));
    assert.equal(writer.writeDroppable(progress(4)), false);
    const queuedResponseBytes = Array.from({ length: 51 }, (_, i) => lineBytes({ id: i + 1 })).reduce((a, b) => a + b, 0);
    assert.deepEqual(writer.stats(), {
      droppedProgress: 2,
      queuedProgressBytes: bound,
      queuedMessages: 52,
      queuedBytes: queuedResponseBytes + bound,
      writtenBytes: 0,
    });
    assert.deepEqual(sink.messages(), [{ id: 1 }], 'nothing else is written while the stream is backed up');

    sink.release();
    await Promise.all(responses);
    await writer.flush();
    const out = sink.messages();
    assert.deepEqual(out.slice(0, 3), [{ id: 1 }, progress(1), progress(2)]);
    assert.equal(out.length, 53);
    assert.deepEqual(out.at(-1), { id: 51 });
    assert.equal(writer.stats().queuedProgressBytes, 0);
  });

  it('flush waits for a pending drain', async () => {
    const sink = createGatedSink(true);
    const writer = createMessageWriter(sink.stream);
    void writer.write({ id: 1 });
    let flushed = false;
    const flushing = writer.flush().then(() => {
      flushed = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(flushed, false);
    sink.release();
    await flushing;
  });

  it("flush waits for the stream's own buffer too, not just the writer queue", async () => {
    // Like a pipe: write() accepts (returns true) but the bytes still sit in libuv's queue.
    const sink = createGatedSink(true, 1024 * 1024);
    const writer = createMessageWriter(sink.stream);
    await writer.write({ id: 1 });
    await writer.write({ id: 2 });
    assert.equal(writer.stats().queuedMessages, 0);
    assert.equal(writer.queuedBytes(), lineBytes({ id: 1 }) + lineBytes({ id: 2 }), 'writableLength counts');
    let flushed = false;
    const flushing = writer.flush().then(() => {
      flushed = true;
    });
    await settle();
    assert.equal(flushed, false, 'bytes still pending in the stream');
    sink.releaseOne();
    await settle();
    assert.equal(flushed, false, 'one line still pending');
    sink.release();
    await flushing;
    assert.equal(writer.queuedBytes(), 0);
    assert.equal(writer.stats().writtenBytes, lineBytes({ id: 1 }) + lineBytes({ id: 2 }));
  });

  it('whenQueuedAtMost resolves once queued bytes (both levels) fall to the bound', async () => {
    const sink = createGatedSink(true);
    const writer = createMessageWriter(sink.stream);
    const one = lineBytes({ id: 1 });
    for (let i = 1; i <= 4; i++) void writer.write({ id: i });
    assert.equal(writer.queuedBytes(), 4 * one);
    await writer.whenQueuedAtMost(4 * one); // exactly at the bound: already there
    let atTwo = false;
    void writer.whenQueuedAtMost(2 * one).then(() => {
      atTwo = true;
    });
    sink.releaseOne();
    await settle();
    assert.equal(atTwo, false, 'three lines still queued');
    assert.equal(writer.queuedBytes(), 3 * one);
    sink.releaseOne();
    await waitFor(() => atTwo);
    assert.equal(writer.queuedBytes(), 2 * one);
    sink.release();
    await writer.flush();
  });

  it('hands a long line to the stream in slices, so progress shows while it drains', async () => {
    const sink = createGatedSink(false, 1024 * 1024);
    const writer = createMessageWriter(sink.stream);
    const atBound = { pad: 'x'.repeat(WRITE_SLICE_BYTES - lineBytes({ pad: '' })) };
    assert.equal(lineBytes(atBound), WRITE_SLICE_BYTES);
    await writer.write(atBound);
    const pastBound = { pad: 'x'.repeat(WRITE_SLICE_BYTES - lineBytes({ pad: '' }) + 1) };
    await writer.write(pastBound);
    await writer.flush();
    assert.deepEqual(sink.chunkSizes, [WRITE_SLICE_BYTES, WRITE_SLICE_BYTES, 1]);
    assert.deepEqual(sink.messages(), [atBound, pastBound]);
    await settle(); // write callbacks of synchronous writes run on the next tick
    assert.equal(writer.stats().writtenBytes, 2 * WRITE_SLICE_BYTES + 1);

    const gated = createGatedSink(true);
    const slow = createMessageWriter(gated.stream);
    void slow.write(pastBound);
    await settle();
    assert.deepEqual(gated.chunkSizes, [WRITE_SLICE_BYTES], 'the next slice waits for the first to drain');
    assert.equal(slow.queuedBytes(), WRITE_SLICE_BYTES + 1);
    gated.releaseOne();
    await waitFor(() => gated.chunkSizes.length === 2);
    assert.equal(slow.stats().writtenBytes, WRITE_SLICE_BYTES, 'the first slice counts as progress on its own');
    gated.release();
    await slow.flush();
    assert.deepEqual(gated.messages(), [pastBound]);
  });

  it('a long line of multibyte text arrives byte for byte, slices cutting through its characters', async () => {
    const sink = createGatedSink(false, 1024 * 1024);
    const writer = createMessageWriter(sink.stream);
    // 1-, 2-, 3- and 4-byte characters, so slice boundaries fall inside characters at every offset.
    const message = { text: 'a\u00e9\u2713\u{1d11e}'.repeat(30_000) };
    await writer.write(message);
    await writer.flush();
    const expected = Buffer.from(`${JSON.stringify(message)}\n`);
    assert.ok(expected.length > 2 * WRITE_SLICE_BYTES);
    assert.equal(
      sink.chunkSizes.reduce((a, b) => a + b, 0),
      expected.length,
    );
    assert.ok(sink.chunkSizes.every((size) => size <= WRITE_SLICE_BYTES));
    assert.deepEqual(sink.messages(), [message]);
    await settle();
    assert.equal(writer.stats().writtenBytes, expected.length);
  });

  it('rejects writes after the stream is destroyed instead of hanging', async () => {
    const out = new PassThrough();
    const writer = createMessageWriter(out);
    out.destroy();
    await waitFor(() => out.destroyed);
    await assert.rejects(writer.write({ id: 1 }));
    assert.equal(writer.writeDroppable(progress(1)), false);
    assert.equal(writer.stats().droppedProgress, 1);
    await writer.flush();
  });

  it('a stream error while waiting for drain fails later writes', async () => {
    const sink = createGatedSink(true);
    const writer = createMessageWriter(sink.stream);
    await writer.write({ id: 1 });
    const second = writer.write({ id: 2 });
    sink.stream.destroy(new Error('EPIPE'));
    await assert.rejects(second);
    assert.equal(writer.writeDroppable(progress(1)), false);
  });
});
