import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAdapter } from '../../lib/adapter.ts';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../lib/rpc/negotiate.ts';
import { createManualClock } from '../helpers/manual-clock.ts';
import { createHarness, errorOf, initializedHarness, resultOf } from '../rpc/harness.ts';
import { at } from '../helpers/typed-results.ts';
import { createFakeResourceProvider } from '../../fixtures/providers/fake-providers.ts';

describe('lifecycle', () => {
  it('answers ping before initialize and refuses other requests', async () => {
    const h = createHarness();
    assert.deepEqual(await h.request(1, 'ping'), { jsonrpc: '2.0', id: 1, result: {} });
    assert.deepEqual(await h.request(2, 'tools/list'), {
      jsonrpc: '2.0',
      id: 2,
      error: { code: -32000, message: 'Server not initialized' },
    });
    assert.equal(errorOf(await h.request(3, 'server/discover')).code, -32601, 'method existence outranks initialization');
    assert.equal(await h.adapter.handle({ jsonrpc: '2.0', method: 'notifications/whatever' }), undefined);
  });

  for (const date of SUPPORTED_PROTOCOL_VERSIONS) {
    it(`initialize echoes ${date} and unlocks the methods`, async () => {
      const h = createHarness();
      const result = resultOf(await h.request(1, 'initialize', { protocolVersion: date, capabilities: {} }));
      assert.equal(result['protocolVersion'], date);
      assert.deepEqual(result['capabilities'], { tools: { listChanged: false }, resources: { subscribe: false, listChanged: false } });
      assert.deepEqual(result['serverInfo'], { name: 'claude-run-mcp', version: '0.1.0' });
      assert.equal(typeof result['instructions'], 'string');
      assert.equal(await h.adapter.handle({ jsonrpc: '2.0', method: 'notifications/initialized' }), undefined);
      assert.ok(Array.isArray(resultOf(await h.request(2, 'tools/list'))['tools']));
      assert.equal(h.adapter.state().protocolVersion, date);
    });
  }

  it('an unsupported date negotiates to the newest, never an echo', async () => {
    for (const requested of ['2026-07-28', '1999-01-01', 5, undefined]) {
      const h = createHarness();
      const params = requested === undefined ? {} : { protocolVersion: requested };
      assert.equal(resultOf(await h.request(1, 'initialize', params))['protocolVersion'], '2025-11-25');
    }
  });

  it('refuses a second initialize', async () => {
    const h = await initializedHarness('2025-06-18');
    assert.equal(errorOf(await h.request(9, 'initialize', { protocolVersion: '2024-11-05' })).code, -32600);
    assert.equal(h.adapter.state().protocolVersion, '2025-06-18');
  });
});

