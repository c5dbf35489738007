/**
 * The real stdio server answers the handshake before its tool providers are loaded (lib/cli/deferred-providers.ts),
 * and a client that pipelines everything in one write still gets each answer, in the order it asked.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FAKE, MAIN, startServer } from './server-process.ts';

test('initialize, tools/list, ping and resources/list in one write: answered in order, the tools listed', async () => {
  const server = startServer(MAIN);
  try {
    const messages = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'spec', version: '0' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', id: 3, method: 'ping' },
      { jsonrpc: '2.0', id: 4, method: 'resources/list' },
    ];
    // One write, sent before the server is even ready: nothing may wait on the client's pace.
    server.sendRaw(messages.map((m) => `${JSON.stringify(m)}\n`).join(''));
    const last = await server.response(4);
    const ids = server.lines.map((line) => (JSON.parse(line) as { id?: unknown }).id);
    assert.deepEqual(ids, [1, 2, 3, 4], 'one response each, in the order asked');
    const tools = ((await server.response(2))['result'] as { tools: Array<{ name: string }> }).tools;
    assert.equal(tools.length, 11);
    assert.equal(tools[0]?.name, 'claude.run');
    assert.deepEqual((await server.response(3))['result'], {});
    assert.ok(Array.isArray((last['result'] as { resources?: unknown }).resources));
    assert.doesNotMatch(server.stderr(), /failed to load/);
  } finally {
    server.child.stdin.end();
    await server.exited();
  }
});

test('providers that fail to load: the handshake is answered, each waiting request fails, the server exits 1', async () => {
  const server = startServer(FAKE, [], { env: { ...process.env, SERVE_FAKE_LOAD_FAILS: '1' } });
  try {
    server.sendRaw(
      [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'spec', version: '0' } },
        },
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { jsonrpc: '2.0', id: 3, method: 'ping' },
      ]
        .map((m) => `${JSON.stringify(m)}\n`)
        .join(''),
    );
    assert.equal(((await server.response(1))['result'] as { protocolVersion?: unknown }).protocolVersion, '2025-06-18');
    const list = await server.response(2);
    assert.equal((list['error'] as { code?: unknown } | undefined)?.code, -32603, 'an internal error, not a silent drop');
    assert.deepEqual((await server.response(3))['result'], {}, 'the ping queued behind it is answered too');
    const exit = await server.exited();
    assert.equal(exit.code, 1);
    assert.match(server.stderr(), /the tool providers failed to load: invalid cli-tree\.json: \(simulated\)/);
  } finally {
    server.kill();
  }
});
