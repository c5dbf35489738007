// The 2026-07-28 era beside the legacy dates on one process (protocol core over the fake providers):
// server/discover without pinning, per-request _meta validation, modern result fields, removed methods.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ALL_PROTOCOL_VERSIONS } from '../../lib/rpc/negotiate.ts';
import { createHarness, errorOf, resultOf } from './harness.ts';
import { arr, at, firstText, objAt, parseObj, str } from '../helpers/typed-results.ts';

const CLIENT_INFO = { name: 'claude-code', title: 'Claude Code', version: '2.1.332' };
/** The _meta Claude Code 2.1.332 sends on every modern request (print mode: no tasks extension). */
const meta = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
  'io.modelcontextprotocol/clientCapabilities': { roots: { listChanged: true }, elicitation: { form: {}, url: {} } },
  ...overrides,
});
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';

describe('server/discover', () => {
  it('is answered at once with a DiscoverResult, before any initialize', async () => {
    const h = createHarness();
    const response = await h.request('server-discover-probe-1', 'server/discover', { _meta: meta() });
    const result = resultOf(response);
    assert.equal(result['resultType'], 'complete');
    assert.deepEqual(result['supportedVersions'], [...ALL_PROTOCOL_VERSIONS]);
    assert.ok(arr(result['supportedVersions']).includes('2026-07-28'));
    assert.ok(arr(result['supportedVersions']).includes('2025-11-25'), 'a legacy fallback is always named');
    assert.deepEqual(
      result['capabilities'],
      { tools: { listChanged: false }, resources: { subscribe: false, listChanged: false } },
      'the fake provider has no tasks: no extension advertised',
    );
    assert.equal(result['ttlMs'], 0);
    assert.equal(result['cacheScope'], 'private');
    assert.equal(typeof result['instructions'], 'string');
    assert.deepEqual(at(result, '_meta', SERVER_INFO_KEY), {
      name: 'claude-run-mcp',
      version: str(at(result, '_meta', SERVER_INFO_KEY, 'version')),
    });
    assert.equal(h.adapter.state().protocolVersion, null, 'discover negotiates nothing');
  });

  it('does not pin the process: initialize afterwards is the legacy handshake, and never agrees to 2026-07-28', async () => {
    const h = createHarness();
    await h.request(1, 'server/discover', { _meta: meta() });
    const init = resultOf(await h.request(2, 'initialize', { protocolVersion: '2026-07-28', capabilities: {}, clientInfo: CLIENT_INFO }));
    assert.equal(init['protocolVersion'], '2025-11-25');
    assert.equal(init['resultType'], undefined, 'legacy results stay as they were');
    assert.deepEqual(await h.request(3, 'ping'), { jsonrpc: '2.0', id: 3, result: {} });
    // Modern requests are still served after a legacy handshake on the same process.
    assert.equal(resultOf(await h.request(4, 'server/discover', { _meta: meta() }))['resultType'], 'complete');
  });

  it('a bare server/discover (no protocol version in _meta) is a legacy request: -32601 as before', async () => {
    const h = createHarness();
    assert.equal(errorOf(await h.request(1, 'server/discover')).code, -32601);
    assert.equal(errorOf(await h.request(2, 'server/discover', { _meta: {} })).code, -32601);
  });
});

