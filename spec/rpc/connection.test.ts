import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FLUSH_STALL_MS } from '../../lib/rpc/drain.ts';
import { createManualClock } from '../helpers/manual-clock.ts';
import { createRig, INIT } from './rig.ts';
import { waitFor } from './streams.ts';
import { at, num, rpcError, rpcResult } from '../helpers/typed-results.ts';

describe('connection framing', () => {
  it('splits frames on newline bytes before decoding, across chunk boundaries', async () => {
    const rig = createRig();
    const bytes = Buffer.from(`${JSON.stringify(INIT)}\n{"jsonrpc":"2.0","id":"é😀","method":"ping"}\r\n\n`);
    for (let i = 0; i < bytes.length; i += 3) rig.input.write(bytes.subarray(i, i + 3));
    assert.deepEqual(await rig.byId('é😀'), { jsonrpc: '2.0', id: 'é😀', result: {} });
    rig.input.end();
    await rig.connection.closed;
  });

  it('a frame exactly at the bound is served; one byte past is -32600 with id null, and serving continues', async () => {
    const max = 1024;
    const rig = createRig({ maxFrameBytes: max });
    const frame = (id: number, size: number): string => {
      const base = JSON.stringify({ jsonrpc: '2.0', id, method: 'ping', params: { pad: '' } });
      return JSON.stringify({ jsonrpc: '2.0', id, method: 'ping', params: { pad: 'x'.repeat(size - Buffer.byteLength(base)) } });
    };
    assert.equal(Buffer.byteLength(frame(1, max)), max);
    rig.input.write(`${frame(1, max)}\n`);
    assert.deepEqual(await rig.byId(1), { jsonrpc: '2.0', id: 1, result: {} });
    rig.input.write(`${frame(2, max + 1)}\n`);
    const ping3 = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' });
    rig.input.write(`${ping3}\n`);
    assert.deepEqual(await rig.byId(3), { jsonrpc: '2.0', id: 3, result: {} });
    const errors = rig.sink.messages().filter((m) => m['id'] === null);
    assert.deepEqual(errors, [
      {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: `Invalid Request: frame exceeds ${max} bytes`,
          data: { code: 'frame_too_large', max_frame_bytes: max },
        },
      },
    ]);
    assert.equal(
      rig.sink.messages().some((m) => m['id'] === 2),
      false,
      'the oversize request never ran',
    );
    rig.input.end();
    await rig.connection.closed;
  });

  it('invalid UTF-8 and bad JSON are -32700 with id null', async () => {
    const rig = createRig();
    rig.input.write(Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]));
    rig.input.write('{"jsonrpc":\n');
    rig.send({ jsonrpc: '2.0', id: 'after', method: 'ping' });
    await rig.byId('after');
    const parseErrors = rig.sink.messages().filter((m) => 'error' in m && rpcError(m).code === -32700);
    assert.equal(parseErrors.length, 2);
    for (const e of parseErrors) assert.equal(e['id'], null);
    rig.input.end();
    await rig.connection.closed;
  });

  it('answers an unterminated final frame at EOF', async () => {
    const rig = createRig();
    rig.input.end('{"jsonrpc":"2.0","id":5,"method":"ping"}');
    await rig.connection.closed;
    assert.deepEqual(rig.sink.messages(), [{ jsonrpc: '2.0', id: 5, result: {} }]);
  });
});