describe('envelope errors', () => {
  it('maps each problem to its code', async () => {
    const h = await initializedHarness('2025-11-25');
    assert.deepEqual(await h.adapter.handle({ jsonrpc: '2.0', id: 1 }), {
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32600, message: 'Invalid Request' },
    });
    assert.deepEqual(await h.adapter.handle('text'), { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } });
    assert.equal(errorOf(await h.request(2, 'nope/nope')).code, -32601);
    assert.equal(errorOf(await h.request(3, 'tools/list', [1])).code, -32602);
    assert.equal(errorOf(await h.request(4, 'tools/list', [1])).message, 'Invalid params: params must be an object');
  });

  it('never answers a notification-shaped message, however invalid; it is logged instead', async () => {
    const h = await initializedHarness('2025-11-25');
    for (const message of [{ jsonrpc: '2.0', method: 'x', params: 5 }, { jsonrpc: '1.0', method: 'x' }, { method: 5 }]) {
      assert.equal(await h.adapter.handle(message), undefined, JSON.stringify(message));
    }
    assert.equal(h.logs.filter((line) => line.startsWith('ignored an invalid notification')).length, 3);
    const batching = await initializedHarness('2025-03-26');
    const batch = await batching.adapter.handle([
      { jsonrpc: '2.0', method: 'x', params: 5 },
      { jsonrpc: '2.0', id: 1, method: 'ping' },
    ]);
    assert.deepEqual(batch, [{ jsonrpc: '2.0', id: 1, result: {} }], 'inside a batch it gets no entry either');
  });

  it('ignores responses: this server never sends requests', async () => {
    const h = await initializedHarness('2025-11-25');
    assert.equal(await h.adapter.handle({ jsonrpc: '2.0', id: 77, result: {} }), undefined);
    assert.equal(await h.adapter.handle({ jsonrpc: '2.0', id: 78, error: { code: 1, message: 'x' } }), undefined);
  });

  it('a handler bug is -32603 without internals, and the detail goes to the log', async () => {
    const h = await initializedHarness('2025-11-25');
    const response = await h.request(5, 'tools/call', { name: 'throws', arguments: {} });
    assert.deepEqual(response, { jsonrpc: '2.0', id: 5, error: { code: -32603, message: 'Internal error' } });
    assert.ok(h.logs.some((line) => line.includes('secret internal detail')));
  });

  it('answers a duplicate in-flight id with -32600 and lets the original finish', async () => {
    const h = await initializedHarness('2025-11-25');
    const first = h.request(7, 'tools/call', { name: 'slow', arguments: {} });
    await h.tools.started();
    assert.equal(errorOf(await h.request(7, 'ping')).code, -32600);
    assert.deepEqual(resultOf(await h.request('7', 'ping')), {}, 'string "7" is a different id');
    h.tools.release();
    assert.equal(resultOf(await first)['isError'], false);
    assert.deepEqual(resultOf(await h.request(7, 'ping')), {}, 'the id is free again once answered');
  });
});

describe('batching', () => {
  it('2025-03-26: array in, array out; notifications get no entry', async () => {
    const h = await initializedHarness('2025-03-26');
    const out = await h.adapter.handle([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', id: 3, method: 'nope' },
      42,
      { jsonrpc: '2.0', id: 4, result: {} },
    ]);
    assert.ok(Array.isArray(out));
    assert.equal(out.length, 4);
    assert.deepEqual(out[0], { jsonrpc: '2.0', id: 1, result: {} });
    assert.equal(at(out, 1, 'id'), 2);
    assert.equal(errorOf(out[2]).code, -32601);
    assert.deepEqual(out[3], { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } });
  });

  it('2025-03-26: only notifications means no response at all', async () => {
    const h = await initializedHarness('2025-03-26');
    assert.equal(await h.adapter.handle([{ jsonrpc: '2.0', method: 'notifications/initialized' }]), undefined);
  });

  it('2025-03-26: an empty array is -32600', async () => {
    const h = await initializedHarness('2025-03-26');
    assert.deepEqual(await h.adapter.handle([]), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Invalid Request: empty batch' },
    });
  });

  for (const date of SUPPORTED_PROTOCOL_VERSIONS.filter((d) => d !== '2025-03-26')) {
    it(`${date}: any array is -32600 and nothing inside runs`, async () => {
      const h = await initializedHarness(date);
      const out = await h.adapter.handle([
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } },
      ]);
      assert.equal(errorOf(out).code, -32600);
      assert.equal(at(out, 'id'), null);
      assert.equal(h.tools.contexts.length, 0);
    });
  }

  it('before initialize an array is -32600', async () => {
    const h = createHarness();
    assert.equal(errorOf(await h.adapter.handle([{ jsonrpc: '2.0', id: 1, method: 'ping' }])).code, -32600);
  });
});

