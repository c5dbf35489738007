import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAIN, startServer } from './server-process.ts';
import { parseObj } from '../helpers/typed-results.ts';

/** Stdin EOF with nothing running must end the process within this bound. */
const EOF_EXIT_MS = 2000;

describe('server process lifecycle', () => {
  it('exits 0 promptly on stdin EOF', async () => {
    const server = startServer();
    try {
      await server.ready();
      server.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18' } });
      await server.response(1);
      const started = performance.now();
      server.child.stdin.end();
      const exit = await server.exited();
      const elapsedMs = performance.now() - started;
      assert.deepEqual(exit, { code: 0, signal: null });
      assert.ok(elapsedMs < EOF_EXIT_MS, `took ${Math.round(elapsedMs)} ms`);
    } finally {
      server.kill();
    }
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} closes cleanly with exit 0`, async () => {
      const server = startServer();
      try {
        await server.ready();
        server.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
        await server.response(1);
        server.child.kill(signal);
        assert.deepEqual(await server.exited(), { code: 0, signal: null });
        assert.ok(server.stderr().includes(`${signal}: closing`));
      } finally {
        server.kill();
      }
    });
  }

  it('nothing but JSON-RPC ever reaches stdout', async () => {
    const server = startServer(MAIN, ['--max-frame-bytes', '1024']);
    try {
      await server.ready();
      const junk = [
        'not json',
        '{"jsonrpc":"2.0"}',
        '[]',
        '[1,2]',
        'null',
        `"${'x'.repeat(3000)}"`,
        '{"jsonrpc":"2.0","id":[],"method":"x"}',
      ];
      for (const line of junk) server.sendRaw(`${line}\n`);
      server.sendRaw(Buffer.from([0xff, 0x0a]));
      server.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 'bogus' } });
      server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      for (const method of ['tools/list', 'resources/list', 'resources/read', 'tools/call', 'ping', 'prompts/list', 'logging/setLevel']) {
        server.send({ jsonrpc: '2.0', id: method, method, params: {} });
      }
      server.send({ jsonrpc: '2.0', id: 'last', method: 'ping' });
      await server.response('last');
      server.child.stdin.end();
      assert.equal((await server.exited()).code, 0);
      assert.ok(server.lines.length >= junk.length + 10);
      for (const line of server.lines) {
        const message = parseObj(line, 'a stdout line');
        assert.equal(message['jsonrpc'], '2.0', line);
        assert.ok('id' in message && ('result' in message || 'error' in message), line);
      }
      assert.ok(server.stderr().length > 0, 'diagnostics go to stderr');
    } finally {
      server.kill();
    }
  });

  it('an unknown option exits 2 with a clear stderr message and silent stdout', async () => {
    const server = startServer(MAIN, ['--frobnicate']);
    try {
      assert.deepEqual(await server.exited(), { code: 2, signal: null });
      assert.match(server.stderr(), /unknown option: --frobnicate/);
      assert.deepEqual(server.lines, []);
    } finally {
      server.kill();
    }
  });

  it('an unknown command exits 2', async () => {
    const server = startServer(MAIN, ['frobnicate']);
    try {
      assert.deepEqual(await server.exited(), { code: 2, signal: null });
      assert.match(server.stderr(), /unknown command: frobnicate/);
    } finally {
      server.kill();
    }
  });

  it('`serve` is accepted explicitly', async () => {
    const server = startServer(MAIN, ['serve', '--underscore-names']);
    try {
      await server.ready();
      server.child.stdin.end();
      assert.deepEqual(await server.exited(), { code: 0, signal: null });
    } finally {
      server.kill();
    }
  });
});
