import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_DISPATCH_PER_TURN } from '../../lib/rpc/connection.ts';
import { createRig, INIT, type Rig } from './rig.ts';
import { settle, waitFor } from './streams.ts';
import { num } from '../helpers/typed-results.ts';

const lineBytes = (message: unknown): number => Buffer.byteLength(`${JSON.stringify(message)}\n`);
const ping = (id: number): unknown => ({ jsonrpc: '2.0', id, method: 'ping' });
const pong = (id: number): unknown => ({ jsonrpc: '2.0', id, result: {} });
const slowCall = (id: number): unknown => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'slow', arguments: {} } });

async function initialized(rig: Rig): Promise<void> {
  rig.send(INIT);
  await rig.byId(0);
}

/** Every response id exactly once, sorted. */
const answeredIds = (rig: Rig): number[] =>
  rig.sink
    .messages()
    .map((m) => num(m['id'], 'id'))
    .filter((id) => id !== 0)
    .sort((a, b) => a - b);

describe('connection backpressure', () => {
  it('a reader that stops accepting pauses input: handled requests and queued bytes stay bounded, and every request is answered exactly once afterwards', async () => {
    const maxQueuedResponseBytes = 8 * 1024;
    const maxInFlightRequests = 16;
    const rig = createRig({ maxQueuedResponseBytes, maxInFlightRequests });
    await initialized(rig);
    rig.sink.gate();
    const total = 2000;
    const request = (id: number): string => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' })}\n`;
    // Pipelined in chunks of 100 requests, as a client writing ahead would.
    for (let first = 1; first <= total; first += 100) {
      rig.input.write(Array.from({ length: 100 }, (_, i) => request(first + i)).join(''));
    }
    await waitFor(() => rig.input.isPaused() && rig.connection.writer.queuedBytes() > maxQueuedResponseBytes);
    await settle();
    const handled = rig.handled();
    await settle();
    assert.equal(rig.handled(), handled, 'nothing more is handled while the reader is stalled');
    assert.ok(handled - 1 < total / 4, `handled ${handled - 1} of ${total}`);
    assert.ok(rig.input.readableLength > 0, 'unread requests wait in the input stream');
    const queued = rig.connection.writer.queuedBytes();
    // Worst case: the bound plus the responses of what was in flight when the bound was crossed.
    const toolsListBytes = lineBytes(rig.sink.messages().at(-1)) + 8; // a tools/list response, longest id
    assert.ok(queued <= maxQueuedResponseBytes + maxInFlightRequests * toolsListBytes, `queued ${queued} bytes`);
    assert.ok(
      rig.logs.some((line) => line.startsWith('output backed up')),
      rig.logs.join('\n'),
    );

    rig.sink.release();
    await waitFor(() => answeredIds(rig).length >= total, 20_000);
    assert.deepEqual(
      answeredIds(rig),
      Array.from({ length: total }, (_, i) => i + 1),
    );
    rig.input.end();
    await rig.connection.closed;
  });

  it('in-flight cap: exactly at the cap all start; one past waits until one finishes', async () => {
    const rig = createRig({ maxInFlightRequests: 3 });
    await initialized(rig);
    for (let id = 1; id <= 3; id++) rig.send(slowCall(id));
    await waitFor(() => rig.tools.contexts.length === 3);
    rig.send(slowCall(4));
    await settle();
    assert.equal(rig.tools.contexts.length, 3, 'the fourth waits');
    assert.equal(rig.input.isPaused(), true);
    rig.tools.release();
    await waitFor(() => rig.tools.contexts.length === 4);
    rig.tools.release();
    await rig.byId(4);
    assert.deepEqual(answeredIds(rig), [1, 2, 3, 4]);
    assert.equal(rig.input.isPaused(), false, 'reading resumed');
    rig.input.end();
    await rig.connection.closed;
  });

  it("queued bytes exactly at the bound keep reading; one past pauses; the stream's own buffer counts", async () => {
    const one = lineBytes(pong(1));
    // The sink accepts writes (like a pipe into libuv) but completes none while gated.
    const rig = createRig({ maxQueuedResponseBytes: 2 * one, sinkHighWaterMark: 1024 * 1024 });
    await initialized(rig);
    rig.sink.gate();
    rig.send(ping(1));
    await waitFor(() => rig.connection.writer.queuedBytes() === one);
    rig.send(ping(2));
    await waitFor(() => rig.connection.writer.queuedBytes() === 2 * one);
    assert.equal(rig.connection.writer.stats().queuedMessages, 0, 'all of it sits in the stream');
    rig.send(ping(3)); // at the bound: still read and answered
    await waitFor(() => rig.connection.writer.queuedBytes() === 3 * one);
    rig.send(ping(4)); // past the bound: waits
    await settle();
    assert.equal(rig.handled(), 4, 'ping 4 is not handled yet');
    assert.equal(rig.connection.writer.queuedBytes(), 3 * one);
    rig.sink.releaseOne(); // 2 lines queued: back at the bound
    await waitFor(() => rig.handled() === 5);
    rig.sink.release();
    await waitFor(() => answeredIds(rig).length === 4);
    assert.deepEqual(rig.sink.messages().slice(1), [pong(1), pong(2), pong(3), pong(4)]);
    rig.input.end();
    await rig.connection.closed;
  });

  it('dispatches at most MAX_DISPATCH_PER_TURN frames per turn, so the byte bound is re-checked in between', async () => {
    // Any queued byte is over this bound; responses are only queued after the turn that dispatched them.
    const rig = createRig({ maxQueuedResponseBytes: 0, sinkHighWaterMark: 1024 * 1024 });
    await initialized(rig);
    rig.sink.gate();
    rig.input.write(Array.from({ length: MAX_DISPATCH_PER_TURN + 1 }, (_, i) => `${JSON.stringify(ping(i + 1))}\n`).join(''));
    await waitFor(() => rig.handled() > 1);
    await settle();
    assert.equal(rig.handled(), 1 + MAX_DISPATCH_PER_TURN, "exactly one turn's worth; the next waits for the reader");
    rig.sink.release();
    await waitFor(() => answeredIds(rig).length === MAX_DISPATCH_PER_TURN + 1);
    rig.input.end();
    await rig.connection.closed;
  });

  it('at EOF the frames still queued are handled before shutdown', async () => {
    const rig = createRig({ maxInFlightRequests: 1 });
    await initialized(rig);
    rig.input.end([1, 2, 3].map((id) => `${JSON.stringify(ping(id))}\n`).join(''));
    await rig.connection.closed;
    assert.deepEqual(answeredIds(rig), [1, 2, 3]);
  });
});