describe('cancellation and progress', () => {
  it('notifications/cancelled aborts the request, suppresses its response and its later progress', async () => {
    const h = await initializedHarness('2025-11-25');
    const pending = h.request(11, 'tools/call', { name: 'slow', arguments: {}, _meta: { progressToken: 'tok' } });
    await h.tools.started();
    assert.equal(h.notifications.length, 1);
    const progress = h.tools.contexts[0]?.progress;
    assert.equal(
      await h.adapter.handle({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 11, reason: 'user' } }),
      undefined,
    );
    progress?.('after cancel');
    assert.equal(await pending, undefined);
    assert.equal(h.tools.contexts[0]?.signal.reason, 'cancelled');
    assert.equal(h.notifications.length, 1);
    assert.deepEqual(h.notifications[0], {
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: 'tok', progress: 1, message: 'started' },
    });
  });

  it('cancelling an unknown or finished id is harmless', async () => {
    const h = await initializedHarness('2025-11-25');
    assert.equal(await h.adapter.handle({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 999 } }), undefined);
    assert.equal(await h.adapter.handle({ jsonrpc: '2.0', method: 'notifications/cancelled', params: {} }), undefined);
    assert.equal(await h.adapter.handle({ jsonrpc: '2.0', method: 'notifications/cancelled', params: [] }), undefined);
    assert.deepEqual(resultOf(await h.request(1, 'ping')), {});
  });

  it('in a 2025-03-26 batch a cancelled request gets no entry', async () => {
    const h = await initializedHarness('2025-03-26');
    const batch = h.adapter.handle([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow' } },
    ]);
    await h.tools.started();
    await h.adapter.handle({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } });
    assert.deepEqual(await batch, [{ jsonrpc: '2.0', id: 1, result: {} }]);
  });

  it('no progress is sent after the response', async () => {
    const h = await initializedHarness('2025-11-25');
    await h.request(1, 'tools/call', { name: 'progress-after', arguments: {}, _meta: { progressToken: 5 } });
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      h.notifications.map((n) => at(n, 'params', 'message')),
      ['one'],
    );
  });
});

describe('close', () => {
  it('aborts in-flight work, answers it, refuses new requests and runs onClose once', async () => {
    let cleanups = 0;
    const h = await initializedHarness('2025-11-25', {
      onClose: async () => {
        cleanups++;
      },
    });
    const pending = h.request(1, 'tools/call', { name: 'slow', arguments: {} });
    await h.tools.started();
    await Promise.all([h.adapter.close(), h.adapter.close()]);
    assert.equal(h.tools.contexts[0]?.signal.reason, 'server_closing');
    const result = resultOf(await pending);
    assert.equal(result['isError'], true);
    assert.equal(cleanups, 1);
    assert.deepEqual(errorOf(await h.request(2, 'ping')), { code: -32001, message: 'Server is closing' });
    assert.equal(h.adapter.state().closing, true);
  });

  it('stops waiting for in-flight work that ignores its signal after the settle bound', async () => {
    const clock = createManualClock();
    let cleaned = false;
    const adapter = createAdapter({
      toolProvider: {
        list: () => [{ name: 'hang', title: 'hang', description: 'hang', inputSchema: { type: 'object' }, annotations: {}, _meta: {} }],
        call: () => new Promise(() => {}),
      },
      resourceProvider: createFakeResourceProvider(),
      clock,
      closeSettleMs: 500,
      onClose: async () => {
        cleaned = true;
      },
    });
    await adapter.handle({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25' } });
    void adapter.handle({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'hang' } });
    const closing = adapter.close();
    await new Promise((resolve) => setImmediate(resolve));
    clock.advance(499);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(cleaned, false);
    clock.advance(1);
    await closing;
    assert.equal(cleaned, true);
  });

  it('a failing onClose is logged, not thrown', async () => {
    const h = await initializedHarness('2025-11-25', { onClose: () => Promise.reject(new Error('boom')) });
    await h.adapter.close();
    assert.ok(h.logs.some((line) => line.includes('boom')));
  });
});

describe('the option names of 0.1.0', () => {
  it('toolHost and resourceHost still serve: tools/list answers from the provider given under the old name', async () => {
    const adapter = createAdapter({
      toolHost: {
        list: () => [
          { name: 'legacy', title: 'legacy', description: 'legacy', inputSchema: { type: 'object' }, annotations: {}, _meta: {} },
        ],
        call: async () => ({ ok: true as const, summary: 'ok', result: {} }),
      },
      resourceHost: createFakeResourceProvider(),
    });
    await adapter.handle({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25' } });
    const listed = await adapter.handle({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.deepEqual(
      (at(listed, 'result', 'tools') as Array<{ name: string }>).map((t) => t.name),
      ['legacy'],
    );
    await adapter.close();
  });
});