describe('connection lifecycle', () => {
  it('input EOF closes the adapter (cleanup runs) and resolves closed', async () => {
    const rig = createRig();
    rig.send(INIT);
    await rig.byId(0);
    rig.input.end();
    await rig.connection.closed;
    assert.equal(rig.cleanups(), 1);
  });

  it('EOF with a call in flight aborts it, writes its response, then closes', async () => {
    const rig = createRig();
    rig.send(INIT);
    rig.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: {} } });
    await rig.tools.started();
    rig.input.end();
    await rig.connection.closed;
    assert.equal(at(rpcResult(rig.sink.messages().find((m) => m['id'] === 1)), 'isError'), true);
    assert.equal(rig.tools.contexts[0]?.signal.reason, 'server_closing');
  });

  it('close() is idempotent and an output failure also closes', async () => {
    const rig = createRig();
    rig.sink.stream.destroy(new Error('EPIPE'));
    await rig.connection.closed;
    await rig.connection.close();
    assert.equal(rig.cleanups(), 1);
    rig.input.destroy();
  });

  it('a client that stops reading cannot hold shutdown forever: one whole stall window ends it', async () => {
    const clock = createManualClock();
    const rig = createRig({ gated: true, clock });
    rig.send(INIT);
    rig.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    await waitFor(() => rig.sink.messages().length === 1);
    rig.input.end();
    let closed = false;
    void rig.connection.closed.then(() => {
      closed = true;
    });
    await waitFor(() => clock.pending() === 1);
    clock.advance(FLUSH_STALL_MS - 1);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(closed, false, 'still flushing just before the bound');
    clock.advance(1);
    await rig.connection.closed;
    assert.equal(rig.cleanups(), 1);
    assert.equal(rig.sink.messages().length, 1, 'the queued ping response never reached the stalled reader');
    assert.ok(
      rig.logs.some((line) => line.startsWith('gave up on ')),
      rig.logs.join('\n'),
    );
  });

  it('a slow reader that keeps draining keeps shutdown waiting until every response arrived', async () => {
    const clock = createManualClock();
    const stallMs = 1000;
    const rig = createRig({ gated: true, clock, flushStallMs: stallMs });
    rig.send(INIT);
    for (let id = 1; id <= 6; id++) rig.send({ jsonrpc: '2.0', id, method: 'ping' });
    await waitFor(() => rig.connection.writer.stats().queuedMessages === 6);
    rig.input.end();
    let closed = false;
    void rig.connection.closed.then(() => {
      closed = true;
    });
    await waitFor(() => clock.pending() === 1);
    // Each window the reader takes one more line: slower than any fixed short deadline, but alive.
    for (let delivered = 1; delivered < 7; delivered++) {
      clock.advance(stallMs - 1);
      assert.equal(rig.sink.releaseOne(), true);
      await waitFor(() => rig.sink.messages().length === delivered + 1);
      clock.advance(1);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(closed, false, `still flushing after ${delivered} lines`);
    }
    rig.sink.release();
    await rig.connection.closed;
    assert.deepEqual(
      rig.sink.messages().map((m) => m['id']),
      [0, 1, 2, 3, 4, 5, 6],
    );
    assert.equal(
      rig.logs.some((line) => line.startsWith('gave up on ')),
      false,
    );
  });
});

describe('progress under backpressure', () => {
  it('drops progress beyond the queue bound, counts drops, and still delivers the response after it', async () => {
    const rig = createRig({ gated: true, maxQueuedProgressBytes: 400 });
    rig.send(INIT);
    await waitFor(() => rig.sink.messages().length === 1); // initialize response handed over; stream now backed up
    rig.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: {}, _meta: { progressToken: 'p' } } });
    await rig.tools.started();
    const progress = rig.tools.contexts[0]?.progress;
    for (let i = 0; i < 100; i++) progress?.(`step ${i}`);
    const stats = rig.connection.writer.stats();
    assert.ok(stats.droppedProgress > 90, `dropped ${stats.droppedProgress}`);
    assert.ok(stats.queuedProgressBytes <= 400);
    rig.tools.release();
    await waitFor(() => rig.connection.writer.stats().queuedMessages > 0 && rig.connection.writer.stats().queuedProgressBytes > 0);
    rig.sink.release();
    const response = await rig.byId(1);
    assert.equal(at(rpcResult(response), 'isError'), false);
    const out = rig.sink.messages();
    assert.equal(out.at(-1)?.['id'], 1, 'the response comes after every progress notification');
    const counters = out.filter((m) => m['method'] === 'notifications/progress').map((m) => num(at(m, 'params', 'progress'), 'progress'));
    assert.deepEqual(
      counters,
      [...counters].sort((a, b) => a - b),
      'kept notifications stay in order',
    );
    assert.equal(counters.length + stats.droppedProgress, 101);
    rig.input.end();
    await rig.connection.closed;
  });
});