describe('modern requests without initialize', () => {
  it('tools/list carries resultType, ttlMs, cacheScope, serverInfo and the legacy order of tools', async () => {
    const h = createHarness();
    const modern = resultOf(await h.request(0, 'tools/list', { _meta: meta() }));
    assert.equal(modern['resultType'], 'complete');
    assert.equal(modern['ttlMs'], 0);
    assert.equal(modern['cacheScope'], 'private');
    assert.ok(SERVER_INFO_KEY in objAt(modern, '_meta'));
    await h.request('i', 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: CLIENT_INFO });
    const legacy = resultOf(await h.request(1, 'tools/list'));
    assert.deepEqual(Object.keys(legacy), ['tools'], 'the legacy answer is unchanged');
    assert.deepEqual(modern['tools'], legacy['tools'], 'same tools, same order, same fields as 2025-11-25');
    assert.deepEqual(resultOf(await h.request(2, 'tools/list', { _meta: meta() }))['tools'], modern['tools'], 'stable order');
  });

  it('tools/call is answered synchronously when the extension is not declared', async () => {
    const h = createHarness();
    const result = resultOf(
      await h.request(1, 'tools/call', {
        name: 'echo',
        arguments: { text: 'hi' },
        _meta: { ...meta(), 'progressToken': 1, 'claudecode/toolUseId': 'toolu_1' },
      }),
    );
    assert.equal(result['resultType'], 'complete');
    assert.equal(result['isError'], false);
    assert.deepEqual(result['structuredContent'], { result: { text: 'hi' } });
    assert.ok(SERVER_INFO_KEY in objAt(result, '_meta'));
    assert.equal(h.tools.contexts[0]?.protocolVersion, '2026-07-28');
    // Argument validation follows 2025-11-25 and later: a tool error, not -32602.
    const invalid = resultOf(await h.request(2, 'tools/call', { name: 'echo', arguments: { text: 1 }, _meta: meta() }));
    assert.equal(invalid['isError'], true);
    assert.match(firstText(invalid), /"code":"invalid_arguments"/);
  });

  it('resources: list and read are cacheable; an unknown URI is -32602 (it stays -32002 in the legacy era)', async () => {
    const h = createHarness();
    const list = resultOf(await h.request(1, 'resources/list', { _meta: meta() }));
    assert.equal(list['ttlMs'], 0);
    assert.equal(list['cacheScope'], 'private');
    const uri = str(at(list, 'resources', 0, 'uri'));
    const read = resultOf(await h.request(2, 'resources/read', { uri, _meta: meta() }));
    assert.equal(read['resultType'], 'complete');
    assert.equal(read['ttlMs'], 0);
    assert.equal(read['cacheScope'], 'private');
    const missing = errorOf(await h.request(3, 'resources/read', { uri: 'nope://x', _meta: meta() }));
    assert.equal(missing.code, -32602);
    await h.request('i', 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: CLIENT_INFO });
    assert.equal(errorOf(await h.request(4, 'resources/read', { uri: 'nope://x' })).code, -32002);
  });

  it('progress and notifications/cancelled work for a modern request as for a legacy one', async () => {
    const h = createHarness();
    const pending = h.request(11, 'tools/call', { name: 'slow', arguments: {}, _meta: { ...meta(), progressToken: 11 } });
    await h.tools.started();
    assert.deepEqual(h.notifications[0], {
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: 11, progress: 1, message: 'started' },
    });
    assert.equal(await h.adapter.handle({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 11 } }), undefined);
    assert.equal(await pending, undefined, 'no response for a cancelled request');
    assert.equal(h.tools.contexts[0]?.signal.reason, 'cancelled');
    // A duplicate in-flight id is refused across eras too.
    const again = h.request(12, 'tools/call', { name: 'slow', arguments: {}, _meta: meta() });
    await h.tools.started();
    assert.equal(errorOf(await h.request(12, 'tools/list', { _meta: meta() })).code, -32600);
    h.tools.release();
    assert.equal(resultOf(await again)['resultType'], 'complete');
  });

  it('ping is gone in the modern era and unchanged in the legacy one', async () => {
    const h = createHarness();
    assert.equal(errorOf(await h.request(1, 'ping', { _meta: meta() })).code, -32601);
    assert.deepEqual(await h.request(2, 'ping'), { jsonrpc: '2.0', id: 2, result: {} });
  });

  it('a legacy request before initialize is still -32000 after modern traffic', async () => {
    const h = createHarness();
    await h.request(1, 'server/discover', { _meta: meta() });
    await h.request(2, 'tools/list', { _meta: meta() });
    assert.equal(errorOf(await h.request(3, 'tools/list')).code, -32000);
  });
});

