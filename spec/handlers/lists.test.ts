import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../lib/rpc/negotiate.ts';
import { errorOf, initializedHarness, resultOf } from '../rpc/harness.ts';
import { WORK_URI } from '../../fixtures/providers/fake-providers.ts';
import { objs } from '../helpers/typed-results.ts';

describe('tools/list by date', () => {
  for (const date of SUPPORTED_PROTOCOL_VERSIONS) {
    it(date, async () => {
      const h = await initializedHarness(date);
      const first = resultOf(await h.request(1, 'tools/list'));
      assert.deepEqual(resultOf(await h.request(2, 'tools/list')), first, 'deterministic');
      const tools = objs(first['tools'], 'tools');
      assert.deepEqual(
        tools.map((t) => t['name']),
        ['echo', 'fail', 'fail-partial', 'slow', 'throws', 'throws-tool-error', 'progress-after'],
      );
      const echo = tools[0] ?? {};
      const keys = ['name', 'description', 'inputSchema', '_meta'];
      if (date >= '2025-03-26') keys.push('annotations');
      if (date >= '2025-06-18') keys.push('title', 'outputSchema');
      assert.deepEqual(Object.keys(echo).sort(), keys.sort());
      assert.deepEqual(echo['_meta'], { 'io.github.computer-mcp/risk': 'read-only' });
      assert.deepEqual(first['nextCursor'], undefined);
      const noOutput = tools.find((t) => t['name'] === 'throws-tool-error') ?? {};
      assert.equal('outputSchema' in noOutput, false, 'a tool without outputSchema never gets one');
    });
  }
});

describe('resources', () => {
  for (const date of SUPPORTED_PROTOCOL_VERSIONS) {
    it(`${date}: resources/list`, async () => {
      const h = await initializedHarness(date);
      const resources = objs(resultOf(await h.request(1, 'resources/list'))['resources'], 'resources');
      const work = { uri: WORK_URI, name: 'work', description: 'The work snapshot', mimeType: 'application/json' };
      assert.deepEqual(resources[0], date >= '2025-06-18' ? { ...work, title: 'Work snapshot' } : work);
      assert.equal(resources.length, 3);
    });
  }

  it('resources/read returns the text body', async () => {
    const h = await initializedHarness('2025-11-25');
    assert.deepEqual(resultOf(await h.request(1, 'resources/read', { uri: WORK_URI })), {
      contents: [{ uri: WORK_URI, mimeType: 'application/json', text: '{"revision":1}' }],
    });
  });

  it('unknown resource is -32002 and discloses nothing', async () => {
    const h = await initializedHarness('2025-11-25');
    assert.deepEqual(errorOf(await h.request(1, 'resources/read', { uri: 'file:///etc/SECRET' })), {
      code: -32002,
      message: 'Resource not found',
    });
  });

  it('a ResourceError is -32003 with data.code', async () => {
    const h = await initializedHarness('2025-11-25');
    assert.deepEqual(errorOf(await h.request(1, 'resources/read', { uri: 'fake://busy' })), {
      code: -32003,
      message: 'The work snapshot is incomplete.',
      data: { code: 'snapshot_incomplete' },
    });
  });

  it('any other read failure is -32603 without internals', async () => {
    const h = await initializedHarness('2025-11-25');
    assert.deepEqual(errorOf(await h.request(1, 'resources/read', { uri: 'fake://broken' })), { code: -32603, message: 'Internal error' });
  });

  it('a missing uri is -32602', async () => {
    const h = await initializedHarness('2025-11-25');
    assert.equal(errorOf(await h.request(1, 'resources/read', {})).code, -32602);
  });
});
