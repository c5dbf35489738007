import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { createMessageWriter } from '../../lib/rpc/writer.ts';
import { createGatedSink, waitFor } from './streams.ts';

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
    assert.deepEqual(writer.stats(), { droppedProgress: 2, queuedProgressBytes: bound, queuedMessages: 52 });
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
    const flushing = writer.flush().then(() => { flushed = true; });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(flushed, false);
    sink.release();
    await flushing;
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
