import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FAKE, MAIN, startServer, type ServerProcess } from './server-process.ts';
import { isJsonObject, jsonLines, rpcError, rpcResult } from '../helpers/typed-results.ts';
import type { JsonValue } from '../../lib/util/json.ts';

const errorCode = (m: unknown): number => rpcError(m).code;
/** `error.data.code` of an error response; undefined when its data carries none. */
const dataCode = (m: unknown): JsonValue | undefined => {
  const data = rpcError(m).data;
  return isJsonObject(data) ? data['code'] : undefined;
};

describe('raw wire: the real server', () => {
  let server: ServerProcess;
  before(async () => {
    server = startServer(MAIN, ['--max-frame-bytes', '1024']);
    await server.ready();
  });
  after(async () => {
    server.child.stdin.end();
    assert.equal((await server.exited()).code, 0);
  });

  it('answers every protocol error code', async () => {
    server.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.deepEqual(await server.response(1), { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'Server not initialized' } });
    server.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    });
    assert.equal(rpcResult(await server.response(2))['protocolVersion'], '2025-11-25');
    server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });

    server.sendRaw('{"jsonrpc": "2.0", "id": \n');
    assert.equal(errorCode(await server.waitForMessage((m) => m['id'] === null && errorCode(m) === -32700)), -32700);
    server.sendRaw(Buffer.from([0x22, 0xc3, 0x28, 0x22, 0x0a]));
    await server.waitForMessage((m) => m['id'] === null && rpcError(m).message.includes('UTF-8'));
    server.send({ jsonrpc: '2.0', id: 3 });
    assert.equal(errorCode(await server.response(3)), -32600);
    server.send([{ jsonrpc: '2.0', id: 4, method: 'ping' }]);
    await server.waitForMessage((m) => m['id'] === null && rpcError(m).message.includes('batches'));
    server.sendRaw(`${JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping', params: { pad: 'x'.repeat(2000) } })}\n`);
    await server.waitForMessage((m) => m['id'] === null && dataCode(m) === 'frame_too_large');
    server.send({ jsonrpc: '2.0', id: 6, method: 'server/discover' });
    assert.equal(errorCode(await server.response(6)), -32601);
    server.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'claude.nope', arguments: {} } });
    assert.deepEqual(await server.response(7), { jsonrpc: '2.0', id: 7, error: { code: -32602, message: 'Unknown tool' } });
    server.send({ jsonrpc: '2.0', id: 8, method: 'resources/read', params: { uri: 'computer-mcp://nope' } });
    assert.equal(errorCode(await server.response(8)), -32002);
    server.send({ jsonrpc: '2.0', id: 9, method: 'ping' });
    assert.deepEqual(await server.response(9), { jsonrpc: '2.0', id: 9, result: {} });
    assert.equal(
      server.lines.some((line) => line.includes('"id":5')),
      false,
      'the oversize request never ran',
    );
    // Past 2^53-1 the id was rounded by the parser: answered as id null with a stable code, never as another id.
    server.sendRaw('{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}\n');
    const refused = await server.waitForMessage((m) => m['id'] === null && dataCode(m) === 'request_id_out_of_range');
    assert.equal(errorCode(refused), -32600);
    assert.equal(
      server.lines.some((line) => line.includes('9007199254740992')),
      false,
      'never answered under a rounded id',
    );
    server.sendRaw('{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}\n');
    assert.deepEqual(await server.response(9007199254740991), { jsonrpc: '2.0', id: 9007199254740991, result: {} });
  });

  it('never answers a notification-shaped message, however invalid', async () => {
    const before = server.lines.length;
    for (const line of ['{"jsonrpc":"2.0","method":"x","params":5}', '{"jsonrpc":"1.0","method":"x"}', '{"method":null}'])
      server.sendRaw(`${line}\n`);
    server.send({ jsonrpc: '2.0', id: 'n1', method: 'ping' });
    await server.response('n1');
    assert.deepEqual(server.lines.slice(before), ['{"jsonrpc":"2.0","id":"n1","result":{}}']);
    // stderr is a separate pipe: its line may come after the response.
    await server.waitUntil('the log line of the ignored notification', () =>
      server.stderr().includes('ignored an invalid notification "x"') ? true : undefined,
    );
  });
});

describe('raw wire: serve composed with fake providers', () => {
  let server: ServerProcess;
  before(async () => {
    server = startServer(FAKE);
    await server.ready();
    server.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26' } });
    await server.response(0);
  });
  after(async () => {
    server.child.stdin.end();
    assert.equal((await server.exited()).code, 0);
  });

  it('a handler bug is -32603 with nothing internal on the wire, the detail on stderr', async () => {
    server.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'throws', arguments: {} } });
    assert.deepEqual(await server.response(1), { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Internal error' } });
    // stderr is a separate pipe: its line may come after the response.
    await server.waitUntil("the handler bug's detail on stderr", () =>
      server.stderr().includes('secret internal detail') ? true : undefined,
    );
    assert.ok(!server.lines.join('\n').includes('secret'));
  });

  it('2025-03-26 batches: array in, array out, notifications without entries; empty array -32600', async () => {
    server.send([
      { jsonrpc: '2.0', id: 'b1', method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 'b2', method: 'nope' },
    ]);
    const line = await server.waitUntil('the batch response', () => server.lines.find((l) => l.startsWith('[') && l.includes('"b1"')));
    assert.deepEqual(JSON.parse(line), [
      { jsonrpc: '2.0', id: 'b1', result: {} },
      { jsonrpc: '2.0', id: 'b2', error: { code: -32601, message: 'Method not found' } },
    ]);
    server.sendRaw('[]\n');
    await server.waitForMessage((m) => m['id'] === null && 'error' in m && rpcError(m).message === 'Invalid Request: empty batch');
  });

  it('progress arrives before the response, and a cancelled call gets no response', async () => {
    server.send({
      jsonrpc: '2.0',
      id: 'slow',
      method: 'tools/call',
      params: { name: 'slow', arguments: {}, _meta: { progressToken: 42 } },
    });
    await server.waitForMessage((m) => m['method'] === 'notifications/progress');
    server.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow' } });
    server.send({ jsonrpc: '2.0', id: 'after', method: 'ping' });
    await server.response('after');
    server.send({ jsonrpc: '2.0', id: 'after2', method: 'ping' });
    await server.response('after2');
    assert.equal(
      server.lines.some((l) => l.includes('"id":"slow"')),
      false,
    );
    const progress = jsonLines(server.lines.filter((l) => !l.startsWith('[')).join('\n'), 'stdout line').filter(
      (m) => m['method'] === 'notifications/progress',
    );
    assert.deepEqual(progress, [
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 42, progress: 1, message: 'started' } },
    ]);
  });
});