describe('per-request _meta validation', () => {
  const cases: Array<{ name: string; meta: Record<string, unknown>; code: number; path?: string }> = [
    {
      name: 'clientCapabilities missing',
      meta: meta({ 'io.modelcontextprotocol/clientCapabilities': undefined }),
      code: -32602,
      path: '/_meta/io.modelcontextprotocol~1clientCapabilities',
    },
    {
      name: 'clientCapabilities not an object',
      meta: meta({ 'io.modelcontextprotocol/clientCapabilities': 'all' }),
      code: -32602,
      path: '/_meta/io.modelcontextprotocol~1clientCapabilities',
    },
    {
      name: 'protocolVersion not a string',
      meta: meta({ 'io.modelcontextprotocol/protocolVersion': 20260728 }),
      code: -32602,
      path: '/_meta/io.modelcontextprotocol~1protocolVersion',
    },
    {
      name: 'protocolVersion not a date',
      meta: meta({ 'io.modelcontextprotocol/protocolVersion': 'SECRET-latest' }),
      code: -32602,
      path: '/_meta/io.modelcontextprotocol~1protocolVersion',
    },
    {
      name: 'clientInfo malformed',
      meta: meta({ 'io.modelcontextprotocol/clientInfo': { name: 'SECRET' } }),
      code: -32602,
      path: '/_meta/io.modelcontextprotocol~1clientInfo',
    },
    {
      name: 'extensions not an object',
      meta: meta({ 'io.modelcontextprotocol/clientCapabilities': { extensions: ['SECRET'] } }),
      code: -32602,
      path: '/_meta/io.modelcontextprotocol~1clientCapabilities/extensions',
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.code}, path named, value not echoed, nothing run`, async () => {
      const h = createHarness();
      const clean = parseObj(JSON.stringify(c.meta));
      for (const method of ['server/discover', 'tools/list', 'tools/call']) {
        const error = errorOf(await h.request(1, method, { name: 'echo', arguments: { text: 'x' }, _meta: clean }));
        assert.equal(error.code, c.code, method);
        assert.deepEqual(error.data, { path: c.path });
        assert.doesNotMatch(JSON.stringify(error), /SECRET|20260728/);
      }
      assert.equal(h.tools.contexts.length, 0, 'no tool ran');
    });
  }

  it('clientInfo may be omitted (the spec makes it optional)', async () => {
    const h = createHarness();
    const result = resultOf(await h.request(1, 'tools/list', { _meta: meta({ 'io.modelcontextprotocol/clientInfo': undefined }) }));
    assert.equal(result['resultType'], 'complete');
  });

  for (const requested of ['2099-01-01', '2025-11-25', '1900-01-01']) {
    it(`an unsupported date ${requested} is -32022 naming every supported date, legacy ones included`, async () => {
      const h = createHarness();
      const error = errorOf(
        await h.request(1, 'server/discover', { _meta: meta({ 'io.modelcontextprotocol/protocolVersion': requested }) }),
      );
      assert.equal(error.code, -32022);
      assert.equal(error.message, 'Unsupported protocol version');
      assert.deepEqual(error.data, { supported: [...ALL_PROTOCOL_VERSIONS], requested });
      assert.ok(arr(at(error.data, 'supported')).includes('2025-11-25'), 'a client always has a fallback');
      // The process is still usable both ways afterwards.
      assert.equal(resultOf(await h.request(2, 'server/discover', { _meta: meta() }))['resultType'], 'complete');
      assert.equal(
        resultOf(await h.request(3, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: CLIENT_INFO }))[
          'protocolVersion'
        ],
        '2025-11-25',
      );
    });
  }

  it('capabilities are read per request: nothing is inferred from an earlier one', async () => {
    const h = createHarness();
    const tasks = meta({ 'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } } });
    // The fake provider has no tasks, so an unknown task either way; the capability check comes first.
    assert.equal(errorOf(await h.request(1, 'tasks/get', { taskId: 'run_x', _meta: tasks })).code, -32602);
    const error = errorOf(await h.request(2, 'tasks/get', { taskId: 'run_x', _meta: meta() }));
    assert.equal(error.code, -32021);
    assert.deepEqual(error.data, { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } });
    for (const method of ['tasks/cancel', 'tasks/update']) {
      assert.equal(errorOf(await h.request(3, method, { taskId: 'run_x', inputResponses: {}, _meta: meta() })).code, -32021, method);
    }
  });

  it('tasks methods do not exist in the legacy era', async () => {
    const h = createHarness();
    await h.request('i', 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: CLIENT_INFO });
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update', 'server/discover']) {
      assert.equal(errorOf(await h.request(1, method, { taskId: 'run_x' })).code, -32601, method);
    }
  });
});
